#!/usr/bin/env bash
# Builds bench/smpi/smpi_in_job with smpicxx (SimGrid 3.32 SMPI): in-job planning
# (runtime/in_job.cpp), the executor (backends/exec/*.cpp) and the program are compiled by smpicxx;
# the MPI-free planner and plan readers are the main build's libcommfit_planner.a and
# libcommfit_ir.a (plain g++, position-independent, same ABI).
#
#   bench/smpi/build_in_job.sh CORE_BUILD_DIR OUT_DIR     # CORE_BUILD_DIR holds the two libraries
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
core=${1:?usage: build_in_job.sh CORE_BUILD_DIR OUT_DIR}
out=${2:?usage: build_in_job.sh CORE_BUILD_DIR OUT_DIR}
command -v smpicxx >/dev/null 2>&1 || { echo "build_in_job.sh: smpicxx not found (Debian package simgrid)" >&2; exit 3; }
mkdir -p "$out/obj-in-job"
flags=(-std=c++20 -O2 -g0 -DNDEBUG -DCOMMFIT_VERSION=\"smpi\" -I"$root" -I"$root/backends/exec" -I/usr/include/eigen3)
objs=()
for src in "$root"/backends/exec/{agree,load,replay,baselines}.cpp "$root/runtime/in_job.cpp" "$here/smpi_in_job.cpp"; do
  obj="$out/obj-in-job/$(basename "${src%.cpp}").o"
  extra=()
  [[ $(basename "$src") == replay.cpp ]] && extra=(-DMPI_Iallreduce=commfit_smpi_iallreduce)
  smpicxx "${flags[@]}" "${extra[@]}" -c "$src" -o "$obj"
  objs+=("$obj")
done
# Stripped (-s): SMPI's privatization copies the program once per rank (build_discovery.sh).
smpicxx -s "${objs[@]}" "$core/libcommfit_planner.a" "$core/libcommfit_ir.a" -o "$out/smpi_in_job"
echo "$out/smpi_in_job"
