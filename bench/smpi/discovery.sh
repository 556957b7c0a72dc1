#!/usr/bin/env bash
# Finding owners from global ids under SMPI (docs/PERFORMANCE.md "Finding owners from global ids"):
# a gmsh mesh of examples/extract partitioned by METIS as `commfit extract` partitions it (each
# rank owns its part's vertices and needs its halo; the global ids as --ids says), on the
# bench's fat trees (platforms.py fattree-P, one rank per host), flow model with run.py's SMPI_CFG
# plus the polling and collective options below.
# For each rank count smpi_discovery times owner discovery with every lookup and reverse method,
# the rings' reverse step (and MPI Advance's MPIL_Alltoallv_crs when the program was built with
# it), then one gather per call: the pattern's (planned in the job: strategy auto on the
# platform's topology with run.py's tau and bandwidth), its plan without the per-call count check,
# and a hand-written AC loop.
# Prints smpi_discovery's CSV lines (label,p,step,method,reverse,sim_s,check), its comment lines
# (what lookup=auto ran, the gather's plan) and one line per rank count with its wall time; exit status 1 when a run fails, times out or a check is WRONG.
#
#   bench/smpi/discovery.sh [--ids native|by-part] [--compute] BUILD SMPI_DISCOVERY OUT [MESH [RANKS...]] [-- PROGRAM_OPTIONS...]
#
# --ids (bench_smpi_mesh_ids's): native, the default, takes gmsh's vertex numbers as the global ids
# (numbered by mesh entity, so a part's ids spread over the whole range); by-part renumbers the
# vertices part by part (part 0's first, gmsh's order within a part), as codes number them once a
# partition is applied. By-part runs are labelled MESH/by-part (CSV lines, OUT/MESH.by-part.P.*).
# --compute charges the ranks' own work as measured on this machine (below); its runs are labelled
# .../compute (logs OUT/MESH[.by-part].compute.P.log). --network ib: SimGrid's InfiniBand model with
# run.py's factors (run.NETWORK_CFG) instead of the flow model; labelled .../ib (logs ...P.ib.log).
# MESH: plate (2D, 54,444 vertices; the default), bore_block (3D, 205,595 vertices) or tiny (plate
# meshed 10x coarser: the smoke test's). RANKS: default 4 16 64 256 (each must be a fattree-P of
# platforms.py: 4, 16, 64, 256, 1024, 4096). BUILD holds commfit's build (bench_smpi_mesh_ids).
# PROGRAM_OPTIONS go to smpi_discovery, e.g. `-- --lookups directory,ring4d --mpia none` to time
# fewer methods (its header lists them).
set -euo pipefail
usage="usage: discovery.sh [--ids native|by-part] [--compute] [--network flow|ib] BUILD SMPI_DISCOVERY OUT [MESH [RANKS...]] [-- PROGRAM_OPTIONS...]"
numbering=native
compute=0
network=flow
while [[ ${1:-} == --ids || ${1:-} == --compute || ${1:-} == --network ]]; do
  case $1 in
    --compute) compute=1; shift ;;
    --ids) numbering=${2:?$usage}; shift 2 ;;
    --network) network=${2:?$usage}; shift 2 ;;
  esac
done
case $network in
  flow | ib) ;;
  *) echo "discovery.sh: --network $network: expected flow or ib" >&2; exit 2 ;;
esac
case $numbering in
  native | by-part) ;;
  *) echo "discovery.sh: --ids $numbering: expected native or by-part" >&2; exit 2 ;;
esac
build=${1:?$usage}
program=${2:?$usage}
out=${3:?$usage}
mesh=${4:-plate}
shift $(($# < 4 ? $# : 4))
ranks=()
while [[ $# -gt 0 && $1 != -- ]]; do ranks+=("$1"); shift; done
[[ $# -gt 0 ]] && shift   # the --
extra=("$@")
[[ ${#ranks[@]} -gt 0 ]] || ranks=(4 16 64 256)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
read -r -a cfg <<< "$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.SMPI_CFG + run.NETWORK_CFG['$network']))")"
# Polling: SimGrid 3.32 charges every MPI_Iprobe and MPI_Test 100 us of simulated time by default,
# growing with each consecutive call (smpi/iprobe, smpi/test, smpi/grow-injected-times), which NBX's
# probe loop and MPI_Probe pay in full. Here a poll costs 0.5 us, as run.py's per-message CPU costs.
# Collectives: Open MPI's algorithm choices (smpi/coll-selector:ompi), as a real MPI would make
# them; SMPI's default selector is linear for most of them (an MPI_Allreduce costs O(p) there).
poll=(--cfg=smpi/iprobe:5e-7 --cfg=smpi/test:5e-7 --cfg=smpi/grow-injected-times:no --cfg=smpi/coll-selector:ompi)
# --compute: the ranks' own work between MPI calls (hashing, sorting, looking ids up) is charged
# as SMPI measures it on this machine (smpi/simulate-computation:yes; the platform's hosts and
# smpi/host-speed are both 100 Gflop/s, so a measured second is a simulated second). Without it
# (run.py's SMPI_CFG) only communication takes simulated time.
[[ $compute -eq 1 ]] && poll+=(--cfg=smpi/simulate-computation:yes)
tau_bw=(--pattern-option tau=2e-6 --pattern-option bandwidth=1.25e10)   # run.py's PLAN_COST (--tau, --bandwidth)

case $mesh in
  plate) geo=plate dim=2 scale=1 ;;
  bore_block) geo=bore_block dim=3 scale=1 ;;
  tiny) geo=plate dim=2 scale=10 ;;
  *) echo "discovery.sh: unknown mesh $mesh (plate, bore_block, tiny)" >&2; exit 2 ;;
esac
[[ -s "$out/$mesh.msh" ]] || gmsh "-$dim" -clscale "$scale" "$root/examples/extract/$geo.geo" -o "$out/$mesh.msh" > "$out/$mesh.gmsh.log"

# Runs "$@" in its own process group and kills the group after $1 seconds (smpirun starts smpimain
# as a child, as run.py's run() says); exit status 124 then.
with_timeout() {
  python3 -c '
import os, signal, subprocess, sys
p = subprocess.Popen(sys.argv[2:], start_new_session=True)
try:
    sys.exit(p.wait(timeout=float(sys.argv[1])))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    print("timeout after %s s" % sys.argv[1])
    sys.exit(124)
' "$@"
}

label=$mesh stem=$mesh
[[ $numbering == native ]] || label=$mesh/$numbering stem=$mesh.$numbering
[[ $compute -eq 0 ]] || label=$label/compute   # the ids file stays $stem's; the log is $stem.compute's
[[ $network == flow ]] || label=$label/$network
failed=0
for p in "${ranks[@]}"; do
  platform=fattree-$p
  topo=$(python3 "$here/platforms.py" "$out" "$platform" | cut -d' ' -f2)
  ids="$out/$stem.$p.ids"
  [[ -s $ids ]] || "$build/bench/smpi/bench_smpi_mesh_ids" "$out/$mesh.msh" "$p" "$ids" --ids "$numbering" | sed 's/^/# /'
  # Timeouts as run.py's (240 s of wall time, 1800 s at 1024 ranks and more), 900 s at 256 ranks,
  # where the 1-D ring's 255 steps of 256 ranks take minutes of wall time.
  timeout=240
  [[ $p -ge 256 ]] && timeout=900
  [[ $p -ge 1024 ]] && timeout=1800
  log="$out/$stem.$p.log"
  [[ $compute -eq 0 ]] || log="$out/$stem.compute.$p.log"
  [[ $network == flow ]] || log="${log%.log}.$network.log"
  t0=$(date +%s)
  rc=0
  with_timeout "$timeout" smpirun -np "$p" -platform "$out/$platform.xml" -hostfile "$out/$platform.hosts" "${cfg[@]}" "${poll[@]}" \
    "$program" --ids "$ids" --label "$label" --pattern-option strategy=auto --pattern-option "topology=$topo" "${tau_bw[@]}" ${extra[@]+"${extra[@]}"} > "$log" 2>&1 || rc=$?
  grep "^# $label p=" "$log" || true   # what lookup=auto ran, the gather's plan
  if ! grep "^$label," "$log" && [[ $rc -eq 0 ]]; then rc=1; fi   # no line: it stopped early
  grep -q ",WRONG$" "$log" && rc=1
  echo "# $label p=$p: $(( $(date +%s) - t0 )) s of wall time, exit status $rc"
  [[ $rc -eq 0 ]] || { failed=1; tail -5 "$log" | sed 's/^/# /'; }
done
exit $failed
