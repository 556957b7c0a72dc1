#!/usr/bin/env bash
# Regenerates the outputs shown in examples/README.md (generated, never pasted by hand). Every
# console block between the markers
#   <!-- output -->
#   ```console
#   $ ./build/commfit stats examples/stencil2d_16.json
#   ...
#   ```
#   <!-- end output -->
# is rewritten: its `$ ` lines are the commands, run in order in one scratch directory (which has
# `examples/` and `tests/` of the repository and `./build/commfit`, so the shown paths are the
# real ones and plans written with -o never land in the tree), and everything after each command
# is replaced by what it printed (stdout and stderr). All blocks of the file share the directory,
# so a later block can read a plan an earlier one wrote. Outputs must not vary between runs: no
# timings, no absolute paths.
#
#   tools/update_example_outputs.sh [--check] [COMMFIT]
#
# COMMFIT defaults to build/commfit. With --check the file is left alone: the script exits 1 and
# prints a diff when the shown outputs differ from what the tool prints (tests/test_examples.cpp).
set -euo pipefail

check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commfit=${1:-$root/build/commfit}
[[ $commfit == /* ]] || commfit=$PWD/$commfit
if [[ ! -x $commfit ]]; then
  echo "update_example_outputs: no commfit at $commfit (build it, or give its path)" >&2
  exit 2
fi
readme=$root/examples/README.md

scratch=$(mktemp -d "${TMPDIR:-/tmp}/commfit-examples.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
work=$scratch/work
mkdir -p "$work/build"
ln -s "$root/examples" "$work/examples"
ln -s "$root/tests" "$work/tests"
ln -s "$commfit" "$work/build/commfit"

# Runs the commands of one block in $work, in one shell (so `echo $?` sees the previous command's
# status), and prints each as `$ CMD` followed by its output.
run_block() {
  local script=$scratch/block.sh k=0
  : > "$script"
  echo '__st=0' >> "$script"
  for cmd in "$@"; do
    printf 'printf "@@@ %d\\n"; (exit $__st); { %s\n} 2>&1; __st=$?\n' "$k" "$cmd" >> "$script"
    k=$((k + 1))
  done
  local out=$scratch/block.out
  (cd "$work" && bash "$script" > "$out" 2>&1) || true
  local cmds=("$@") line
  while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line =~ ^@@@\ ([0-9]+)$ ]]; then
      printf '$ %s\n' "${cmds[${BASH_REMATCH[1]}]}"
    else
      printf '%s\n' "$line"
    fi
  done < "$out"
}

new=$scratch/README.md
: > "$new"
state=text   # text | marker (after <!-- output -->) | block (inside its console fence) | done
cmds=()
lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  case $state in
    text)
      printf '%s\n' "$line" >> "$new"
      [[ $line == '<!-- output -->' ]] && state=marker
      ;;
    marker)
      if [[ $line != '```console' ]]; then
        echo "update_example_outputs: examples/README.md:$lineno: expected \`\`\`console after <!-- output -->" >&2
        exit 2
      fi
      printf '%s\n' "$line" >> "$new"
      cmds=()
      state=block
      ;;
    block)
      if [[ $line == '```' ]]; then
        if ((${#cmds[@]} == 0)); then
          echo "update_example_outputs: examples/README.md:$lineno: a generated block without a \`$ \` command" >&2
          exit 2
        fi
        run_block "${cmds[@]}" >> "$new"
        printf '%s\n' "$line" >> "$new"
        state=done
      elif [[ $line == '$ '* ]]; then
        cmds+=("${line#\$ }")
      fi
      ;;
    done)
      if [[ $line == '<!-- end output -->' ]]; then
        printf '%s\n' "$line" >> "$new"
        state=text
      elif [[ -n $line ]]; then
        echo "update_example_outputs: examples/README.md:$lineno: expected <!-- end output --> after the block" >&2
        exit 2
      fi
      ;;
  esac
done < "$readme"
if [[ $state != text ]]; then
  echo "update_example_outputs: examples/README.md: a generated block is not closed by <!-- end output -->" >&2
  exit 2
fi

if ((check)); then
  if ! diff -u --label "examples/README.md (shown)" --label "examples/README.md (printed now)" "$readme" "$new"; then
    echo "update_example_outputs: the outputs shown in examples/README.md differ from what commfit prints;" \
         "run tools/update_example_outputs.sh and review the diff" >&2
    exit 1
  fi
  exit 0
fi
cp "$new" "$readme"
