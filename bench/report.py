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
if os.path.exists(raw_path):
    groups = OrderedDict()
    for r in csv.DictReader(open(raw_path)):
        key = (r["platform"], r["pattern"], r["bytes"])
        g = groups.setdefault(key, {"row": r, "m": OrderedDict(), "notes": []})
        v = fnum(r["sim_s"])
        if v is not None:
            g["m"][r["method"]] = v
        elif r["note"]:
            g["notes"].append("%s: %s" % (r["method"], r["note"]))
        if r["check"] == "WRONG":
            g["notes"].append("%s delivered WRONG data" % r["method"])
    summ = []
    for (plat, pat, size), g in groups.items():
        m = g["m"]
        auto = next((v for k, v in m.items() if k.startswith("commfit:auto")), None)
        auto_name = next((k for k in m if k.startswith("commfit:auto")), "")
        direct = next((v for k, v in m.items() if k.startswith("commfit:direct")), None)
        base = {k: v for k, v in m.items() if k == "AC" or k.startswith("alltoallv:") or k == "neighbor_alltoallv"}
        best_name = min(base, key=base.get) if base else ""
        best = base.get(best_name)
        a2a = {k: v for k, v in base.items() if k.startswith("alltoallv:")}
        best_a2a_name = min(a2a, key=a2a.get) if a2a else ""
        dflt = m.get("alltoallv:default")
        summ.append(OrderedDict([
            ("platform", plat), ("ranks", g["row"]["ranks"]), ("topology", g["row"]["topology"]), ("pattern", pat),
            ("bytes", size), ("messages", g["row"]["messages"]), ("h", g["row"]["h"]),
            ("auto_choice", auto_name.split("(")[-1].rstrip(")") if "(" in auto_name else ""),
            ("commfit_auto_s", auto), ("commfit_direct_s", direct), ("AC_s", m.get("AC")),
            ("neighbor_s", m.get("neighbor_alltoallv")), ("alltoallv_default_s", dflt),
            ("best_alltoallv", best_a2a_name.replace("alltoallv:", "")), ("best_alltoallv_s", a2a.get(best_a2a_name)),
            ("best_baseline", best_name), ("best_baseline_s", best),
            ("ratio_auto_best", auto / best if auto and best else None),
            ("speedup_vs_default", dflt / auto if auto and dflt else None),
            ("LB_inj_s", m.get("LB_inj")), ("LB_link_s", m.get("LB_link")),
            ("auto_over_LB_link", auto / m["LB_link"] if auto and m.get("LB_link") else None),
            ("notes", "; ".join(g["notes"]))]))
    with open(os.path.join(out, "smpi_summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(summ[0].keys()) if summ else [])
        for s in summ:
            w.writerow(["" if v is None else ("%.6g" % v if isinstance(v, float) else v) for v in s.values()])
    md += ["## Simulated clusters (SMPI)", "",
           "Times in simulated microseconds (last rank's finish after an aligned start). `ratio` = commfit auto / best "
           "baseline (≤ 1.00 meets the aim); `vs default` = MPI_Alltoallv default (basic linear) / commfit auto.", "",
           "| platform | pattern | bytes | msgs | h | auto chose | commfit auto | commfit direct | AC | neighbor | alltoallv default | best alltoallv | best baseline | ratio | vs default | LB_inj | LB_link | notes |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|"]
    for s in summ:
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s %s | %s %s | %s | %s | %s | %s | %s |" % (
            s["platform"], s["pattern"], s["bytes"], s["messages"], s["h"], s["auto_choice"], us(s["commfit_auto_s"]),
            us(s["commfit_direct_s"]), us(s["AC_s"]), us(s["neighbor_s"]), us(s["alltoallv_default_s"]),
            s["best_alltoallv"], us(s["best_alltoallv_s"]), s["best_baseline"].replace("alltoallv:", "a2av:"),
            us(s["best_baseline_s"]), rat(s["ratio_auto_best"]), rat(s["speedup_vs_default"]), us(s["LB_inj_s"]),
            us(s["LB_link_s"]), s["notes"]))
    md.append("")
    for plat in OrderedDict((s["platform"], 1) for s in summ):
        rows = [("%s %s B" % (s["pattern"], s["bytes"]), s["ratio_auto_best"]) for s in summ if s["platform"] == plat]
        bar_svg(os.path.join(out, "smpi_ratio_%s.svg" % plat), "%s: commfit auto / best baseline (simulated time)" % plat, rows)
        rows = [("%s %s B" % (s["pattern"], s["bytes"]), s["speedup_vs_default"]) for s in summ if s["platform"] == plat]
        bar_svg(os.path.join(out, "smpi_vs_default_%s.svg" % plat), "%s: MPI_Alltoallv default / commfit auto" % plat,
                rows, ref=2.0, xlabel="speed-up")
        md.append("![%s](smpi_ratio_%s.svg) ![%s](smpi_vs_default_%s.svg)" % (plat, plat, plat, plat))
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
