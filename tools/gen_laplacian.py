#!/usr/bin/env python3
"""Writes the Matrix Market example for `commfit extract` (python3 standard library only).

    tools/gen_laplacian.py [N] [OUT]     (default: N = 20, examples/extract/laplace3d_20.mtx)

The matrix is the 7-point finite-difference Laplacian of an N x N x N grid with Dirichlet
boundaries: row v = x + N (y + N z) has 6 on the diagonal and -1 for each of its up to six grid
neighbours. It is symmetric, so only the lower triangle is stored (`coordinate integer
symmetric`, 1-based). Deterministic: re-running reproduces the committed file byte for byte.
"""
import os
import sys


def laplace3d(n):
    entries = []
    for z in range(n):
        for y in range(n):
            for x in range(n):
                v = x + n * (y + n * z)
                # Lower triangle: neighbours with a smaller index, then the diagonal.
                if z > 0:
                    entries.append((v, v - n * n, -1))
                if y > 0:
                    entries.append((v, v - n, -1))
                if x > 0:
                    entries.append((v, v - 1, -1))
                entries.append((v, v, 6))
    return entries


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "examples", "extract", "laplace3d_%d.mtx" % n)
    entries = laplace3d(n)
    rows = n ** 3
    lines = ["%%MatrixMarket matrix coordinate integer symmetric",
             "%% 7-point finite-difference Laplacian on a %d x %d x %d grid (Dirichlet), row = x + %d (y + %d z)" % (n, n, n, n, n),
             "%% written by tools/gen_laplacian.py %d; input of `commfit extract` (docs/WORKLOADS.md)" % n,
             "%d %d %d" % (rows, rows, len(entries))]
    lines += ["%d %d %d" % (i + 1, j + 1, val) for i, j, val in entries]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
