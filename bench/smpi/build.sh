#!/usr/bin/env bash
# Builds bench/smpi/smpi_driver with smpicxx (SimGrid 3.32 SMPI): the executor library
# (backends/exec/*.cpp) and the driver are compiled by smpicxx; the MPI-free plan readers are the
# main build's libcommfit_ir.a (plain g++, position-independent, same ABI).
#
#   bench/smpi/build.sh CORE_BUILD_DIR OUT_DIR      # CORE_BUILD_DIR holds libcommfit_ir.a
#
# Exit status 3 (and a message) when smpicxx is absent. Recompiles only what changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
core=${1:?usage: build.sh CORE_BUILD_DIR OUT_DIR}
out=${2:?usage: build.sh CORE_BUILD_DIR OUT_DIR}
if ! command -v smpicxx >/dev/null 2>&1; then
  echo "build.sh: smpicxx not found (Debian package simgrid / libsimgrid-dev): SMPI benchmark skipped" >&2
  exit 3
fi
[[ -f $core/libcommfit_ir.a ]] || { echo "build.sh: $core/libcommfit_ir.a missing (build target commfit_ir first)" >&2; exit 2; }
mkdir -p "$out/obj"
flags=(-std=c++20 -O2 -g0 -DNDEBUG -DCOMMFIT_VERSION=\"smpi\" -I"$root" -I"$root/backends/exec" -I/usr/include/eigen3)
cc=(smpicxx); command -v ccache >/dev/null 2>&1 && cc=(ccache smpicxx)
objs=()
for src in "$root"/backends/exec/{agree,load,replay,baselines}.cpp "$here/smpi_driver.cpp"; do
  obj="$out/obj/$(basename "${src%.cpp}").o"
  if [[ ! -f $obj || $src -nt $obj || -n $(find "$root/backends/exec" "$root/ir" "$root/backends" -maxdepth 1 -name '*.h*' -newer "$obj" -print -quit) ]]; then
    echo "smpicxx $(basename "$src")" >&2
    extra=()
    # The executor's count-check MPI_Iallreduce as a blocking MPI_Allreduce: see smpi_driver.cpp.
    [[ $(basename "$src") == replay.cpp ]] && extra=(-DMPI_Iallreduce=commfit_smpi_iallreduce)
    "${cc[@]}" "${flags[@]}" "${extra[@]}" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done
smpicxx "${objs[@]}" "$core/libcommfit_ir.a" -o "$out/smpi_driver"
echo "$out/smpi_driver"
