#!/usr/bin/env python3
"""The SMPI sweep (docs/PERFORMANCE.md "Simulated clusters"): for every platform x pattern, plan with
`commfit plan --strategy auto` (and `direct`) on the matching --topology, then run the SMPI driver:
once with AC, the commfit plans and MPI_Alltoallv's default algorithm
(plus the lower bounds), then once per other alltoallv algorithm. Writes OUT/smpi_raw.csv (one line
per method run) and OUT/smpi_summary.csv.

   run.py --out DIR --build BUILD --driver SMPI_DRIVER --set quick|full|smoke [--timeout S]

MPI_Neighbor_alltoallv is not run: SimGrid 3.32 aborts with "Not yet implemented" in
MPI_Dist_graph_create_adjacent and MPI_Neighbor_alltoallv. Every SimGrid option is in SMPI_CFG below; docs/PERFORMANCE.md explains each.
"""
import argparse
import csv
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The planner's cost model for these platforms: tau = 2 us (1 us of route latency on a fat tree +
# 0.5 us send and 0.5 us receive overhead), bandwidth = one link, 12.5 GB/s.
PLAN_COST = ["--tau", "2e-6", "--bandwidth", "1.25e10"]

SMPI_CFG = [
    "--cfg=smpi/lat-factor:0:1",            # no calibration factors: the platform's latency ...
    "--cfg=smpi/bw-factor:0:1",             # ... and bandwidth as written
    "--cfg=network/crosstraffic:0",         # acks do not load the reverse direction
    "--cfg=network/optim:Full",             # exact max-min solver (lazy gave results below LB_link)
    "--cfg=smpi/simulate-computation:no",   # local work (memcpy, plan bookkeeping) costs no simulated time
    "--cfg=smpi/host-speed:100Gf",
    "--cfg=smpi/os:0:5e-7:0",               # 0.5 us CPU per send (blocking) ...
    "--cfg=smpi/ois:0:5e-7:0",              # ... per Isend ...
    "--cfg=smpi/or:0:5e-7:0",               # ... per receive
    "--cfg=smpi/async-small-thresh:65536",  # eager limit of the modelled MPI: 64 KiB
    "--cfg=smpi/send-is-detached-thresh:65536",
    "--log=root.thres:critical",
]

# Alltoallv algorithms of SMPI 3.32. Every one of them runs at 64 ranks (ALGS_ALL); at 256 ranks
# only the three distinct implementations run: the others are the same code at these sizes
# (docs/SMPI.md, checked by the 64-rank rows): ompi = pair (p <= 256), mpich = bruck,
# mvapich2 = ring = pair (p a power of two), impi = basic linear + a one-time setup, default =
# ompi_basic_linear. At 1024 ranks only the default runs, on one pattern: each alltoallv sends
# p - 1 = 1023 messages per rank, zero-byte ones included (10^6 simulated messages, 14 minutes of
# wall time per run here). fattree-4096 runs AC and commfit only (uniform d = 16, 1 KiB).
ALGS_ALL = ["default", "ompi", "mpich", "mvapich2", "impi", "pair", "ring", "bruck", "ompi_basic_linear"]
ALGS_DISTINCT = ["default", "pair", "bruck"]

SMALL, MEDIUM, LARGE = 1024, 16384, 262144
LONG_TIMEOUT = 1800   # seconds of wall time for an MPI_Alltoallv at 1024 ranks and any 4096-rank run


def plan_of(which):
    """[(platform, [(kind, bytes)], [alltoallv algorithms])] of a set."""
    if which == "smoke":
        return [("fattree-16", [("uniform4", SMALL), ("stencil27", MEDIUM)], ["default", "pair"])]
    if which == "quick":
        pats = [("uniform4", SMALL), ("stencil27", MEDIUM), ("moe", MEDIUM)]
        return [("fattree-64", pats, ["default", "pair"]), ("torus-64", pats, ["default", "pair"])]
    # The full set is what fits in about 30 minutes of this (shared, 2-core) machine.
    big = [("uniform4", SMALL), ("uniform16", MEDIUM), ("stencil27", MEDIUM), ("moe", MEDIUM)]
    few = [("uniform4", SMALL), ("stencil27", MEDIUM)]
    at1024 = [("uniform16", SMALL), ("stencil27", MEDIUM)]
    return [("fattree-64", [("uniform4", SMALL), ("stencil27", MEDIUM)], ALGS_ALL),
            ("torus-64", [("uniform16", LARGE), ("moe", LARGE)], ALGS_DISTINCT),   # the large messages
            ("fattree-256", big, ALGS_DISTINCT), ("torus-256", few, ALGS_DISTINCT),
            ("tapered-256", few, ["default", "pair"]), ("dragonfly-256", few, ["default", "pair"]),
            # The one MPI_Alltoallv at 1024 ranks: the default on uniform d = 16 (10^6 simulated
            # messages: 863 s of wall time here, so its run gets LONG_TIMEOUT).
            ("fattree-1024", at1024[:1], ["default"]), ("fattree-1024", at1024[1:], []), ("tapered-1024", at1024[:1], []), ("torus-1024", at1024[:1], []),
            ("dragonfly-1024", at1024[:1], []), ("fattree-4096", at1024[:1], [])]


def run(cmd, timeout, log):
    """Runs cmd in its own process group (smpirun starts smpimain as a child: a timeout kills both)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        log.write("$ %s\n[%.1fs rc=%d]\n%s%s" % (" ".join(cmd), time.time() - t0, proc.returncode, out, err[-4000:]))
        return proc.returncode, out, time.time() - t0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        log.write("$ %s\n[timeout after %ds]\n%s" % (" ".join(cmd), timeout, out))
        return None, out, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--set", choices=["smoke", "quick", "full"], default="quick")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--platforms", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(a.out, "smpi_work")
    os.makedirs(work, exist_ok=True)
    commfit = os.path.join(a.build, "commfit")
    gen = os.path.join(a.build, "bench", "smpi", "bench_smpi_patterns")
    sweep = [x for x in plan_of(a.set) if not a.platforms or x[0] in a.platforms]
    plats = [x[0] for x in sweep]
    topo = {}
    out = subprocess.run([sys.executable, os.path.join(HERE, "platforms.py"), work] + plats, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        name, t = line.split(" ", 1)
        topo[name] = t
    raw_path = os.path.join(a.out, "smpi_raw.csv")
    log = open(os.path.join(a.out, "smpi.log"), "w")
    raw = open(raw_path, "w", newline="")
    w = csv.writer(raw)
    w.writerow(["platform", "ranks", "topology", "pattern", "bytes", "messages", "h", "method", "sim_s", "check", "wall_s", "note"])
    failures = 0
    for plat, pats, algs in sweep:
        p = int(plat.rsplit("-", 1)[1])
        xml, hosts = os.path.join(work, plat + ".xml"), os.path.join(work, plat + ".hosts")
        for kind, size in pats:
            tag = "%s-%s-%d" % (plat, kind, size)
            mat = os.path.join(work, "%s-%d-%d.json" % (kind, p, size))
            if not os.path.exists(mat):
                subprocess.run([gen, kind, str(p), str(size), mat], check=True)
            st = subprocess.run([commfit, "stats", mat], stdout=subprocess.PIPE, text=True).stdout
            msgs = re.search(r"messages\D*(\d+)", st)
            hh = re.search(r"\bh\D*(\d+)", st)
            msgs = msgs.group(1) if msgs else ""
            hh = hh.group(1) if hh else ""
            plans = []
            for strat in ("auto", "direct"):
                pl = os.path.join(work, "%s-%s.cfp" % (tag, strat))
                rc, pout, _ = run([commfit, "plan", mat, "--strategy", strat, "--topology", topo[plat]] + PLAN_COST +
                                  ["-o", pl], 600, log)
                if rc != 0:
                    w.writerow([plat, p, topo[plat], kind, size, msgs, hh, "commfit:" + strat, "", "", "", "plan failed"])
                    failures += 1
                    continue
                chosen = re.search(r"auto chose (\S+)", pout)
                plans.append(("%s(%s)" % (strat, chosen.group(1)) if chosen else strat, pl))
            base = ["smpirun", "-np", str(p), "-platform", xml, "-hostfile", hosts, "-no-privatize"] + SMPI_CFG
            if not algs:
                w.writerow([plat, p, topo[plat], kind, size, msgs, hh, "alltoallv:*", "", "", "",
                            "not run at %d ranks: p-1 messages per rank (see run.py)" % p])
            # First AC and the commfit plans (and the bounds), then one run per alltoallv algorithm:
            # a baseline that times out does not lose the others.
            for k, alg in enumerate([None] + algs):
                methods = "alltoallv" if k > 0 else "ac,exec"
                cmd = base + (["--cfg=smpi/alltoallv:" + alg] if alg else []) + [
                    a.driver, "--matrix", mat, "--alg", alg or "none", "--label", tag, "--methods", methods]
                if k == 0:
                    cmd += ["--lb"]
                    for name, pl in plans:
                        cmd += ["--plan", name + "=" + pl]
                # An alltoallv at 1024 ranks, and anything at 4096 (AC and commfit: 337 s), get
                # LONG_TIMEOUT.
                timeout = max(a.timeout, LONG_TIMEOUT) if (alg and p >= 1024) or p >= 4096 else a.timeout
                rc, dout, wall = run(cmd, timeout, log)
                got = 0
                for line in dout.splitlines():
                    f = line.split(",")
                    if len(f) < 4 or f[0] != tag:
                        continue
                    got += 1
                    if f[1] == "lb":
                        w.writerow([plat, p, topo[plat], kind, size, msgs, hh, "LB_inj", f[2], "", "", ""])
                        w.writerow([plat, p, topo[plat], kind, size, msgs, hh, "LB_link", f[3], "", "", ""])
                    else:
                        late = float(f[2]) < 0   # a rank reached the aligned start late: no time
                        w.writerow([plat, p, topo[plat], kind, size, msgs, hh, f[1], "" if late else f[2], f[3], "%.1f" % wall,
                                    "start not aligned" if late else ""])
                        if f[3] == "WRONG":
                            failures += 1
                if rc is None and a.set == "smoke":
                    failures += 1
                if rc == 0 and got == 0:
                    failures += 1
                if rc is None:
                    w.writerow([plat, p, topo[plat], kind, size, msgs, hh, "alltoallv:" + alg if alg else methods, "", "",
                                "%.1f" % wall, "timeout after %ds" % timeout])
                elif rc != 0:
                    failures += 1
                    w.writerow([plat, p, topo[plat], kind, size, msgs, hh, methods, "", "", "%.1f" % wall, "driver exit %d" % rc])
                raw.flush()
                print("%-40s %-18s %6.1fs rc=%s" % (tag, alg, wall, rc), flush=True)
    raw.close()
    log.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
