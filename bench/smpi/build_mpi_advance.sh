#!/usr/bin/env bash
# Builds bench/smpi/smpi_mpi_advance (the MPI Advance peer, docs/SMPI.md) with smpicxx against a
# checkout of mpi-advance/locality_aware, which stays outside this repository: the library is
# configured with smpicc/smpicxx into MPIA_BUILD_DIR (default OUT_DIR/locality_aware-build) unless
# MPIA_BUILD_DIR already holds liblocality_aware.a.
#
#   bench/smpi/build_mpi_advance.sh CORE_BUILD_DIR OUT_DIR MPIA_CHECKOUT [MPIA_BUILD_DIR]
#
# Exit status 3 (and a message) when smpicxx or the checkout is absent: the peer is skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage="usage: build_mpi_advance.sh CORE_BUILD_DIR OUT_DIR MPIA_CHECKOUT [MPIA_BUILD_DIR]"
core=${1:?$usage}
out=${2:?$usage}
src=${3:?$usage}
lib=${4:-$out/locality_aware-build}
if ! command -v smpicxx >/dev/null 2>&1; then
  echo "build_mpi_advance.sh: smpicxx not found (Debian package simgrid / libsimgrid-dev): MPI Advance peer skipped" >&2
  exit 3
fi
if [[ ! -f $src/include/locality_aware.h ]]; then
  echo "build_mpi_advance.sh: no mpi-advance/locality_aware checkout at '$src' (include/locality_aware.h missing): MPI Advance peer skipped" >&2
  exit 3
fi
[[ -f $core/libcommfit_ir.a ]] || { echo "build_mpi_advance.sh: $core/libcommfit_ir.a missing (build target commfit_ir first)" >&2; exit 2; }
if [[ ! -f $lib/liblocality_aware.a ]]; then
  echo "build_mpi_advance.sh: building locality_aware with smpicc/smpicxx in $lib" >&2
  CC=smpicc CXX=smpicxx cmake -S "$src" -B "$lib" -DCMAKE_BUILD_TYPE=Release -DENABLE_UNIT_TESTS=OFF -DBENCHMARKS=OFF >&2
  cmake --build "$lib" --target locality_aware -j2 >&2
fi
mkdir -p "$out/obj"
obj="$out/obj/smpi_mpi_advance.o"
if [[ ! -f $obj || $here/smpi_mpi_advance.cpp -nt $obj || $here/smpi_bench.h -nt $obj || $lib/liblocality_aware.a -nt $obj ]]; then
  echo "smpicxx smpi_mpi_advance.cpp" >&2
  cc=(smpicxx); command -v ccache >/dev/null 2>&1 && cc=(ccache smpicxx)
  "${cc[@]}" -std=c++20 -O2 -g0 -DNDEBUG -I"$root" -I/usr/include/eigen3 -I"$src/include" -c "$here/smpi_mpi_advance.cpp" -o "$obj"
fi
smpicxx "$obj" "$lib/liblocality_aware.a" "$core/libcommfit_ir.a" -o "$out/smpi_mpi_advance"
echo "$out/smpi_mpi_advance"
