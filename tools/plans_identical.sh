#!/usr/bin/env bash
# Plans the same matrices with two commfit binaries and requires byte-identical plans: the check
# behind every refactoring that must not change what the planner writes (docs/ARCHITECTURE.md).
# Matrices: the examples and the golden cases, plus generated bench sets (uniform, non-uniform,
# lognormal, hot receiver, random, MoE, sample sort, stencil, transport); each is planned with
# every strategy, algorithm and variant, with auto, on a torus, and (sample sort) under memory
# limits. A case that fails must fail the same way (exit status and message) with both.
#
# Usage: tools/plans_identical.sh OLD_COMMFIT NEW_COMMFIT [--quick]
# Prints one line per differing case and a summary; exit 0 when every case is identical.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: tools/plans_identical.sh OLD_COMMFIT NEW_COMMFIT [--quick]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") quick=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The matrices, generated once with the old binary (the generators are not under test here).
mkdir -p "$work/m"
cp "$root"/examples/*.json "$work/m/"
gen() { local name=$1; shift; "$old" gen "$@" --seed 7 -o "$work/m/$name.json" >/dev/null || echo "gen $name failed" >&2; }
gen uniform64 uniform -n 64 -d 8
gen hot64 hot -n 64
gen random128 random -n 128
gen moe64 moe -n 64
gen sort64 sample-sort -n 64
gen stencil64 stencil --grid 8x8 --points 9
gen transport64 transport -n 64 -k 16
if [ "$quick" != "--quick" ]; then
  gen nonuniform256 nonuniform -n 256 -d 16
  gen lognormal256 lognormal -n 256
  gen hot256 hot -n 256
fi

cases=()
for m in "$work"/m/*.json; do
  n=$(basename "$m" .json)
  for a in optimal rs_n rs_np rs_nl rs_nlp rs_nlph rs_nlh lp quantised; do cases+=("$n|--algorithm $a"); done
  cases+=("$n|--strategy async" "$n|--strategy auto")
  for v in transport transport-scan transport-alt bhj random; do cases+=("$n|--strategy two-stage --variant $v"); done
  cases+=("$n|--algorithm rs_nlp --topology torus:4x4x4" "$n|--algorithm optimal --topology torus:4x4x4")
done
cases+=("sample_sort_8|--strategy memory --memory 23000000" "sample_sort_8|--strategy memory --method relaxation --memory 23000000"
        "sample_sort_8|--strategy auto --memory 23000000")
# Every field a manifest records: the bounded rule, a request window, node plans with intra-node
# figures, the IB model with its factors, link latency, window and sharing weights.
cases+=("hot64|--strategy bounded --concurrency 8" "moe64|--strategy throttled --max-outstanding 8"
        "moe64|--strategy node --topology fattree:2;8,8;1,8;1,1+node4 --intra-latency 1e-7"
        "moe64|--strategy auto --topology fattree:2;8,8;1,8;1,1+node4"
        "stencil64|--strategy auto --network ib --ib-factors 0.9,0.9,1.2 --topology torus:4x4x4 --link-latency 1e-7 --window 4194304 --rtt-weight 8775")

same=0 differ=0
for c in "${cases[@]}"; do
  n=${c%%|*} args=${c#*|}
  for side in old new; do
    exe=$old; [ $side = new ] && exe=$new
    d="$work/$side"
    rm -rf "$d" && mkdir -p "$d"
    # shellcheck disable=SC2086
    (cd "$d" && "$exe" plan "$work/m/$n.json" -o p.plan -q $args 2>err; echo "exit $?" >>err)
  done
  if diff -r "$work/old" "$work/new" >/dev/null; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERS: $n $args"
    diff -r "$work/old" "$work/new" | head -5
  fi
done
echo "plans_identical: $same identical, $differ differ (of ${#cases[@]} cases)"
[ "$differ" -eq 0 ]
