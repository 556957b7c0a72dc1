#!/usr/bin/env bash
# Halos of real meshes at several ranks per node (docs/PERFORMANCE.md "Halos of real meshes"): the
# SpMV halo exchange of two gmsh meshes, partitioned by METIS (`commfit extract`, one 8-byte value
# per vertex), on 16 and 32 ranks per host: examples/extract/plate.geo (2D, triangles) and
# examples/extract/bore_block.geo (3D, tetrahedra), each at 256 parts (16 x 16 and 8 x 32) and
# 1024 parts (64 x 16). For each it plans
# auto, node/3, node/2 and direct on the platform's machine (run.py's PLAN_COST) and runs them
# beside AC and SMPI's MPI_Alltoallv (its default algorithm; 256 ranks only) under SMPI (flow
# model, run.py's SMPI_CFG). Prints one CSV line per run: row,method,seconds,check; and each
# auto's choice.
#   bench/smpi/mesh_halos.sh BUILD SMPI_DRIVER OUT
set -euo pipefail
build=${1:?usage: mesh_halos.sh BUILD SMPI_DRIVER OUT}
driver=${2:?usage: mesh_halos.sh BUILD SMPI_DRIVER OUT}
out=${3:?usage: mesh_halos.sh BUILD SMPI_DRIVER OUT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
commfit="$build/commfit"
mkdir -p "$out"
read -r -a cfg <<< "$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.SMPI_CFG))")"
read -r -a cost <<< "$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.PLAN_COST))")"

for geo in plate:2 bore_block:3; do
  name=${geo%:*}
  [[ -s "$out/$name.msh" ]] || gmsh "-${geo#*:}" "$root/examples/extract/$name.geo" -o "$out/$name.msh" > "$out/$name.gmsh.log"
done

# row MESH PARTS PLATFORM
row() {
  local mesh=$1 parts=$2 platform=$3 topo name methods=ac,exec
  topo=$(python3 "$here/platforms.py" "$out" "$platform" | cut -d' ' -f2)
  name="$mesh.$parts.$platform"
  "$commfit" extract "$out/$mesh.msh" --parts "$parts" -q -o "$out/$name.json"
  "$commfit" plan "$out/$name.json" --topology "$topo" "${cost[@]}" --strategy auto -o "$out/$name.auto.plan" | head -1 | sed "s/^/$name: /"
  "$commfit" plan "$out/$name.json" --topology "$topo" "${cost[@]}" --strategy node -q -o "$out/$name.node3.plan"
  "$commfit" plan "$out/$name.json" --topology "$topo" "${cost[@]}" --strategy node --steps 2 -q -o "$out/$name.node2.plan"
  "$commfit" plan "$out/$name.json" --topology "$topo" "${cost[@]}" --strategy direct -q -o "$out/$name.direct.plan"
  [[ $parts -le 256 ]] && methods=ac,alltoallv,exec
  smpirun -np "$parts" -platform "$out/$platform.xml" -hostfile "$out/$platform.hosts" "${cfg[@]}" "$driver" --matrix "$out/$name.json" \
    --plan auto="$out/$name.auto.plan" --plan node3="$out/$name.node3.plan" --plan node2="$out/$name.node2.plan" \
    --plan direct="$out/$name.direct.plan" --methods "$methods" 2>&1 | sed -n "s/^run,/$name,/p"
}

for mesh in plate bore_block; do
  row "$mesh" 256 fattree-16x16
  row "$mesh" 256 fattree-8x32
  row "$mesh" 1024 fattree-64x16
done
