#!/usr/bin/env python3
"""Turns the CSVs of bench/run_all.sh into OUT/summary.md, OUT/smpi_summary.csv and SVG plots.

   report.py OUT_DIR
Reads OUT/smpi_raw.csv, OUT/planner_speed.csv, OUT/bench_exec.csv (each optional).
"""
import csv
import math
import os
import sys
from collections import OrderedDict

out = sys.argv[1]
TIMEOUT = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0   # bench_planner_speed --timeout


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def us(v):
    return "-" if v is None else ("%.1f" % (v * 1e6) if v < 1e-2 else "%.0f" % (v * 1e6))


def rat(v):
    return "-" if v is None else "%.2f" % v


def bar_svg(path, title, rows, ref=1.0, xlabel="ratio"):
    """Horizontal bars: rows = [(label, value or None)]; a vertical line at ref."""
    h = 22 * len(rows) + 60
    vals = [v for _, v in rows if v is not None]
    vmax = max(vals + [ref]) * 1.1 if vals else 2
    W, L = 760, 300
    sx = lambda v: L + (W - L - 20) * v / vmax
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, h),
         '<text x="10" y="16" font-size="13">%s</text>' % title]
    for k, (lab, v) in enumerate(rows):
        y = 30 + 22 * k
        s.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (L - 6, y + 13, lab))
        if v is None:
            s.append('<text x="%d" y="%d" fill="#888">n/a</text>' % (L + 4, y + 13))
            continue
        col = "#2a7" if v <= ref * 1.0001 else "#c44"
        s.append('<rect x="%d" y="%d" width="%.1f" height="16" fill="%s"/>' % (L, y, max(sx(v) - L, 1), col))
        s.append('<text x="%.1f" y="%d">%.2f</text>' % (sx(v) + 4, y + 13, v))
    s.append('<line x1="%.1f" y1="26" x2="%.1f" y2="%d" stroke="#000" stroke-dasharray="4,3"/>' % (sx(ref), sx(ref), h - 24))
    s.append('<text x="%d" y="%d">%s (dashed line: %.1f)</text>' % (L, h - 8, xlabel, ref))
    s.append("</svg>")
    open(path, "w").write("\n".join(s))


md = ["# commfit benchmark results", ""]

# --- SMPI ---
raw_path = os.path.join(out, "smpi_raw.csv")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if n == 0 else (xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2]))


if os.path.exists(raw_path):
    groups = OrderedDict()
    for r in csv.DictReader(open(raw_path)):
        key = (r.get("network", "flow"), r["platform"], r["pattern"], r["bytes"])
        g = groups.setdefault(key, {"row": r, "m": OrderedDict(), "est": {}, "notes": []})
        v = fnum(r["sim_s"])
        if v is not None:
            g["m"][r["method"]] = v
            if r["method"] == "LB_bound":
                g["bound_term"] = r["note"]
            e = fnum(r.get("estimate_s"))
            if e is not None:
                g["est"][r["method"]] = e
        elif r["note"]:
            g["notes"].append("%s: %s" % (r["method"], r["note"]))
        if r["check"] == "WRONG":
            g["notes"].append("%s delivered WRONG data" % r["method"])
    summ = []
    errors = OrderedDict()   # (network, kind) -> [relative error]
    for (net, plat, pat, size), g in groups.items():
        m = g["m"]
        auto_name = next((k for k in m if k.startswith("commfit:auto")), "")
        auto = m.get(auto_name)
        direct = m.get("commfit:direct")
        ac = m.get("AC")
        measured = {k: v for k, v in m.items() if not k.startswith("LB_")}
        best_name = min(measured, key=measured.get) if measured else ""
        best = measured.get(best_name)
        bounded = {k: v for k, v in m.items() if k.startswith("commfit:bounded/")}
        bb_name = min(bounded, key=bounded.get) if bounded else ""
        throttled = {k: v for k, v in m.items() if k.startswith("commfit:throttled/")}
        bt_name = min(throttled, key=throttled.get) if throttled else ""
        a2a = {k: v for k, v in m.items() if k.startswith("alltoallv:")}
        best_a2a_name = min(a2a, key=a2a.get) if a2a else ""
        for k, e in g["est"].items():
            kind = ("AC" if k == "AC" else "auto" if k.startswith("commfit:auto") else
                    "throttled" if k.startswith("commfit:throttled/") else "phase plans")
            errors.setdefault((net, kind), []).append(abs(e - m[k]) / m[k])
        summ.append(OrderedDict([
            ("network", net), ("platform", plat), ("ranks", g["row"]["ranks"]), ("topology", g["row"]["topology"]), ("pattern", pat),
            ("bytes", size), ("messages", g["row"]["messages"]), ("h", g["row"]["h"]),
            ("auto_choice", auto_name.split("(")[-1].rstrip(")") if "(" in auto_name else ""),
            ("commfit_auto_s", auto), ("auto_estimate_s", g["est"].get(auto_name)), ("commfit_direct_s", direct), ("AC_s", ac),
            ("AC4_s", m.get("AC/4")), ("AC16_s", m.get("AC/16")),
            ("best_bounded", bb_name.replace("commfit:", "")), ("best_bounded_s", bounded.get(bb_name)),
            ("best_throttled", bt_name.replace("commfit:", "")), ("best_throttled_s", throttled.get(bt_name)),
            ("alltoallv_default_s", m.get("alltoallv:default")),
            ("best_alltoallv", best_a2a_name.replace("alltoallv:", "")), ("best_alltoallv_s", a2a.get(best_a2a_name)),
            ("best_method", best_name), ("best_s", best),
            ("ratio_auto_best", auto / best if auto and best else None),
            ("speedup_auto_vs_AC", ac / auto if auto and ac else None),
            ("LB_inj_s", m.get("LB_inj")), ("LB_link_s", m.get("LB_link")),
            ("bound_s", m.get("LB_bound")), ("bound_term", g.get("bound_term", "")),
            ("ratio_auto_bound", auto / m["LB_bound"] if auto and m.get("LB_bound") else None),
            ("notes", "; ".join(g["notes"]))]))
    with open(os.path.join(out, "smpi_summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(summ[0].keys()) if summ else [])
        for s_ in summ:
            w.writerow(["" if v is None else ("%.6g" % v if isinstance(v, float) else v) for v in s_.values()])
    md += ["## Simulated clusters (SMPI)", "",
           "Times in simulated microseconds (last rank's finish after an aligned start), per SimGrid network model. "
           "`ratio` = commfit auto / best measured method (every method of the row: AC, AC/4, AC/16, the commfit plans, "
           "the alltoallv algorithms); `vs AC` = AC / auto. `est` = the planner's estimate of auto's plan.", ""]
    for net in OrderedDict((s_["network"], 1) for s_ in summ):
        md += ["### network %s" % net, "",
               "| platform | pattern | bytes | msgs | h | auto chose | auto | est | AC | AC/4 | AC/16 | direct | best bounded | best throttled | best alltoallv | best | ratio | vs AC | LB_link | bound | auto/bound | notes |",
               "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---:|---:|---:|---|---:|---|"]
        for s_ in summ:
            if s_["network"] != net:
                continue
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s %s | %s %s | %s %s | %s %s | %s | %s | %s | %s | %s | %s |" % (
                s_["platform"], s_["pattern"], s_["bytes"], s_["messages"], s_["h"], s_["auto_choice"], us(s_["commfit_auto_s"]),
                us(s_["auto_estimate_s"]), us(s_["AC_s"]), us(s_["AC4_s"]), us(s_["AC16_s"]), us(s_["commfit_direct_s"]),
                s_["best_bounded"], us(s_["best_bounded_s"]), s_["best_throttled"], us(s_["best_throttled_s"]),
                s_["best_alltoallv"], us(s_["best_alltoallv_s"]),
                s_["best_method"].replace("alltoallv:", "a2av:").replace("commfit:", ""), us(s_["best_s"]),
                rat(s_["ratio_auto_best"]), rat(s_["speedup_auto_vs_AC"]), us(s_["LB_link_s"]),
                "%s (%s)" % (us(s_["bound_s"]), s_["bound_term"]) if s_["bound_term"] else us(s_["bound_s"]),
                rat(s_["ratio_auto_bound"]), s_["notes"]))
        rows_n = [s_ for s_ in summ if s_["network"] == net and s_["ratio_auto_best"]]
        within = sum(1 for s_ in rows_n if s_["ratio_auto_best"] <= 1.01)
        md += ["", "auto within 1 %% of the best measured method on %d of %d rows." % (within, len(rows_n))]
        md.append("")
    md += ["### Estimate against simulation", "",
           "|estimate − simulated| / simulated, over every row and method that has an estimate (AC: the async plan's).", "",
           "| network | plans | n | median | max |", "|---|---|---:|---:|---:|"]
    for (net, kind), errs in errors.items():
        md.append("| %s | %s | %d | %.1f %% | %.1f %% |" % (net, kind, len(errs), 100 * median(errs), 100 * max(errs)))
    md.append("")
    for net in OrderedDict((s_["network"], 1) for s_ in summ):
        for plat in OrderedDict((s_["platform"], 1) for s_ in summ if s_["network"] == net):
            rows = [("%s %s B" % (s_["pattern"], s_["bytes"]), s_["ratio_auto_best"]) for s_ in summ
                    if s_["platform"] == plat and s_["network"] == net]
            bar_svg(os.path.join(out, "smpi_ratio_%s_%s.svg" % (net, plat)), "%s, %s: commfit auto / best measured (simulated time)" % (plat, net), rows)
            md.append("![%s %s](smpi_ratio_%s_%s.svg)" % (plat, net, net, plat))
    md.append("")

# --- planner speed ---
ps_path = os.path.join(out, "planner_speed.csv")
if os.path.exists(ps_path):
    rows = OrderedDict()
    for r in csv.DictReader(open(ps_path)):
        rows.setdefault(r["case"], {"p": r["p"], "m": r["messages"], "h": r["h"]})[r["method"]] = r
    md += ["## Planner speed against Boost edge_coloring", "",
           "CPU seconds (the machine is shared: wall time includes waiting for a core); MB = growth of the "
           "measuring child's peak RSS. commfit = decompose_optimal (exactly h phases), plan = the whole "
           "`commfit plan` pipeline, boost = boost::edge_coloring incl. building its graph.", "",
           "| case | p | messages | h | commfit phases | commfit s | commfit MB | boost colours | boost s | boost MB | commfit plan s | plan MB | commfit / boost |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pts = []
    for case, g in rows.items():
        c, b, pl = g.get("commfit"), g.get("boost"), g.get("plan")
        t = lambda r: "-" if r is None or fnum(r["cpu_s"]) is None or fnum(r["cpu_s"]) < 0 else ("%.3g" % fnum(r["cpu_s"]))
        mb = lambda r: "-" if r is None or fnum(r["peak_mb"]) is None or fnum(r["peak_mb"]) < 0 else ("%.0f" % fnum(r["peak_mb"]))
        bt = "timeout" if b and b["timed_out"] == "1" else t(b)
        ratio = "-"
        if c and b and fnum(c["cpu_s"]) and fnum(b["cpu_s"]) and fnum(b["cpu_s"]) > 0:
            ratio = "%.3g" % (fnum(c["cpu_s"]) / fnum(b["cpu_s"]))
        elif b and b["timed_out"] == "1" and c and fnum(c["cpu_s"]):
            ratio = "< %.2g" % (fnum(c["cpu_s"]) / TIMEOUT)
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            case, g["p"], g["m"], g["h"], c["colours"] if c else "-", t(c), mb(c), b["colours"] if b and b["colours"] != "-1" else "-",
            bt, mb(b), t(pl), mb(pl), ratio))
        pts.append((case, ratio))
    md.append("")

# --- real MPI ---
be_path = os.path.join(out, "bench_exec.csv")
if os.path.exists(be_path):
    md += ["## Real MPI on this machine (bench_exec, Open MPI, -np 8)", "",
           "| case | bytes | method | median us | min us | / MPI_Alltoallv | / AC |", "|---|---:|---|---:|---:|---:|---:|"]
    for r in csv.DictReader(open(be_path)):
        md.append("| %s | %s | %s | %.1f | %.1f | %s | %s |" % (r["case"], r["bytes"], r["method"], float(r["median_s"]) * 1e6,
                                                               float(r["min_s"]) * 1e6, r["ratio_alltoallv"], r["ratio_ac"]))
    md.append("")

open(os.path.join(out, "summary.md"), "w").write("\n".join(md) + "\n")
print(os.path.join(out, "summary.md"))
