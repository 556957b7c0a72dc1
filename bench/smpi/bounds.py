#!/usr/bin/env python3
"""The bound of every row of an SMPI sweep set (docs/FORMAT.md section 5.2), without running SMPI.

   bounds.py BUILD WORK [--set full|nodes|quick|smoke|1024] [--networks flow,ib] [--platforms P ...]

For each row run.py would run, the same matrix (BUILD/bench/smpi/bench_smpi_patterns, kept in
WORK) on the same machine (platforms.py's topology, run.py's PLAN_COST and PLAN_NETWORK) through
`commfit bound --json`. Prints one CSV line per row: network, platform, pattern, bytes, the direct
bound (plans that send every byte directly: AC, MPI_Alltoallv, direct, async, bounded, throttled)
and its term, the relaying bound (every plan, node and two-stage plans included) and its term, in
seconds. run.py records the bound of auto's own plan beside every row it runs (LB_bound).
"""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the sweep's sets and figures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("work")
    ap.add_argument("--set", default="full", choices=["smoke", "quick", "full", "nodes", "1024"])
    ap.add_argument("--networks", default="flow,ib")
    ap.add_argument("--platforms", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    commfit = os.path.join(a.build, "commfit")
    gen = os.path.join(a.build, "bench", "smpi", "bench_smpi_patterns")
    sweep = [x for x in run.plan_of(a.set) if not a.platforms or x[0] in a.platforms]
    topo = {}
    out = subprocess.run([sys.executable, os.path.join(HERE, "platforms.py"), a.work] + sorted({x[0] for x in sweep}),
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        name, t = line.split(" ", 1)
        topo[name] = t
    w = csv.writer(sys.stdout)
    w.writerow(["network", "platform", "pattern", "bytes", "direct_s", "direct_term", "relay_s", "relay_term"])
    for net in a.networks.split(","):
        for plat, pats, _ in sweep:
            p = run.ranks_of(plat)
            for kind, size in pats:
                mat = os.path.join(a.work, "%s-%d-%d.json" % (kind, p, size))
                if not os.path.exists(mat):
                    subprocess.run([gen, kind, str(p), str(size), mat], check=True)
                got = subprocess.run([commfit, "bound", "--json", mat, "--topology", topo[plat]] + run.PLAN_COST + run.PLAN_NETWORK[net],
                                     check=True, stdout=subprocess.PIPE, text=True).stdout
                b = json.loads(got)["bound"]
                w.writerow([net, plat, kind, size, "%.6g" % b["direct_s"], b["direct_term"], "%.6g" % b["relay_s"], b["relay_term"]])
                sys.stdout.flush()


if __name__ == "__main__":
    main()
