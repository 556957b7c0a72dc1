#!/usr/bin/env bash
# The interposer on patterns that never settle (tests/mpi/pmpi_thrash.c), against plain MPI: each
# case run RUNS times alternating, the slowest rank's time of the calls, median of the runs, and the
# ratio interposed / plain. Usage: bench/pmpi_thrash.sh [BUILD] [NP] [RUNS]
set -euo pipefail
build=${1:-build} np=${2:-4} runs=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exe=$build/tests/mpi/pmpi_thrash lib=$build/runtime/libcommfit_pmpi.so
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
one() {   # prints the loop's seconds
  mpirun --oversubscribe -np "$np" "$@" 2>&1 >/dev/null | sed -n 's/^pmpi_thrash .*: \([0-9.]*\) s$/\1/p'
}
printf '%-12s %12s %12s %8s  %s\n' case "MPI (s)" "commfit (s)" ratio "interposer's summary (last run)"
for c in "cycle 2000" "sizes 5000" "comms 10000"; do
  plain=() pre=()
  for ((k = 0; k < runs; k++)); do
    plain+=("$(COMMFIT_PMPI=0 one "$exe" $c)")
    pre+=("$(one -x LD_PRELOAD="$lib" "$exe" $c)")
  done
  summary=$(mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$lib" "$exe" $c 2>&1 >/dev/null | grep -o 'planning held or stopped by the budget on [0-9]* communicators.*stepped aside to MPI' || true)
  a=$(printf '%s\n' "${plain[@]}" | median) b=$(printf '%s\n' "${pre[@]}" | median)
  printf '%-12s %12.4f %12.4f %8.2f  %s\n' "$c" "$a" "$b" "$(echo "$b / $a" | bc -l)" "$summary"
done
