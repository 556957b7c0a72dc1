#!/usr/bin/env bash
# Installs the dependencies, builds commfit with its tests and runs them all (unit, property,
# CLI, golden and MPI executor tests) with CTest, after a bounded run of the fuzz targets.
# The test build is the sanitized one (ASan + UBSan + LSan): the whole suite runs under the
# sanitizers (docs/HARDENING.md "Sanitizers"). It is one clang build that serves the fuzz targets
# too (libFuzzer's coverage hooks on every library, COMMFIT_FUZZ), so nothing is compiled twice.
# The stage times are printed at the end.
# COMMFIT_SANITIZE=OFF bash tools/test.sh runs it on the plain build instead (the default compiler;
# tools/fuzz.sh then builds the fuzz targets in build-fuzz/).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed when it ends and summed up at the end (CI's budget is the total).
started=$SECONDS stage_start=$SECONDS stages=()
stage_done() {
  stages+=("$(printf '%-24s %5d s' "$1" $((SECONDS - stage_start)))")
  echo "commfit test.sh: $1 took $((SECONDS - stage_start)) s"
  stage_start=$SECONDS
}
trap 'printf "commfit test.sh: %s\n" "${stages[@]}" "total                    $((SECONDS - started)) s"' EXIT
bash tools/setup.sh
stage_done "dependencies"
build=${COMMFIT_BUILD_DIR:-build}
if [[ ${COMMFIT_SANITIZE:-ON} == ON ]]; then
  # A build directory configured with another compiler (the README's first command makes one with
  # the default) is configured anew: CMake cannot switch compilers in place.
  if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++$' "$build/CMakeCache.txt"; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
  # A unity build: each target's sources compiled a few files at a time, so that the templates of
  # nlohmann/json, CLI11 and doctest are instantiated and optimised once per batch rather than once
  # per file (under the sanitizers that is most of the build's time). Names at file scope must
  # therefore be unique within each library and test program. No test runs a benchmark in the
  # sanitized build (the SMPI smoke test needs the plain one), so bench/ is left to the plain
  # build of the README's first command.
  cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOMMFIT_SANITIZE=ON -DCOMMFIT_FUZZ=ON -DCMAKE_UNITY_BUILD=ON -DCOMMFIT_BUILD_BENCH=OFF
  fuzz_build=$build
else
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMFIT_SANITIZE=OFF -DCOMMFIT_FUZZ=OFF
  fuzz_build=build-fuzz
fi
cmake --build "$build" -j "$(nproc)"
stage_done "build"
# The fuzz targets (libFuzzer, ASan + UBSan): a fixed number of inputs from a fixed seed, so the
# run is bounded and deterministic. Long runs: tools/fuzz.sh SECONDS.
COMMFIT_FUZZ_BUILD_DIR="$fuzz_build" COMMFIT_EXE="$build/commfit" bash tools/fuzz.sh --runs 50000
stage_done "fuzz runs"
# Open MPI refuses to start as root unless told to; the executor tests run under mpirun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Sanitizer runtime options. Only instrumented programs read them (mpirun, Chromium, gmsh and
# smpirun ignore them). The first error ends the program with its stack; the leaks of Open MPI's
# own libraries are suppressed (tools/sanitizers/lsan.supp), ours are not.
supp="$PWD/tools/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
stage_done "ctest"
