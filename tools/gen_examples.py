#!/usr/bin/env python3
"""Writes the example matrices of examples/ (python3 standard library only).

    tools/gen_examples.py [OUTDIR]      (default: examples/ beside this script's parent)

Every file is deterministic: re-running the script reproduces the committed files byte for byte.
The two Transportation-paper figures are transcribed from the paper (docs/REFERENCES.md),
Figure 1 and Figure 9; their entries are the paper's element counts, used here as bytes.
"""
import json
import os
import random
import sys


def write_matrix(outdir, stem, ranks, name, description, messages=None, dense=None):
    doc = {"format": "commfit-matrix", "version": 1, "ranks": ranks,
           "name": name, "description": description}
    if messages is not None:
        doc["messages"] = sorted(messages)
    else:
        doc["dense"] = dense
    # One message or one dense row per line: small, diffable, still plain JSON.
    head = json.dumps({k: v for k, v in doc.items() if k not in ("messages", "dense")})
    key = "messages" if messages is not None else "dense"
    rows = ",\n  ".join(json.dumps(r) for r in doc[key])
    text = head[:-1] + ',\n "%s": [\n  %s\n ]}\n' % (key, rows)
    assert json.loads(text) == doc
    with open(os.path.join(outdir, stem + ".json"), "w") as f:
        f.write(text)


def write_mtx(outdir, stem, ranks, messages, comment):
    lines = ["%%MatrixMarket matrix coordinate integer general"]
    lines += ["% " + c for c in comment]
    lines.append("%d %d %d" % (ranks, ranks, len(messages)))
    lines += ["%d %d %d" % (s + 1, d + 1, b) for s, d, b in sorted(messages)]
    with open(os.path.join(outdir, stem + ".mtx"), "w") as f:
        f.write("\n".join(lines) + "\n")


def stencil2d(px, py, nx, ny, elem_bytes):
    """5-point stencil halo exchange on a px x py process grid (non-periodic), each rank owning an
    nx x ny block of cells: a rank sends one edge of ny cells to its west/east neighbours and one
    edge of nx cells to its north/south neighbours. Rank = y * px + x."""
    msgs = []
    for y in range(py):
        for x in range(px):
            r = y * px + x
            for dx, dy, cells in ((-1, 0, ny), (1, 0, ny), (0, -1, nx), (0, 1, nx)):
                qx, qy = x + dx, y + dy
                if 0 <= qx < px and 0 <= qy < py:
                    msgs.append([r, qy * px + qx, cells * elem_bytes])
    return msgs


def random_sparse(ranks, seed, min_dests, max_dests, min_bytes, max_bytes):
    """Each rank sends to a random set of other ranks; sizes log-uniform in [min_bytes, max_bytes].
    Uses only Random.random() so the stream is the same on every Python 3."""
    rng = random.Random(seed)
    msgs = []
    for src in range(ranks):
        k = min_dests + int(rng.random() * (max_dests - min_dests + 1))
        others = [d for d in range(ranks) if d != src]
        for i in range(k):  # partial Fisher-Yates: the first k entries are the destinations
            j = i + int(rng.random() * (len(others) - i))
            others[i], others[j] = others[j], others[i]
        for dst in others[:k]:
            size = int(min_bytes * (max_bytes / min_bytes) ** rng.random())
            msgs.append([src, dst, size])
    return msgs


def sample_sort(ranks, keys_per_rank, key_bytes, seed):
    """Last step of a sample sort with poorly chosen splitters: every rank holds keys_per_rank keys
    and sends each bucket's keys to the bucket's owner (itself included, a local copy). Bucket j
    gets a share proportional to 1 / (j + 1) (Zipf-like skew), jittered by +-10 % per rank."""
    rng = random.Random(seed)
    weights = [1.0 / (j + 1) for j in range(ranks)]
    total = sum(weights)
    msgs = []
    for src in range(ranks):
        shares = [w / total * (0.9 + 0.2 * rng.random()) for w in weights]
        s = sum(shares)
        counts = [int(keys_per_rank * x / s) for x in shares]
        counts[0] += keys_per_rank - sum(counts)  # every key goes somewhere
        msgs += [[src, dst, c * key_bytes] for dst, c in enumerate(counts) if c > 0]
    return msgs


# Transportation paper (Shankar, Alsabti, Ranka 1994), Figure 1: all-to-many, every r_i = c_j = 10.
FIG1 = [
    [0, 3, 1, 0, 2, 1, 2, 1],
    [1, 0, 2, 2, 1, 1, 3, 0],
    [4, 1, 0, 2, 0, 2, 0, 1],
    [0, 2, 0, 0, 0, 3, 1, 4],
    [3, 0, 4, 0, 0, 2, 1, 0],
    [1, 2, 1, 2, 0, 0, 0, 4],
    [0, 2, 1, 0, 7, 0, 0, 0],
    [1, 0, 1, 4, 0, 1, 3, 0],
]
# Figure 9: the two-stage example, every r_i = c_j = 17 (diagonal entries are local copies).
FIG9 = [
    [11, 1, 4, 1],
    [2, 0, 3, 12],
    [3, 10, 3, 1],
    [1, 6, 7, 3],
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(here), "examples")
    os.makedirs(outdir, exist_ok=True)

    for fig, t in ((FIG1, 10), (FIG9, 17)):  # the figures' margins: every row and column sums to t
        assert all(sum(r) == t for r in fig) and all(sum(c) == t for c in zip(*fig))

    write_matrix(outdir, "stencil2d_16", 16, "stencil2d_16",
                 "2D 5-point stencil halo exchange on a 4 x 4 process grid (non-periodic), rank = "
                 "4 * y + x; each rank owns 1024 x 1024 cells of 8-byte doubles and sends one edge "
                 "(1024 cells = 8192 bytes) to each of its 2 to 4 neighbours",
                 messages=stencil2d(4, 4, 1024, 1024, 8))

    rs = random_sparse(32, seed=20240601, min_dests=2, max_dests=8, min_bytes=64, max_bytes=1 << 20)
    desc = ("random sparse pattern, 32 ranks, each sending to 2-8 distinct random ranks, sizes "
            "log-uniform in [64 B, 1 MiB]; tools/gen_examples.py, seed 20240601")
    write_matrix(outdir, "random_sparse_32", 32, "random_sparse_32", desc, messages=rs)
    write_mtx(outdir, "random_sparse_32", 32, rs,
              [desc, "same matrix as random_sparse_32.json; entry (i, j) = bytes rank i-1 sends to rank j-1"])

    write_matrix(outdir, "transport_fig1", 8, "transport_fig1",
                 "Transportation paper (Shankar, Alsabti, Ranka 1994), Figure 1: all-to-many "
                 "communication with equal traffic, r_i = c_j = t = 10 on 8 processors; entries are "
                 "the figure's element counts, used as bytes",
                 dense=FIG1)
    write_matrix(outdir, "transport_fig9", 4, "transport_fig9",
                 "Transportation paper (Shankar, Alsabti, Ranka 1994), Figure 9: the matrix of the "
                 "two-stage splitting example, r_i = c_j = t = 17 on 4 processors, diagonal entries "
                 "are local copies; entries are the figure's element counts, used as bytes",
                 dense=FIG9)

    write_matrix(outdir, "sample_sort_8", 8, "sample_sort_8",
                 "final all-to-all of a sample sort on 8 ranks with skewed buckets: each rank holds "
                 "1,000,000 8-byte keys and bucket j receives a share proportional to 1/(j+1), "
                 "jittered +-10 % per rank (rank 0 receives about 36 % of all keys, rank 7 under 5 %); diagonal "
                 "entries are local copies; tools/gen_examples.py, seed 7",
                 messages=sample_sort(8, 1000000, 8, seed=7))


if __name__ == "__main__":
    main()
