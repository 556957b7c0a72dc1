#!/usr/bin/env python3
"""The SMPI sweep (docs/PERFORMANCE.md "Simulated clusters"): for every network model x platform x
pattern, plan with `commfit plan --network MODEL` on the matching --topology (auto, direct and
bounded/k for every k auto considers, and async for the estimate of AC), then run the SMPI driver
under the same SimGrid model: once with AC, AC throttled to 4 and 16 outstanding requests and the
commfit plans (plus the lower bounds), then once per alltoallv algorithm. Writes OUT/smpi_raw.csv:
one line per method run, with the planner's estimate beside the simulated time.

   run.py --out DIR --build BUILD --driver SMPI_DRIVER --set quick|full|smoke|nodes|1024 [--timeout S]
          [--networks flow,ib] [--platforms NAME...] [--mpi-advance SMPI_MPI_ADVANCE]
          [--machine DIR] [--only-auto]

--machine DIR plans with the machine files commfit-calibrate measured on the same platforms and
models (bench/smpi/calibrate.sh writes DIR/PLATFORM-MODEL.json) in place of the given figures
(PLAN_COST, PLAN_NETWORK); the topology is still given. --only-auto plans and runs auto alone (no
baselines, no alltoallv), with its bound: with --machine its simulated time is then compared with a
full sweep's best method; the set `1024` (the fat tree and the dragonfly at 1024 ranks) is run so,
where AC alone can take longer than the time limit.

The set `nodes` (docs/PERFORMANCE.md "Several ranks per node") puts N ranks on each host
(platforms.py KIND-PxN) and runs AC, auto and the node strategy with two and three steps.
--mpi-advance runs the MPI Advance peer (bench/smpi/build_mpi_advance.sh builds it; docs/SMPI.md)
on every pattern after commfit's methods, under the same SimGrid options; without that binary the
peer is skipped with a message.

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

# The planner's network model for these platforms: tau = 2 us (1 us of route latency on a fat tree +
# 0.5 us send and 0.5 us receive overhead), bandwidth = one link, 12.5 GB/s, 0.25 us per link of a
# route (platforms.py), links shared as smpirun's models share them (network/weight-S 8775: a flow's
# share in proportion to 1 / (route latency + 8775 B x sum of 1 / link bandwidth)); under IB also
# SimGrid's TCP window (NETWORK_CFG).
PLAN_COST = ["--tau", "2e-6", "--bandwidth", "1.25e10", "--link-latency", "2.5e-7", "--rtt-weight", "8775"]
PLAN_NETWORK = {"flow": ["--network", "flow"], "ib": ["--network", "ib", "--window", "25000"]}

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

# The two network models (docs/SMPI.md): SimGrid's default flow model (max-min sharing), and its
# InfiniBand model (network_ib: Vienne's penalties for a node's concurrent flows) with SimGrid's
# example factors and a TCP window bound of one link's bandwidth over a 1 us route (with the
# default TCP-gamma the bound is ~100x a link and the penalties never bite).
NETWORK_CFG = {
    "flow": [],
    "ib": ["--cfg=network/model:IB", "--cfg=smpi/IB-penalty-factors:0.965;0.925;1.35", "--cfg=network/TCP-gamma:25000"],
}

# The plans: auto, and the candidates the network model rewards (direct, bounded/k); async is
# planned for its estimate only (the driver's AC is the same exchange: same simulated time).
BOUNDED = ["2", "4", "8", "16", "32"]
WINDOWS = ["4", "8", "16", "32"]
PLANS = [("auto", ["--strategy", "auto"]), ("direct", ["--strategy", "direct"])] + \
        [("bounded/" + k, ["--strategy", "bounded", "--concurrency", k]) for k in BOUNDED] + \
        [("throttled/" + k, ["--strategy", "throttled", "--max-outstanding", k]) for k in WINDOWS] + \
        [("async", ["--strategy", "async"])]

# Alltoallv algorithms of SMPI 3.32. Only the distinct implementations run (docs/SMPI.md: ompi =
# pair at p <= 256, mpich = bruck, mvapich2 = ring = pair when p is a power of two, impi = basic
# linear + a one-time setup, default = ompi_basic_linear; every name was run at 64
# ranks, ALGS_ALL, to find which are the same code). At 1024 ranks only the default runs, on one pattern: each alltoallv sends
# p - 1 = 1023 messages per rank, zero-byte ones included (10^6 simulated messages, 14 minutes of
# wall time per run here).
ALGS_ALL = ["default", "ompi", "mpich", "mvapich2", "impi", "pair", "ring", "bruck", "ompi_basic_linear"]
ALGS_DISTINCT = ["default", "pair", "bruck"]

# The set `nodes`: the plans (node/3 and node/2 are what auto chooses among there, with the rest of
# its field; async for the estimate of AC).
NODE_PLANS = [("auto", ["--strategy", "auto"]), ("node/3", ["--strategy", "node", "--steps", "3"]),
              ("node/2", ["--strategy", "node", "--steps", "2"]), ("async", ["--strategy", "async"])]

SMALL, MEDIUM, LARGE = 1024, 16384, 262144
HOT = [("moe", MEDIUM), ("moe", LARGE), ("samplesort", LARGE)]   # hot receivers
LONG_TIMEOUT = 1800   # seconds of wall time for an MPI_Alltoallv at 1024 ranks and any 4096-rank run


def plan_of(which):
    """[(platform, [(kind, bytes)], [alltoallv algorithms])] of a set."""
    if which == "smoke":
        return [("fattree-16", [("uniform4", SMALL), ("moe", LARGE)], ["default", "pair"])]
    if which == "nodes":
        # Several ranks per host, 64 and 128 ranks: dense 256 B (a uniform all-to-all, which MPI
        # Advance's node-aware MPIL_Alltoall also takes), uniform d = 64 at 1 KiB (128 ranks only:
        # d < p), MoE dispatch at 16 KiB; SMPI's distinct MPI_Alltoallv algorithms on each.
        dense, u64, moe = ("dense", 256), ("uniform64", SMALL), ("moe", MEDIUM)
        return [("fattree-16x4", [dense, moe], ALGS_DISTINCT), ("fattree-4x16", [dense, moe], ALGS_DISTINCT),
                ("fattree-16x8", [dense, u64, moe], ALGS_DISTINCT), ("fattree-8x16", [dense, u64, moe], ALGS_DISTINCT)]
    if which == "1024":
        # 1024 ranks on the fat tree and the dragonfly: uniform d = 16 at 1 KiB, the 27-point
        # stencil and MoE dispatch at 16 KiB (no MPI_Alltoallv: p - 1 messages per rank).
        pats = [("uniform16", SMALL), ("stencil27", MEDIUM), ("moe", MEDIUM)]
        return [("fattree-1024", pats, []), ("dragonfly-1024", pats, [])]
    if which == "quick":
        pats = [("uniform4", SMALL), ("stencil27", MEDIUM), ("moe", LARGE)]
        return [("fattree-64", pats, ["default", "pair"]), ("torus-64", pats[1:], ["default"])]
    # The full set: every row under both models (about an hour of this shared 2-core machine).
    # Hot receivers (MoE dispatch, a skewed sample sort) and 256 KiB rows at 64 and 256 ranks; at
    # 1024 ranks AC and the commfit plans on three rows (MPI_Alltoallv there: p - 1 messages per
    # rank, 14 minutes of wall time per run, so only the default on one row).
    few = [("uniform4", SMALL), ("stencil27", MEDIUM), ("moe", LARGE)]
    return [("fattree-64", [("uniform4", SMALL), ("stencil27", MEDIUM), ("uniform16", LARGE)] + HOT, ALGS_DISTINCT),
            ("torus-64", [("stencil27", MEDIUM), ("uniform16", LARGE)] + HOT, ["default", "pair"]),
            ("fattree-256", [("uniform4", SMALL), ("uniform16", MEDIUM), ("stencil27", MEDIUM)] + HOT, ["default", "pair"]),
            ("torus-256", few, ["default"]), ("tapered-256", few, ["default"]), ("dragonfly-256", few, ["default"]),
            ("fattree-1024", [("uniform16", SMALL)], ["default"]), ("fattree-1024", [("stencil27", MEDIUM), ("moe", MEDIUM)], [])]


def ranks_of(platform):
    """The ranks of KIND-P or KIND-PxN (platforms.py)."""
    hosts, _, per = platform.rsplit("-", 1)[1].partition("x")
    return int(hosts) * int(per or 1)


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
    ap.add_argument("--set", choices=["smoke", "quick", "full", "nodes", "1024"], default="quick")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--platforms", nargs="*")
    ap.add_argument("--patterns", nargs="*", help="only these patterns of the set (uniform4, stencil27, moe, ...)")
    ap.add_argument("--networks", default="flow,ib", help="network models to run, comma-separated (flow, ib)")
    ap.add_argument("--mpi-advance", metavar="SMPI_MPI_ADVANCE", help="the MPI Advance peer's driver (build_mpi_advance.sh)")
    ap.add_argument("--machine", metavar="DIR", help="plan with DIR/PLATFORM-MODEL.json (calibrate.sh) in place of the given figures")
    ap.add_argument("--only-auto", action="store_true", help="plan and run auto alone, with its bound")
    a = ap.parse_args()
    if a.mpi_advance and not os.path.isfile(a.mpi_advance):
        print("run.py: %s absent (bench/smpi/build_mpi_advance.sh builds it from a checkout of "
              "mpi-advance/locality_aware): MPI Advance peer skipped" % a.mpi_advance, flush=True)
        a.mpi_advance = None
    plan_list = NODE_PLANS if a.set == "nodes" else PLANS
    exec_methods = "ac,exec" if a.set == "nodes" else "ac,ac4,ac16,exec"
    if a.only_auto:
        plan_list, exec_methods = [p for p in plan_list if p[0] == "auto"], "exec"
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
    w.writerow(["network", "platform", "ranks", "topology", "pattern", "bytes", "messages", "h", "method", "sim_s", "estimate_s",
                "check", "wall_s", "note"])
    failures = 0
    for net in a.networks.split(","):
        if net not in NETWORK_CFG:
            sys.exit("run.py: unknown network %s (known: %s)" % (net, ", ".join(NETWORK_CFG)))
        for plat, pats, algs in sweep:
            p = ranks_of(plat)
            xml, hosts = os.path.join(work, plat + ".xml"), os.path.join(work, plat + ".hosts")
            cost = PLAN_COST + PLAN_NETWORK[net]
            if a.only_auto:
                algs = []
            if a.machine:
                machine = os.path.join(a.machine, "%s-%s.json" % (plat, net))
                if not os.path.isfile(machine):
                    sys.exit("run.py: %s absent (bench/smpi/calibrate.sh BUILD %s %s writes it)" % (machine, a.machine, plat))
                cost = ["--machine", machine]
            for kind, size in pats:
                if a.patterns and kind not in a.patterns:
                    continue
                tag = "%s-%s-%s-%d" % (net, plat, kind, size)
                mat = os.path.join(work, "%s-%d-%d.json" % (kind, p, size))
                if not os.path.exists(mat):
                    subprocess.run([gen, kind, str(p), str(size), mat], check=True)
                st = subprocess.run([commfit, "stats", mat], stdout=subprocess.PIPE, text=True).stdout
                msgs = re.search(r"messages\D*(\d+)", st)
                hh = re.search(r"\bh\D*(\d+)", st)
                msgs = msgs.group(1) if msgs else ""
                hh = hh.group(1) if hh else ""
                row = lambda method, sim="", est="", check="", wall="", note="": w.writerow(
                    [net, plat, p, topo[plat], kind, size, msgs, hh, method, sim, est, check, wall, note])
                plans, estimate = [], {}
                for name, args in plan_list:
                    pl = os.path.join(work, "%s-%s.cfp" % (tag, name.replace("/", "")))
                    rc, pout, _ = run([commfit, "plan", mat, "--topology", topo[plat]] + args + cost + ["-o", pl], 900, log)
                    if rc != 0:
                        row("commfit:" + name, note="plan failed")
                        failures += 1
                        continue
                    est = re.search(r"estimate (\S+) s", pout)
                    estimate[name] = est.group(1) if est else ""
                    # The bound of auto's plan (docs/FORMAT.md section 5.2), and the term that sets it.
                    bound = re.search(r"bound (\S+) s \((\S+)\)", pout)
                    if name == "auto" and bound:
                        row("LB_bound", bound.group(1), note=bound.group(2))
                    chosen = re.search(r"auto chose (\S+)", pout)
                    if name != "async":
                        plans.append(("%s(%s)" % (name, chosen.group(1)) if chosen else name, pl, estimate[name]))
                base = ["smpirun", "-np", str(p), "-platform", xml, "-hostfile", hosts, "-no-privatize"] + SMPI_CFG + NETWORK_CFG[net]
                if not algs and a.set != "nodes" and not a.only_auto:
                    row("alltoallv:*", note="not run at %d ranks: p-1 messages per rank (see run.py)" % p)
                # First AC (plain and throttled) and the commfit plans (and the bounds), then one run
                # per alltoallv algorithm: a baseline that times out does not lose the others.
                # Last, the MPI Advance peer (its own driver, the same options and CSV lines).
                peer = [("mpia", [a.mpi_advance, "--matrix", mat, "--label", tag])] if a.mpi_advance else []
                if a.only_auto:
                    peer = []
                for k, alg in enumerate([None] + algs + peer):
                    methods = "alltoallv" if k > 0 else exec_methods
                    if isinstance(alg, tuple):
                        methods, cmd, alg = alg[0], base + alg[1], None
                    else:
                        cmd = base + (["--cfg=smpi/alltoallv:" + alg] if alg else []) + [
                            a.driver, "--matrix", mat, "--alg", alg or "none", "--label", tag, "--methods", methods]
                    if k == 0 and not a.only_auto:
                        cmd += ["--lb"]
                    if k == 0:
                        for name, pl, _ in plans:
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
                            row("LB_inj", f[2])
                            row("LB_link", f[3])
                            continue
                        late = float(f[2]) < 0   # a rank reached the aligned start late: no time
                        est = estimate.get("async", "") if f[1] == "AC" else next((e for n, _, e in plans if "commfit:" + n == f[1]), "")
                        row(f[1], "" if late else f[2], est, f[3], "%.1f" % wall, "start not aligned" if late else "")
                        if f[3] == "WRONG":
                            failures += 1
                    if rc is None and a.set == "smoke":
                        failures += 1
                    if rc == 0 and got == 0:
                        failures += 1
                    if rc is None:
                        row("alltoallv:" + alg if alg else methods, wall="%.1f" % wall, note="timeout after %ds" % timeout)
                    elif rc != 0:
                        failures += 1
                        row(methods, wall="%.1f" % wall, note="driver exit %d" % rc)
                    raw.flush()
                    print("%-44s %-18s %6.1fs rc=%s" % (tag, alg or methods, wall, rc), flush=True)
    raw.close()
    log.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
