#!/usr/bin/env bash
# Rebuilds tests/fixtures/plandir/good.cfp and the damaged copies in bad_binary/ from the plan
# directory good/ (tests/fixtures/plandir/README.md), after a change of the binary format.
# Usage: tools/make_binary_fixtures.sh [path/to/commfit]
set -euo pipefail
commfit=$(realpath "${1:-build/commfit}")
cd "$(dirname "$0")/../tests/fixtures/plandir"
rm -f good.cfp
"$commfit" convert good good.cfp
python3 - <<'PY'
good = open("good.cfp", "rb").read()
slices_end = int.from_bytes(good[40:48], "little")   # version 3: the slices lie between the header and the index
def flip(at, mask):
    b = bytearray(good); b[at] ^= mask; return bytes(b)
cases = {
    "appended.cfp": good + b"appended bytes!!",
    "bad_magic.cfp": flip(7, 0x07),                 # CFITPLAN -> CFITPLAI
    "corrupted_header.cfp": flip(20, 0x01),         # the phase count, behind the header checksum
    "corrupted_slice.cfp": flip((256 + slices_end) // 2, 0xff),
    "empty.cfp": b"",
    "future_version.cfp": bytes(good[:8]) + bytes([good[8] + 1]) + good[9:],
    "old_version.cfp": bytes(good[:8]) + bytes([2]) + good[9:],   # a version 2 file, by its version field
    "truncated.cfp": good[:-100],
    "truncated_header.cfp": good[:200],
}
for name, data in cases.items():
    open("bad_binary/" + name, "wb").write(data)
PY
