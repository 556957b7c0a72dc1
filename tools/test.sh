#!/usr/bin/env bash
# Installs the dependencies, builds commfit with its tests and runs them all (unit, property,
# CLI, golden and MPI executor tests) with CTest, after a bounded run of the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
build=${COMMFIT_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(nproc)"
# The fuzz targets (libFuzzer, ASan + UBSan): a fixed number of inputs from a fixed seed, so the
# run is bounded and deterministic. Long runs: tools/fuzz.sh SECONDS.
bash tools/fuzz.sh --runs 100000
# Open MPI refuses to start as root unless told to; the executor tests run under mpirun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
