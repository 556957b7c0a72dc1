#!/usr/bin/env bash
# The interposer under SimGrid SMPI on the hot-receiver rows of the InfiniBand sweep
# (docs/PERFORMANCE.md, "The interposer on the IB hot-receiver rows"): MoE dispatch at 16 KiB and
# 256 KiB and the skewed sample sort at 256 KiB, 64 ranks, on fattree-64 and torus-64 of
# bench/smpi/platforms.py, under run.py's SMPI_CFG and NETWORK_CFG["ib"] (with
# smpi/coll-selector:ompi, as bench/smpi/pmpi_halo.sh). The unmodified program
# bench/smpi/smpi_alltoallv_loop.c repeats the row's exchange (the matrix of bench_smpi_patterns,
# as counts_of.py writes it), run three ways: the hand-written Irecv/Isend/Waitall loop (AC), its
# MPI_Alltoallv with the interposer linked in (bench/smpi/build_pmpi.sh), told the machine through
# its environment as run.py tells `commfit plan` (COMMFIT_TOPOLOGY, COMMFIT_NETWORK=ib and
# COMMFIT_OPTIONS from PLAN_COST and PLAN_NETWORK["ib"]), and SMPI's own MPI_Alltoallv (the ompi
# selector's: pair at 64 ranks). Prints one line per row: simulated time per call of each, and
# AC / interposed; the interposer's summary lines go to stderr and OUT_DIR/interposed-ROW.err.
# The interposer runs with its defaults otherwise: it plans after the communicator's 64th call
# (COMMFIT_PLAN_AFTER) and times its plan against MPI and the direct exchange in the calls after,
# all within the WARM calls before the timed ones.
# The calls run back to back (the ranks drift apart), or with GAP every call starts at a common
# instant, GAP simulated seconds after the last (as after a synchronising step; the sweep's driver
# times one exchange so).
#
#   bench/smpi/pmpi_rows.sh CORE_BUILD_DIR OUT_DIR [PLATFORM ...]   (fattree-64 torus-64 by default)
#   env: CALLS (20), WARM (200), GAP (unset: back to back; e.g. 0.1), NATIVE_CALLS (5, after 2;
#        0: SMPI's MPI_Alltoallv not run), ROWS ("moe:16384 moe:262144 samplesort:262144")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
core=${1:?usage: pmpi_rows.sh CORE_BUILD_DIR OUT_DIR [PLATFORM ...]}
out=${2:?usage: pmpi_rows.sh CORE_BUILD_DIR OUT_DIR [PLATFORM ...]}
shift 2
plats=("$@")
[[ ${#plats[@]} -gt 0 ]] || plats=(fattree-64 torus-64)
calls=${CALLS:-20} warm=${WARM:-200} native_calls=${NATIVE_CALLS:-5} gap=(${GAP:+"$GAP"})
read -r -a rows <<<"${ROWS:-moe:16384 moe:262144 samplesort:262144}"
gen=$core/bench/smpi/bench_smpi_patterns
[[ -x $gen ]] || { echo "pmpi_rows.sh: $gen missing (build target bench_smpi_patterns first)" >&2; exit 2; }
bash "$here/build_pmpi.sh" "$core" "$out" >/dev/null
mkdir -p "$out/platforms" "$out/matrices"
# run.py's SimGrid options and the planner's figures for the IB model, as `key=value` in-job options.
read -r cfg <<<"$(python3 -c "import sys; sys.path.insert(0, '$here'); import run; print(' '.join(run.SMPI_CFG + run.NETWORK_CFG['ib']))")"
read -r plan_options <<<"$(python3 -c "
import sys; sys.path.insert(0, '$here'); import run
a = run.PLAN_COST + run.PLAN_NETWORK['ib']
kv = dict((a[k][2:], a[k + 1]) for k in range(0, len(a), 2))
assert kv.pop('network') == 'ib'
print(' '.join(k + '=' + v for k, v in kv.items()))")"
per_call() { sed -n 's/.*: \([0-9.]*\) us per call, 0 wrong bytes$/\1/p'; }
echo "interposer: COMMFIT_NETWORK=ib COMMFIT_OPTIONS=\"$plan_options\", COMMFIT_TOPOLOGY per platform; CALLS=$calls WARM=$warm GAP=${GAP:-none}" >&2
printf '%-11s %-10s %7s %4s %10s %14s %16s %10s\n' platform pattern bytes p "AC us" "interposed us" "MPI_Alltoallv us" "AC/interp"
for plat in "${plats[@]}"; do
  read -r _ topo <<<"$(python3 "$here/platforms.py" "$out/platforms" "$plat")"
  p=${plat##*-}
  run() { smpirun -np "$p" -platform "$out/platforms/$plat.xml" -hostfile "$out/platforms/$plat.hosts" $cfg --cfg=smpi/coll-selector:ompi "$@"; }
  for row in "${rows[@]}"; do
    kind=${row%%:*} bytes=${row##*:} tag=$plat-${row/:/-}${GAP:+-gap}
    counts=$out/matrices/$kind-$p-$bytes.counts
    if [[ ! -f $counts ]]; then
      "$gen" "$kind" "$p" "$bytes" "$out/matrices/$kind-$p-$bytes.json" >/dev/null
      python3 "$here/counts_of.py" "$out/matrices/$kind-$p-$bytes.json" "$counts"
    fi
    ac=$(run "$out/smpi_alltoallv_loop" ac "$calls" "$warm" "$counts" "${gap[@]}" 2>/dev/null | per_call)
    COMMFIT_TOPOLOGY=$topo COMMFIT_NETWORK=ib COMMFIT_OPTIONS=$plan_options COMMFIT_VERBOSE=2 \
      run "$out/smpi_alltoallv_loop_pmpi" alltoallv "$calls" "$warm" "$counts" "${gap[@]}" >"$out/interposed-$tag.out" 2>"$out/interposed-$tag.err"
    interposed=$(per_call <"$out/interposed-$tag.out")
    native=-
    if [[ $native_calls != 0 ]]; then native=$(run "$out/smpi_alltoallv_loop" alltoallv "$native_calls" 2 "$counts" "${gap[@]}" 2>/dev/null | per_call); fi
    [[ -n $ac && -n $interposed && -n $native ]] || { echo "pmpi_rows.sh: a run of $tag failed (see $out/interposed-$tag.*)" >&2; exit 1; }
    printf '%-11s %-10s %7s %4s %10s %14s %16s %10s\n' "$plat" "$kind" "$bytes" "$p" "$ac" "$interposed" "$native" \
      "$(python3 -c "print(f'{$ac / $interposed:.3f}')")"
    grep '^commfit-pmpi' "$out/interposed-$tag.err" | sed "s/^/$tag: /" >&2 || true
  done
done
