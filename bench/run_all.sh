#!/usr/bin/env bash
# Regenerates the tables and plots of docs/PERFORMANCE.md ("Planner speed", "Simulated clusters and
# network models", "Real MPI on this machine"):
#   1. the SMPI sweep (bench/smpi/run.py), under SimGrid's flow and InfiniBand models: commfit's
#      auto, direct, bounded/k and throttled/k plans with their estimates, AC (also throttled to 4 and 16
#      outstanding requests) and SMPI's MPI_Alltoallv algorithms on simulated fat trees, tori and
#      dragonflies;
#   2. planner speed against Boost edge_coloring (bench/planner_speed);
#   3. real MPI on this machine: bench_exec under Open MPI, -np 8.
# Writes DIR/{smpi_raw,smpi_summary,planner_speed,bench_exec}.csv, DIR/*.svg and DIR/summary.md.
#
#   bench/run_all.sh [--quick] [--build DIR] [--out DIR]
#
# --quick: two 64-rank platforms, 3 patterns, 2 alltoallv algorithms, small planner cases (about
# 3.5 min here once built); default: the set of bench/smpi/run.py (64, 256, 1024 and 4096 ranks on fat
# trees, tapered fat trees, tori and dragonflies) and planner cases up to 10^7 messages (about
# 27-33 min here). docs/PERFORMANCE.md "Simulated clusters and network models" has the numbers and how to read them.
# The build directory (default ./build) is configured (Release) if it does not exist; only the
# targets needed are built, with -j1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
build="$root/build"
out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --build) build=$(realpath -m "$2"); shift ;;
    --out) out=$(realpath -m "$2"); shift ;;
    *) echo "usage: bench/run_all.sh [--quick] [--build DIR] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
[[ -n $out ]] || out="$root/bench/results/$([[ $quick == 1 ]] && echo quick || echo full)"
mkdir -p "$out"
t0=$(date +%s)
stamp() { echo "[run_all $(( $(date +%s) - t0 ))s] $*"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ ! -f $build/build.ninja && ! -f $build/Makefile ]]; then
  stamp "configuring $build (Release)"
  launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
fi
targets=(commfit bench_smpi_patterns)
grep -q bench_planner_speed "$build/build.ninja" 2>/dev/null && targets+=(bench_planner_speed)
grep -q 'bench_exec' "$build/build.ninja" 2>/dev/null && targets+=(bench_exec)
stamp "building ${targets[*]}"
cmake --build "$build" -j1 --target "${targets[@]}" >/dev/null

# 1. SMPI
if driver=$("$root/bench/smpi/build.sh" "$build" "$build/smpi" | tail -1); then
  stamp "SMPI sweep ($([[ $quick == 1 ]] && echo quick || echo full))"
  python3 "$root/bench/smpi/run.py" --out "$out" --build "$build" --driver "$driver" \
    --set "$([[ $quick == 1 ]] && echo quick || echo full)" --timeout "$([[ $quick == 1 ]] && echo 60 || echo 180)" ||
    echo "run_all: the SMPI sweep reported failures (see $out/smpi_raw.csv, $out/smpi.log)" >&2
else
  stamp "SMPI sweep skipped (no smpicxx)"
fi

# 2. planner speed
if [[ -x $build/bench/planner_speed/bench_planner_speed ]]; then
  stamp "planner speed"
  "$build/bench/planner_speed/bench_planner_speed" $([[ $quick == 1 ]] && echo "--quick --timeout 30" || echo "--timeout 60") \
    --csv "$out/planner_speed.csv" | tee "$out/planner_speed.txt"
fi

# 3. real MPI
if [[ -x $build/backends/exec/bench_exec ]] && command -v mpirun >/dev/null; then
  stamp "bench_exec -np 8"
  mpirun --oversubscribe -np 8 "$build/backends/exec/bench_exec" --blocks "$([[ $quick == 1 ]] && echo 3 || echo 7)" \
    --csv "$out/bench_exec.csv" | tee "$out/bench_exec.txt"
fi

python3 "$root/bench/report.py" "$out" "$([[ $quick == 1 ]] && echo 30 || echo 60)"   # the planner-speed timeout
stamp "done: $out/summary.md"
