#!/usr/bin/env bash
# Builds the PMPI interposer for SimGrid 3.32 SMPI as OUT_DIR/libcommfit_pmpi_smpi.a: runtime/pmpi.cpp
# and its per-call choice (call_policy.cpp), in-job planning (runtime/in_job.cpp, adapt.cpp) and the executor (backends/exec/*.cpp) compiled
# by smpicxx; the MPI-free planner and plan readers are the main build's libcommfit_planner.a and
# libcommfit_ir.a (plain g++, position-independent, same ABI). SMPI declares its MPI_* entry points
# weak and its PMPI_* ones strong, so an unmodified SMPI program linked with the archive whole takes
# its MPI_Alltoallv and MPI_Alltoall calls through the interposer (its globals are per rank under
# SMPI's privatization, the default):
#
#   bench/smpi/build_pmpi.sh CORE_BUILD_DIR OUT_DIR
#   smpicxx prog.o -Wl,--whole-archive OUT_DIR/libcommfit_pmpi_smpi.a -Wl,--no-whole-archive \
#       CORE_BUILD_DIR/libcommfit_planner.a CORE_BUILD_DIR/libcommfit_ir.a -o prog
#
# It also builds two unmodified programs twice each, plain SMPI and linked as above (OUT_DIR/NAME
# and OUT_DIR/NAME_pmpi): bench/smpi/smpi_halo.c, the halo program of bench/smpi/pmpi_halo.sh, and
# bench/smpi/smpi_alltoallv_loop.c, the counts-file program of bench/smpi/pmpi_rows.sh.
# Exit status 3 (and a message) when smpicxx is absent. Recompiles only what changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
core=${1:?usage: build_pmpi.sh CORE_BUILD_DIR OUT_DIR}
out=${2:?usage: build_pmpi.sh CORE_BUILD_DIR OUT_DIR}
if ! command -v smpicxx >/dev/null 2>&1; then
  echo "build_pmpi.sh: smpicxx not found (Debian package simgrid / libsimgrid-dev)" >&2
  exit 3
fi
for lib in libcommfit_planner.a libcommfit_ir.a; do
  [[ -f $core/$lib ]] || { echo "build_pmpi.sh: $core/$lib missing (build targets commfit_planner and commfit_ir first)" >&2; exit 2; }
done
mkdir -p "$out/obj-pmpi"
flags=(-std=c++20 -O2 -g0 -DNDEBUG -DCOMMFIT_VERSION=\"smpi\" -I"$root" -I"$root/backends/exec" -I/usr/include/eigen3)
cc=(smpicxx); command -v ccache >/dev/null 2>&1 && cc=(ccache smpicxx)
objs=()
for src in "$root"/backends/exec/{agree,load,replay,baselines}.cpp "$root"/runtime/{in_job,adapt,call_policy,pmpi}.cpp "$here/smpi_iallreduce.cpp"; do
  obj="$out/obj-pmpi/$(basename "${src%.cpp}").o"
  if [[ ! -f $obj || $src -nt $obj || -n $(find "$root/backends/exec" "$root/runtime" "$root/ir" "$root/planner" "$root/backends" -maxdepth 1 -name '*.h*' -newer "$obj" -print -quit) ]]; then
    echo "smpicxx $(basename "$src")" >&2
    extra=()
    # The executor's one count-check MPI_Iallreduce (the checking mode's first replay of a plan)
    # as a blocking MPI_Allreduce: SMPI 3.32's is p^2 messages (smpi_iallreduce.cpp).
    [[ $(basename "$src") == replay.cpp ]] && extra=(-DMPI_Iallreduce=commfit_smpi_iallreduce)
    # The root plans in the call, not on a thread: SMPI's ranks share one process (runtime/pmpi.cpp).
    [[ $(basename "$src") == pmpi.cpp ]] && extra=(-DCOMMFIT_PMPI_NO_THREADS)
    "${cc[@]}" "${flags[@]}" "${extra[@]}" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done
rm -f "$out/libcommfit_pmpi_smpi.a"
ar rcs "$out/libcommfit_pmpi_smpi.a" "${objs[@]}"
for prog in smpi_halo smpi_alltoallv_loop; do
  smpicc -O2 -c "$here/$prog.c" -o "$out/obj-pmpi/$prog.o"
  smpicxx "$out/obj-pmpi/$prog.o" -o "$out/$prog"
  # Stripped (-s): SMPI's privatization copies the program once per rank (build_discovery.sh).
  smpicxx -s "$out/obj-pmpi/$prog.o" -Wl,--whole-archive "$out/libcommfit_pmpi_smpi.a" -Wl,--no-whole-archive \
    "$core/libcommfit_planner.a" "$core/libcommfit_ir.a" -o "$out/${prog}_pmpi"
done
echo "$out/libcommfit_pmpi_smpi.a"
