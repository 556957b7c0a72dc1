#!/usr/bin/env python3
"""Writes the counts file of bench/smpi/smpi_alltoallv_loop.c from a commfit matrix (docs/FORMAT.md,
"JSON"; sparse `messages` or `dense`): a line "P M", then one line "SRC DST BYTES" per nonzero
entry, in (src, dst) order.

   counts_of.py MATRIX.json COUNTS
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: counts_of.py MATRIX.json COUNTS")
    with open(sys.argv[1]) as f:
        m = json.load(f)
    if m.get("format") != "commfit-matrix":
        sys.exit("counts_of.py: %s: not a commfit matrix" % sys.argv[1])
    p = int(m["ranks"])
    if "messages" in m:
        entries = [(int(s), int(d), int(b)) for s, d, b in m["messages"]]
    else:
        entries = [(s, d, int(b)) for s, row in enumerate(m["dense"]) for d, b in enumerate(row)]
    entries = sorted(e for e in entries if e[2] > 0)
    with open(sys.argv[2], "w") as f:
        f.write("%d %d\n" % (p, len(entries)))
        f.writelines("%d %d %d\n" % e for e in entries)


if __name__ == "__main__":
    main()
