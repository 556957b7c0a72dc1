#!/usr/bin/env bash
# Placements +nodeN cannot describe (docs/PERFORMANCE.md "Placements +nodeN cannot describe"):
# the same SimGrid platforms as run.py --set nodes, but the hostfile places the ranks round robin
# (rank r on host r mod H, as mpirun --map-by node) or on hosts of uneven sizes. For each row it
# plans auto three ways and runs them beside AC under SMPI (flow model, run.py's SMPI_CFG):
#   map    the machine with the placement's node map (--node-map, the hostfile itself),
#   block  the machine as if the ranks sat in blocks (+nodeN: the wrong placement),
#   flat   the crossbar, no nodes (what a planner that knows nothing of nodes does).
# Prints one CSV line per run: row,method,seconds,check.
#   bench/smpi/placements.sh BUILD SMPI_DRIVER OUT
set -euo pipefail
build=${1:?usage: placements.sh BUILD SMPI_DRIVER OUT}
driver=${2:?usage: placements.sh BUILD SMPI_DRIVER OUT}
out=${3:?usage: placements.sh BUILD SMPI_DRIVER OUT}
here=$(cd "$(dirname "$0")" && pwd)
commfit="$build/commfit"
mkdir -p "$out"
read -r -a cfg <<< "$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.SMPI_CFG))")"
read -r -a cost <<< "$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.PLAN_COST))")"

# row PLATFORM(KIND-HxN) MATRIX HOSTFILE-KIND: robin | uneven:n0,n1,...
row() {
  local platform=$1 matrix=$2 placement=$3
  local topo hosts name p
  topo=$(python3 "$here/platforms.py" "$out" "$platform" | cut -d' ' -f2)
  p=$(python3 -c "import json; print(json.load(open('$matrix'))['ranks'])")
  local h=${platform#*-}; h=${h%x*}
  name="$platform.$(basename "$matrix" .json).${placement%%:*}"
  hosts="$out/$name.hosts"
  if [[ $placement == robin ]]; then
    for ((r = 0; r < p; ++r)); do echo "h$((r % h))"; done > "$hosts"
  else
    local k=0 n
    : > "$hosts"
    for n in ${placement#uneven:}; do for ((r = 0; r < n; ++r)); do echo "h$k"; done >> "$hosts"; k=$((k + 1)); done
  fi
  "$commfit" plan "$matrix" --topology "${topo%+node*}" --node-map "$hosts" "${cost[@]}" --strategy auto -q -o "$out/$name.map.plan"
  "$commfit" plan "$matrix" --topology "$topo" "${cost[@]}" --strategy auto -q -o "$out/$name.block.plan"
  "$commfit" plan "$matrix" --topology full "${cost[@]}" --strategy auto -q -o "$out/$name.flat.plan"
  smpirun -np "$p" -platform "$out/$platform.xml" -hostfile "$hosts" "${cfg[@]}" "$driver" --matrix "$matrix" \
    --plan map="$out/$name.map.plan" --plan block="$out/$name.block.plan" --plan flat="$out/$name.flat.plan" --methods ac,exec 2>&1 |
    sed -n "s/^run,/$name,/p"
}

"$commfit" gen uniform -n 64 -d 63 --bytes 256 -o "$out/dense64.json" > /dev/null
"$commfit" gen uniform -n 128 -d 127 --bytes 256 -o "$out/dense128.json" > /dev/null
"$commfit" gen stencil --grid 8x8x4 --points 27 --cells 16 -o "$out/stencil256.json" > /dev/null
row fattree-4x16 "$out/dense64.json" robin
row fattree-8x16 "$out/dense128.json" robin
row fattree-4x16 "$out/dense64.json" "uneven:20 20 20 4"
row fattree-16x16 "$out/stencil256.json" robin
