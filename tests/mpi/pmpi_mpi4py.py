"""An mpi4py program that knows nothing of commfit (tests/mpi/pmpi_mpi4py.cmake runs it with and
without LD_PRELOAD=libcommfit_pmpi.so): mpi4py initialises MPI with MPI_THREAD_MULTIPLE. It repeats
an irregular comm.Alltoallv with numpy buffers (a pattern that changes sizes half way), a
comm.Alltoall, and a Neighbor_alltoallv on a distributed-graph communicator, checks every value
received against what its sender must have sent, and prints per rank its count of wrong values
and a digest of every receive buffer.
    mpirun -np N python3 pmpi_mpi4py.py ITERATIONS
"""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
iterations = int(sys.argv[1])
assert MPI.Query_thread() == MPI.THREAD_MULTIPLE, "mpi4py did not ask for MPI_THREAD_MULTIPLE"


def count(which, i, j):
    """Doubles rank i sends rank j in phase `which`: irregular, about a third of the pairs empty."""
    if (i * 7 + j * 13) % 11 < 4 and i != j:
        return 0
    return 1 + (i * 31 + j * 17 + which * 53 + size) % 97


def values(it, i, j, n):
    """The n doubles rank i sends rank j in call `it` (exact in a double)."""
    return (np.arange(n, dtype=np.float64) * 3 + i * 1000003 + j * 7919 + it * 104729) % 2**40


digest = hashlib.sha256()
wrong = 0

# Alltoallv with numpy buffers, displacements with a gap of one after each block.
for it in range(iterations):
    which = it >= iterations // 2
    sc = np.array([count(which, rank, j) for j in range(size)], dtype=np.int32)
    rc = np.array([count(which, q, rank) for q in range(size)], dtype=np.int32)
    sd = np.concatenate(([0], np.cumsum(sc + 1)[:-1])).astype(np.int32)
    rd = np.concatenate(([0], np.cumsum(rc + 1)[:-1])).astype(np.int32)
    send = np.full(int(sc.sum() + size), -1.0)
    for j in range(size):
        send[sd[j]:sd[j] + sc[j]] = values(it, rank, j, sc[j])
    recv = np.full(int(rc.sum() + size), -2.0)
    comm.Alltoallv([send, (sc, sd), MPI.DOUBLE], [recv, (rc, rd), MPI.DOUBLE])
    for q in range(size):
        wrong += int(np.count_nonzero(recv[rd[q]:rd[q] + rc[q]] != values(it, q, rank, rc[q])))
        wrong += int(recv[rd[q] + rc[q]] != -2.0)   # the gaps stay as they were
    digest.update(recv.tobytes())

# Alltoall: 5 int64 to every rank.
for it in range(iterations):
    send = np.array([[rank * 100000 + j * 100 + k + it * 7 for k in range(5)] for j in range(size)], dtype=np.int64)
    recv = np.zeros((size, 5), dtype=np.int64)
    comm.Alltoall(send, recv)
    expected = np.array([[q * 100000 + rank * 100 + k + it * 7 for k in range(5)] for q in range(size)], dtype=np.int64)
    wrong += int(np.count_nonzero(recv != expected))
    digest.update(recv.tobytes())

# Neighbor_alltoallv on a distributed graph: each rank sends to rank + 1 and rank + 2 (mod size),
# distinct neighbours only.
destinations = sorted({(rank + d) % size for d in (1, 2)} - {rank})
sources = sorted({(rank - d) % size for d in (1, 2)} - {rank})
graph = comm.Create_dist_graph_adjacent(sources, destinations, reorder=False)
for it in range(iterations):
    sc = np.array([1 + (rank + d + it // 7) % 9 for d in destinations], dtype=np.int32)
    rc = np.array([1 + (q + rank + it // 7) % 9 for q in sources], dtype=np.int32)
    sd = np.concatenate(([0], np.cumsum(sc)[:-1])).astype(np.int32)
    rd = np.concatenate(([0], np.cumsum(rc)[:-1])).astype(np.int32)
    send = np.concatenate([values(it, rank, d, n) for d, n in zip(destinations, sc)]) if len(sc) else np.zeros(0)
    recv = np.full(int(rc.sum()), -3.0)
    graph.Neighbor_alltoallv([send, (sc, sd), MPI.DOUBLE], [recv, (rc, rd), MPI.DOUBLE])
    for k, q in enumerate(sources):
        wrong += int(np.count_nonzero(recv[rd[k]:rd[k] + rc[k]] != values(it, q, rank, rc[k])))
    digest.update(recv.tobytes())
graph.Free()

print(f"pmpi_mpi4py: rank {rank}: {wrong} wrong values, digest {digest.hexdigest()[:16]}", flush=True)
sys.exit(1 if wrong else 0)
