#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each one, seeded with the
# fixtures and examples: the matrix JSON and Matrix Market readers, the plan readers (JSON and
# binary), the verifier, and commfit extract's readers (gmsh .msh, Matrix Market pattern, partition
# vector; docs/HARDENING.md).
#   tools/fuzz.sh SECONDS     time-bounded run per target (long runs: tools/fuzz.sh 3600)
#   tools/fuzz.sh --runs N    N inputs per target from seed 1: deterministic, for CI
#   COMMFIT_FUZZ_ONLY="fuzz_msh fuzz_mtx_pattern" tools/fuzz.sh 600    only those targets
#   COMMFIT_EXE=build/commfit tools/fuzz.sh ...   make the seed plans with that commfit instead of
#                                                 building one with clang here (tools/test.sh does)
#   COMMFIT_FUZZ_BUILD_DIR=DIR tools/fuzz.sh ...  build and run the targets in DIR (build-fuzz/); a
#                                                 build with COMMFIT_FUZZ on is used as configured
# The targets run as many at a time as there are CPUs (each one process).
# A failing input is kept in build-fuzz/artifacts-TARGET/ and the script exits 1: turn it into a
# fixture with a golden (tests/fixtures, tools/update_error_goldens.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-60}")
[[ "${1:-}" == "--runs" ]] && limit=(-runs="${2:?--runs needs a count}" -seed=1)
asked=("${limit[@]}")
build=${COMMFIT_FUZZ_BUILD_DIR:-build-fuzz}
# A build configured with COMMFIT_FUZZ already (tools/test.sh's, which serves the tests too) is
# used as it is; otherwise the directory gets a build of the fuzz targets alone.
if ! grep -q '^COMMFIT_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMFIT_FUZZ=ON \
    -DCOMMFIT_WITH_MPI=OFF -DCOMMFIT_BUILD_TESTS=OFF -DCOMMFIT_BUILD_BENCH=OFF > /dev/null
fi
exe=${COMMFIT_EXE:-}
targets=(fuzz_matrix_json fuzz_matrix_market fuzz_plan_json fuzz_plan_binary fuzz_verify fuzz_msh fuzz_mtx_pattern fuzz_topology)
[ -n "$exe" ] || targets+=(commfit)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
exe=$(realpath "${exe:-$build/commfit}")
status=0
started=()
# Starts a target in the background (at most nproc at once); finish() waits and reports.
run() {
  local target=$1; shift
  # COMMFIT_FUZZ_ONLY="fuzz_msh fuzz_verify": run only these targets (long runs of a few).
  [[ -z ${COMMFIT_FUZZ_ONLY:-} || " $COMMFIT_FUZZ_ONLY " == *" $target "* ]] || return 0
  local corpus="$build/corpus-$target" artifacts="$build/artifacts-$target/"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  cp "$@" "$corpus"/
  echo "== $target ${limit[*]}"
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  ("$build/tests/fuzz/$target" "${limit[@]}" -max_len=65536 -rss_limit_mb=1024 -timeout=5 -artifact_prefix="$artifacts" \
    -print_final_stats=1 "$corpus" > "$build/$target.log" 2>&1 || true) &
  started+=("$target")
}
finish() {
  wait
  local target
  for target in "${started[@]}"; do
    echo "== $target: $(grep -E "^stat::number_of_executed_units|^SUMMARY" "$build/$target.log" | tr '\n' ' ')"
    if [ -n "$(ls -A "$build/artifacts-$target/")" ]; then
      echo "fuzz: $target found failing inputs in $build/artifacts-$target/ (log: $build/$target.log)" >&2
      status=1
    fi
  done
}
# fuzz_matrix_json parses every input five ways (tests/fuzz/fuzz_matrix_json.cpp): the bounded CI
# run gives it half the count.
json_limit=("${limit[@]}")
[[ "${1:-}" == "--runs" ]] && json_limit=(-runs="$(( $2 / 2 ))" -seed=1)
saved=("${limit[@]}"); limit=("${json_limit[@]}")
run fuzz_matrix_json tests/fixtures/matrix/good/*.json tests/fixtures/matrix/bad/*.json examples/*.json
limit=("${saved[@]}")
run fuzz_matrix_market tests/fixtures/mtx/good/*.mtx tests/fixtures/mtx/bad/*.mtx examples/*.mtx
run fuzz_plan_json tests/fixtures/plan/good/*.json tests/fixtures/plan/bad/*.json
run fuzz_msh tests/fixtures/extract/good/*.msh tests/fixtures/extract/bad/*.msh
# fuzz_mtx_pattern: the first two bytes of an input are the partition's vertex and part counts.
mkdir -p "$build/seeds-part"
for f in tests/fixtures/extract/*/*.part; do printf '\x05\x00' | cat - "$f" > "$build/seeds-part/$(basename "$f")"; done
run fuzz_mtx_pattern tests/fixtures/extract/good/*.mtx tests/fixtures/extract/bad/*.mtx "$build"/seeds-part/*.part
# fuzz_topology: the first byte chooses the reader (0 spec, 1 JSON, 2 node map file).
mkdir -p "$build/seeds-topology"
i=0
for t in 'full' 'torus:4x4+node2' 'fattree:2/4,4/1,2/1,1+map:0*3,5,2' 'full+map:7,7,3' 'dragonfly:2,1;1,1;2,1;2+node3'; do
  i=$((i + 1)); printf '\x00%s' "$t" > "$build/seeds-topology/spec$i"
done
printf '\x01%s' '{"kind":"torus","dims":[4],"node_map":[3,0,3,3]}' > "$build/seeds-topology/json1"
printf '\x02%s' $'# hosts\ncn1\ncn2 cn1\ncn2\n' > "$build/seeds-topology/map1"
printf '\x02%s' $'0 1 0 1 2\n' > "$build/seeds-topology/map2"
run fuzz_topology "$build"/seeds-topology/*
# Seeds of the binary reader and the verifier: plans of small matrices, several strategies.
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds/cfp" "$seeds/verify"
n=0
for m in tests/fixtures/matrix/good/sparse_small.json tests/fixtures/matrix/good/with_memory.json \
         tests/fixtures/matrix/good/self_messages.json examples/transport_fig1.json examples/sample_sort_8.json; do
  for s in direct two-stage async memory; do
    n=$((n + 1))
    mem=(); [ "$s" = memory ] && mem=(--memory 100000)
    "$exe" plan "$m" --strategy "$s" "${mem[@]}" -q -o "$seeds/p$n.plan" 2>/dev/null || continue
    "$exe" convert "$seeds/p$n.plan" "$seeds/cfp/p$n.cfp" > /dev/null
    # The verifier's input: matrix ==== manifest ==== rank files (tests/fuzz/fuzz_verify.cpp).
    { cat "$m"; for f in "$seeds/p$n.plan"/manifest.json "$seeds/p$n.plan"/rank-*.json; do printf '\n====\n'; cat "$f"; done; } \
      > "$seeds/verify/p$n.txt"
  done
done
# These two write a file or read a whole plan per input: the bounded CI run gives the binary
# reader (about 800 inputs/s under ASan since its version 3) a fifth of the count and the verifier
# (about 150 a second on a busy machine) a twentieth.
[[ "${1:-}" == "--runs" ]] && limit=(-runs="$(( $2 / 5 ))" -seed=1)
run fuzz_plan_binary tests/fixtures/plandir/good.cfp tests/fixtures/plandir/bad_binary/*.cfp "$seeds"/cfp/*.cfp
[[ "${1:-}" == "--runs" ]] && limit=(-runs="$(( $2 / 20 ))" -seed=1)
run fuzz_verify "$seeds"/verify/*.txt
finish
[ "$status" -eq 0 ] && echo "fuzz: every target ran clean (${asked[*]}; see above for the targets given less)"
exit "$status"
