#!/usr/bin/env bash
# A program that picks its exchange by timing two at set-up (tests/mpi/pmpi_choice.c: MPI_Alltoallv
# against a padded MPI_Alltoall, SETUP calls each), run RUNS times without and with the interposer,
# alternating: which one each run chose, its set-up times per call, and the chosen exchange's time
# per call afterwards. The interposer must not change the choice: its planning is not in the calls
# the program times (COMMFIT_PLAN_AFTER). Usage: bench/pmpi_choice.sh [BUILD] [NP] [RUNS] [INTS]
set -euo pipefail
build=${1:-build} np=${2:-4} runs=${3:-5} ints=${4:-2048}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exe=$build/tests/mpi/pmpi_choice lib=$build/runtime/libcommfit_pmpi.so
one() { mpirun --oversubscribe -np "$np" "$@" "$exe" 30 1000 "$ints" 2>/dev/null | sed -n 's/^pmpi_choice: //p'; }
for ((k = 0; k < runs; k++)); do
  echo "MPI:      $(one -x COMMFIT_PMPI=0)"
  echo "commfit:  $(one -x LD_PRELOAD="$lib")"
done
