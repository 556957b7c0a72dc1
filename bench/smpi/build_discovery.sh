#!/usr/bin/env bash
# Builds bench/smpi/smpi_discovery (the owner-lookup benchmark, docs/PERFORMANCE.md "Finding owners
# from global ids") with smpicxx (SimGrid 3.32 SMPI): the owner lookup and patterns
# (runtime/owner_lookup.cpp, pattern.cpp), in-job planning (runtime/in_job.cpp, adapt.cpp), the
# executor (backends/exec/*.cpp) and the program are compiled by smpicxx; the MPI-free planner and
# plan readers are the main build's libcommfit_planner.a and libcommfit_ir.a (plain g++,
# position-independent, same ABI).
#
#   bench/smpi/build_discovery.sh CORE_BUILD_DIR OUT_DIR [MPIA_CHECKOUT [MPIA_BUILD_DIR]]
#
# With a checkout of mpi-advance/locality_aware (kept outside this repository) the program also
# times MPI Advance's MPIL_Alltoallv_crs on the reverse step (--mpia): the library is built with
# smpicc/smpicxx as build_mpi_advance.sh builds it, into MPIA_BUILD_DIR (default
# OUT_DIR/locality_aware-build, the same as build_mpi_advance.sh's) unless it holds the library.
# Exit status 3 (and a message) when smpicxx is absent. Recompiles only what changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage="usage: build_discovery.sh CORE_BUILD_DIR OUT_DIR [MPIA_CHECKOUT [MPIA_BUILD_DIR]]"
core=${1:?$usage}
out=${2:?$usage}
mpia=${3:-}
if ! command -v smpicxx >/dev/null 2>&1; then
  echo "build_discovery.sh: smpicxx not found (Debian package simgrid / libsimgrid-dev): owner-lookup benchmark skipped" >&2
  exit 3
fi
for lib in libcommfit_planner.a libcommfit_ir.a; do
  [[ -f $core/$lib ]] || { echo "build_discovery.sh: $core/$lib missing (build targets commfit_planner and commfit_ir first)" >&2; exit 2; }
done
flags=(-std=c++20 -O2 -g0 -DNDEBUG -DCOMMFIT_VERSION=\"smpi\" -I"$root" -I"$root/backends/exec" -I/usr/include/eigen3)
libs=()
obj_dir="$out/obj-discovery"
program="$out/smpi_discovery"
if [[ -n $mpia ]]; then
  [[ -f $mpia/include/locality_aware.h ]] || { echo "build_discovery.sh: no mpi-advance/locality_aware checkout at '$mpia' (include/locality_aware.h missing)" >&2; exit 2; }
  lib=${4:-$out/locality_aware-build}
  if [[ ! -f $lib/liblocality_aware.a ]]; then
    echo "build_discovery.sh: building locality_aware with smpicc/smpicxx in $lib" >&2
    CC=smpicc CXX=smpicxx cmake -S "$mpia" -B "$lib" -DCMAKE_BUILD_TYPE=Release -DENABLE_UNIT_TESTS=OFF -DBENCHMARKS=OFF >&2
    cmake --build "$lib" --target locality_aware -j2 >&2
  fi
  flags+=(-DCOMMFIT_WITH_MPI_ADVANCE -I"$mpia/include")
  libs+=("$lib/liblocality_aware.a")
  obj_dir="$out/obj-discovery-mpia"
  program="$out/smpi_discovery_mpia"
fi
mkdir -p "$obj_dir"
cc=(smpicxx); command -v ccache >/dev/null 2>&1 && cc=(ccache smpicxx)
objs=()
for src in "$root"/backends/exec/{agree,load,replay,baselines}.cpp "$root"/runtime/{in_job,adapt,pattern,owner_lookup}.cpp "$here/smpi_discovery.cpp"; do
  obj="$obj_dir/$(basename "${src%.cpp}").o"
  if [[ ! -f $obj || $src -nt $obj || $here/smpi_bench.h -nt $obj ||
        -n $(find "$root/backends/exec" "$root/runtime" "$root/ir" "$root/planner" "$root/backends" -maxdepth 1 -name '*.h*' -newer "$obj" -print -quit) ]]; then
    echo "smpicxx $(basename "$src")" >&2
    extra=()
    # The executor's count-check MPI_Iallreduce as a blocking MPI_Allreduce: see smpi_discovery.cpp.
    [[ $(basename "$src") == replay.cpp ]] && extra=(-DMPI_Iallreduce=commfit_smpi_iallreduce)
    "${cc[@]}" "${flags[@]}" "${extra[@]}" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done
# SimGrid 3.32's MPI_Ibarrier is replaced by the program's own (NBX needs a correct one: see
# smpi_discovery.cpp).
# Linked stripped (-s): SMPI's privatization copies the program once per rank into smpi/tmpdir, and
# the main build's libraries carry debug information (55 MB a copy unstripped, 56 GB at 1024 ranks).
smpicxx -s "${objs[@]}" "${libs[@]}" "$core/libcommfit_planner.a" "$core/libcommfit_ir.a" -Wl,--wrap=MPI_Ibarrier,--wrap=MPI_Test -o "$program"
echo "$program"
