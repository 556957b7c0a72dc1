#!/usr/bin/env bash
# The interposer under SimGrid SMPI (docs/EXECUTOR.md, "The interposer's cost"): the unmodified halo
# program bench/smpi/smpi_halo.c (a 9-point halo of BYTES per message, repeated) on the fat trees of
# bench/smpi/platforms.py, run three ways under the SimGrid options of bench/smpi/run.py (with
# smpi/coll-selector:ompi): the hand-written Irecv/Isend/Waitall loop (AC), the program's
# MPI_Alltoallv with the interposer linked in (bench/smpi/build_pmpi.sh), and SMPI's own
# MPI_Alltoallv (up to 256 ranks: at 1024 SMPI's alltoallv sends p^2 messages a call, minutes of
# wall time each). Prints one line per size: simulated time per call of each, and interposed / AC.
# The interposed program is measured as the user runs it, with the interposer's defaults: its
# agreements and its trials of MPI are in the timed calls; its first calls, through MPI and the
# direct exchange, and its planning (after the communicator's 64th call) fall in the WARM calls
# before them, as they would in the first of a long run's many calls.
#
#   bench/smpi/pmpi_halo.sh CORE_BUILD_DIR OUT_DIR [P ...]     (P: 64 256 1024 by default)
#   env: CALLS (200), WARM (200), BYTES (1024), NATIVE (1; 0: SMPI's MPI_Alltoallv not run)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
core=${1:?usage: pmpi_halo.sh CORE_BUILD_DIR OUT_DIR [P ...]}
out=${2:?usage: pmpi_halo.sh CORE_BUILD_DIR OUT_DIR [P ...]}
shift 2
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(64 256 1024)
calls=${CALLS:-200} warm=${WARM:-200} bytes=${BYTES:-1024}
bash "$here/build_pmpi.sh" "$core" "$out" >/dev/null
mkdir -p "$out/platforms"
cfg=$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.SMPI_CFG))")
per_call() { sed -n 's/.*: \([0-9.]*\) us per call, 0 wrong bytes$/\1/p'; }
printf '%-6s %12s %14s %16s %10s\n' ranks "AC us" "interposed us" "MPI_Alltoallv us" "interp/AC"
for p in "${sizes[@]}"; do
  name=fattree-$p
  python3 "$here/platforms.py" "$out/platforms" "$name" >/dev/null
  run() { smpirun -np "$p" -platform "$out/platforms/$name.xml" -hostfile "$out/platforms/$name.hosts" $cfg --cfg=smpi/coll-selector:ompi "$@"; }
  ac=$(run "$out/smpi_halo" ac "$calls" "$warm" "$bytes" 2>/dev/null | per_call)
  run "$out/smpi_halo_pmpi" alltoallv "$calls" "$warm" "$bytes" >"$out/interposed-$p.out" 2>"$out/interposed-$p.err"
  interposed=$(per_call <"$out/interposed-$p.out")
  native=-
  if [[ $p -le 256 && ${NATIVE:-1} != 0 ]]; then native=$(run "$out/smpi_halo" alltoallv 10 2 "$bytes" 2>/dev/null | per_call); fi
  [[ -n $ac && -n $interposed && -n $native ]] || { echo "pmpi_halo.sh: a run at $p ranks failed (see $out/interposed-$p.*)" >&2; exit 1; }
  printf '%-6s %12s %14s %16s %10s\n' "$p" "$ac" "$interposed" "$native" "$(python3 -c "print(f'{$interposed / $ac:.3f}')")"
  grep '^commfit-pmpi' "$out/interposed-$p.err" | tail -1 >&2 || true
done
