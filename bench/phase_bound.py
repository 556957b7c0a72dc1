#!/usr/bin/env python3
"""A lower bound on the synchronous cost of any P-phase direct schedule of a matrix, for P = h, h+1, ...
(docs/PERFORMANCE.md "Schedule quality"). Direct: every piece goes from its sender to its
receiver; a message may be cut into pieces, at most one piece per rank and phase.

   bench/phase_bound.py MATRIX.json [--tau 2e-6] [--bandwidth 1e10] [--extra 3] [--grid 600]

A P-phase schedule costs P tau + mu * sum_k m_k, m_k the largest piece of phase k. For any level
theta, the phases whose largest piece is >= theta are at least the pieces >= theta of any one
port (sender or receiver side), so sum_k m_k = integral over theta of #{k : m_k >= theta} >=
integral of max over ports of n_port(theta), where n_port(theta) is the fewest pieces >= theta
the port can have: it has P - d slots beyond one per message, and a message of s >= theta bytes
avoids a piece >= theta only by taking floor(s / theta) more slots (greedy, cheapest first).
n_port is non-increasing in theta, so the sum over a grid of theta values taken at each cell's
upper end is still a lower bound. With sum_k m_k >= t (the busiest port's bytes) as well:
  bound(P) = P tau + mu max(t, integral).
Ignoring which ranks meet in a phase is what makes it a bound and what makes it loose as P grows.
At P = h with every port at degree h it is the sorted-profile bound: sum over j of the largest
j-th largest message of any port.
"""
import argparse
import json


def ports_of(path):
    m = json.load(open(path))
    p = m["ranks"]
    out = [[] for _ in range(p)]
    inc = [[] for _ in range(p)]
    if "messages" in m:
        entries = m["messages"]
    else:
        entries = [(i, j, b) for i, row in enumerate(m["dense"]) for j, b in enumerate(row)]
    for s, d, b in entries:
        if b > 0 and s != d:
            out[s].append(b)
            inc[d].append(b)
    return [sorted(x, reverse=True) for x in out + inc if x]


def fewest_big(sizes, theta, spare):
    big = [s for s in sizes if s >= theta]
    if not big:
        return 0
    avoided = 0
    for cost in sorted(s // theta for s in big):
        if cost > spare:
            break
        spare -= cost
        avoided += 1
    return len(big) - avoided


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrix")
    ap.add_argument("--tau", type=float, default=2e-6)
    ap.add_argument("--bandwidth", type=float, default=1e10)
    ap.add_argument("--extra", type=int, default=3, help="also P = h+1 .. h+EXTRA")
    ap.add_argument("--grid", type=int, default=600, help="theta cells from 0 to the largest message")
    a = ap.parse_args()
    ports = ports_of(a.matrix)
    h = max(len(x) for x in ports)
    t = max(sum(x) for x in ports)
    mu = 1 / a.bandwidth
    lb = h * a.tau + t * mu
    top = max(x[0] for x in ports)
    print("%s: h = %d, t = %d B, LB = h tau + t mu = %.6g s" % (a.matrix, h, t, lb))
    print("  P    integral/t   bound/LB")
    for P in range(h, h + a.extra + 1):
        integral, prev = 0.0, 0.0
        for i in range(1, a.grid + 1):
            theta = top * i / a.grid
            integral += (theta - prev) * max(fewest_big(x, theta, P - len(x)) for x in ports)
            prev = theta
        bound = P * a.tau + mu * max(t, integral)
        print("  %-4d %10.4f %10.4f" % (P, integral / t, bound / lb), flush=True)


if __name__ == "__main__":
    main()
