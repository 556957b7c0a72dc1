#!/usr/bin/env python3
"""auto planned with calibrated machine files against the best method of a full sweep
(docs/SMPI.md "Planning with the calibrated files"):

   machine_rows.py FULL/smpi_raw.csv MACHINE/smpi_raw.csv

FULL is a run.py sweep with the given figures (every method); MACHINE a run.py sweep of the same
rows with --machine DIR --only-auto. Prints, per row, auto's choice and simulated time with the
given figures and with the machine file, the best method of FULL and machine / best; exits 1 when
a row of MACHINE has no row in FULL.
"""
import csv
import sys


def key(r):
    return (r["network"], r["platform"], r["pattern"], int(r["bytes"]))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    best, given = {}, {}
    for r in csv.DictReader(open(sys.argv[1])):
        if not r["sim_s"] or r["method"].startswith("LB_"):   # bounds (LB_inj, LB_link, LB_bound), not methods
            continue
        t = float(r["sim_s"])
        if key(r) not in best or t < best[key(r)][0]:
            best[key(r)] = (t, r["method"])
        if r["method"].startswith("commfit:auto"):
            given[key(r)] = (t, r["method"][len("commfit:"):])
    print("| model | platform | pattern | bytes | auto, given figures | µs | auto, machine file | µs | best of the sweep | µs | machine / best |")
    print("|---|---|---|---:|---|---:|---|---:|---|---:|---:|")
    worst, missing = 0.0, 0
    for r in csv.DictReader(open(sys.argv[2])):
        if not r["method"].startswith("commfit:auto") or not r["sim_s"]:
            continue
        k, t = key(r), float(r["sim_s"])
        if k not in best or k not in given:
            print("machine_rows.py: %s: no row in %s" % (" ".join(map(str, k)), sys.argv[1]), file=sys.stderr)
            missing += 1
            continue
        (bt, bm), (gt, gm) = best[k], given[k]
        worst = max(worst, t / bt)
        print("| %s | %s | %s | %d | %s | %.1f | %s | %.1f | %s | %.1f | %.3f |" % (
            k + (gm, gt * 1e6, r["method"][len("commfit:"):], t * 1e6, bm.replace("commfit:", ""), bt * 1e6, t / bt)))
    print("\nlargest machine / best: %.3f" % worst)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
