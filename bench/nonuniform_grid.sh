#!/bin/bash
# Ranka-Wang §7.2 test set 1 over its whole grid: the quantised candidate's estimate/LB for
# d = 4, 8, 16, 32, 48, p = 256 and 1024, msg_unit 256 and 2048 B, seeds 1-3 (docs/PERFORMANCE.md
# "Schedule quality"). For each cell it prints the three ratios and their median, and with
# --bound also bench/phase_bound.py's lower bound on any direct schedule (the least over
# P = h .. h + 3 phases; more phases only add tau).
#   bench/nonuniform_grid.sh [--bound] [BUILD_DIR]
set -euo pipefail
bound=0
if [[ "${1:-}" == "--bound" ]]; then bound=1; shift; fi
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '| unit B | p | d | seeds 1-3 | median |%s\n' "$([[ $bound == 1 ]] && echo ' bound median |')"
printf '|---|---|---|---|---|%s\n' "$([[ $bound == 1 ]] && echo '---|')"
for unit in 256 2048; do
  for p in 256 1024; do
    for d in 4 8 16 32 48; do
      ratios=() bounds=()
      for s in 1 2 3; do
        f=$work/m.json
        "$build/commfit" gen nonuniform -n "$p" -d "$d" --unit "$unit" --seed "$s" -o "$f" > /dev/null
        ratios+=("$("$build/commfit" plan --strategy direct --algorithm quantised "$f" -o "$work/p.plan" 2>&1 |
          grep -o 'estimate/LB [0-9.]*' | cut -d' ' -f2)")
        if [[ $bound == 1 ]]; then
          bounds+=("$(python3 "$here/phase_bound.py" "$f" --extra 3 --grid 400 | awk 'NR > 2 { if (m == "" || $3 < m) m = $3 } END { print m }')")
        fi
      done
      median=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
      row="| $unit | $p | $d | ${ratios[*]} | $median |"
      if [[ $bound == 1 ]]; then row="$row $(printf '%s\n' "${bounds[@]}" | sort -n | sed -n 2p) |"; fi
      echo "$row"
    done
  done
done
