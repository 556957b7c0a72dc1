#!/usr/bin/env bash
# Regenerates the outputs shown in examples/README.md (generated, never pasted by hand). Every
# console block between the markers
#   <!-- output -->
#   ```console
#   $ ./build/commfit stats examples/stencil2d_16.json
#   ...
#   ```
#   <!-- end output -->
# is rewritten: its `$ ` lines are the commands, run in order in one shell in a scratch directory
# (which has `examples/` and `tests/` of the repository and `build/`, the build directory of
# COMMFIT, so the shown paths are the real ones and plans written with -o never land in the tree),
# and everything after each command is replaced by what it printed (stdout and stderr). All blocks
# of the file share the directory and the shell's variables, so a later block can read a plan an
# earlier one wrote. Outputs must not vary between runs: no timings, no absolute paths.
#
# Blocks marked `<!-- output (plain build) -->` build programs against the build's libraries and
# run them under mpirun (Open MPI, as root if need be, oversubscribed); they are run only when the
# build is not sanitized (COMMFIT_SANITIZE in its CMakeCache.txt), since a program linked with
# plain mpicc cannot link the instrumented libraries. In a sanitized build they are left as shown.
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
build=$(dirname "$commfit")
rmdir "$work/build"
ln -s "$build" "$work/build"
sanitized=0
grep -q '^COMMFIT_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && sanitized=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# Runs the commands of one block in $work, in the one shell of every block (so `echo $?` sees the
# previous command's status and `export` lasts), and prints each as `$ CMD` followed by its output.
run_block() {
  local script=$scratch/block.sh k=0
  : > "$script"
  echo '__st=0' >> "$script"
  for cmd in "$@"; do
    printf 'printf "@@@ %d\\n"; (exit $__st); { %s\n} 2>&1; __st=$?\n' "$k" "$cmd" >> "$script"
    k=$((k + 1))
  done
  local out=$scratch/block.out
  # The exported variables carry from block to block through $scratch/env.sh.
  (cd "$work" && bash -c 'source "$1" 2>/dev/null; source "$2"; declare -px > "$1.new"' _ "$scratch/env.sh" "$script" < /dev/null > "$out" 2>&1) || true
  if [[ -f $scratch/env.sh.new ]]; then mv "$scratch/env.sh.new" "$scratch/env.sh"; fi
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
      if [[ $line == '<!-- output -->' ]]; then
        state=marker keep=0
      elif [[ $line == '<!-- output (plain build) -->' ]]; then
        state=marker keep=$sanitized
      fi
      ;;
    marker)
      if [[ $line != '```console' ]]; then
        echo "update_example_outputs: examples/README.md:$lineno: expected \`\`\`console after <!-- output ... -->" >&2
        exit 2
      fi
      printf '%s\n' "$line" >> "$new"
      cmds=()
      shown=()
      state=block
      ;;
    block)
      if [[ $line == '```' ]]; then
        if ((${#cmds[@]} == 0)); then
          echo "update_example_outputs: examples/README.md:$lineno: a generated block without a \`$ \` command" >&2
          exit 2
        fi
        if ((keep)); then
          printf '%s\n' "${shown[@]}" >> "$new"
        else
          run_block "${cmds[@]}" >> "$new"
        fi
        printf '%s\n' "$line" >> "$new"
        state=done
      else
        shown+=("$line")
        [[ $line == '$ '* ]] && cmds+=("${line#\$ }")
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
