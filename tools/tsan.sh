#!/usr/bin/env bash
# The interposer under ThreadSanitizer: builds libcommfit_pmpi.so and tests/mpi/pmpi_threads linked
# with it (-fsanitize=thread, clang, build-tsan/), then runs the program at
# np 2 and 4 with 4 threads per rank, each thread on its own communicator, every int checked, and
# fails on any report (docs/HARDENING.md "Sanitizers"). Open MPI is not instrumented: what its
# libraries do from inside MPI calls is not watched (tools/sanitizers/tsan.supp), the interposer,
# the executor and the planner (on the roots' planning threads) are. One node: shared memory
# (vader) between the ranks.
#   bash tools/tsan.sh [ITERATIONS]   (120 unless given)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-120}
build=${COMMFIT_TSAN_BUILD_DIR:-build-tsan}
started=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOMMFIT_TSAN=ON -DCOMMFIT_BUILD_BENCH=OFF -DCOMMFIT_PCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target pmpi_threads_linked
echo "tools/tsan.sh: built in $((SECONDS - started)) s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tools/sanitizers/tsan.supp"
exe=$build/tests/mpi/pmpi_threads_linked
for np in 2 4; do
  log=$build/tsan_np$np.log
  # Plans from a pattern's second call on, on the roots' planning threads while the calls go on.
  if ! COMMFIT_THRESHOLD=2 COMMFIT_PLAN_AFTER=0 COMMFIT_PLAN_BUDGET=1000000 \
    mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" -x TSAN_OPTIONS -x COMMFIT_THRESHOLD \
      -x COMMFIT_PLAN_AFTER -x COMMFIT_PLAN_BUDGET "$exe" 4 "$iterations" >"$log" 2>&1; then
    cat "$log"
    echo "tools/tsan.sh: np $np failed (above)"
    exit 1
  fi
  if grep -q "WARNING: ThreadSanitizer" "$log"; then
    cat "$log"
    echo "tools/tsan.sh: np $np: ThreadSanitizer reported (above)"
    exit 1
  fi
  if ! grep -Eq "intercepted calls: [1-9][0-9]* replayed by commfit" "$log" || ! grep -Eq "patterns seen, [1-9][0-9]* planned" "$log"; then
    cat "$log"
    echo "tools/tsan.sh: np $np: no plan made and replayed (above)"
    exit 1
  fi
  grep -E "pmpi_threads: rank|intercepted calls|patterns seen" "$log"
done
echo "tools/tsan.sh: no report at np 2 and 4, 4 threads per rank ($((SECONDS - started)) s)"
