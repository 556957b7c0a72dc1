/* pmpi_thrash: an unmodified MPI program whose MPI_Alltoallv patterns never settle, the case where
 * planning cannot pay and the interposer must stop planning (COMMFIT_PLAN_BUDGET). Modes:
 *   cycle N   N calls cycling through 9 sparsity patterns (more than COMMFIT_MAX_PLANS's default 8)
 *   sizes N   N calls of one sparsity pattern, each with other sizes
 *   comms N   N sub-communicators (MPI_Comm_dup), 3 calls on each
 * Prints the slowest rank's time of the calls (communicator creation included in comms) and a
 * digest of every receive buffer, so that runs with and without the interposer can be compared:
 *   mpirun -np 4 build/tests/mpi/pmpi_thrash cycle 2000
 *   mpirun -np 4 -x LD_PRELOAD=build/runtime/libcommfit_pmpi.so build/tests/mpi/pmpi_thrash cycle 2000 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Bytes rank i sends rank j in pattern `pat`, variant `v` (sizes), 0 for no message. */
static int count(int i, int j, int pat, int v) {
  if (i == j) return 0;
  if ((i * 5 + j * 3 + pat) % 3 == 0) return 0; /* the sparsity pattern */
  return 16 + (i * 31 + j * 17 + v * 13 + pat * 7) % 241;
}

static uint64_t digest = 1469598103934665603ull;

static void exchange(MPI_Comm comm, int pat, int v, int call) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  int *sc = malloc(4 * sizeof(int) * (size_t)p), *sd = sc + p, *rc = sd + p, *rd = rc + p;
  int st = 0, rt = 0;
  for (int q = 0; q < p; ++q) {
    sc[q] = count(me, q, pat, v), sd[q] = st, st += sc[q];
    rc[q] = count(q, me, pat, v), rd[q] = rt, rt += rc[q];
  }
  unsigned char *send = malloc((size_t)st + 1), *recv = malloc((size_t)rt + 1);
  for (int k = 0; k < st; ++k) send[k] = (unsigned char)(me * 7 + k * 3 + call);
  MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, comm);
  for (int k = 0; k < rt; ++k) digest = (digest ^ recv[k]) * 1099511628211ull;
  free(send), free(recv), free(sc);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "cycle";
  const int n = argc > 2 ? atoi(argv[2]) : 2000;
  if (n < 1 || (strcmp(mode, "cycle") && strcmp(mode, "sizes") && strcmp(mode, "comms"))) {
    if (rank == 0) fprintf(stderr, "usage: pmpi_thrash cycle|sizes|comms N\n");
    MPI_Finalize();
    return 2;
  }
  exchange(MPI_COMM_WORLD, 0, 0, -1); /* MPI's connections set up before the clock starts */
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (!strcmp(mode, "cycle"))
    for (int k = 0; k < n; ++k) exchange(MPI_COMM_WORLD, k % 9, 0, k);
  else if (!strcmp(mode, "sizes"))
    for (int k = 0; k < n; ++k) exchange(MPI_COMM_WORLD, 0, k + 1, k);
  else
    for (int k = 0; k < n; ++k) {
      MPI_Comm c;
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
      for (int j = 0; j < 3; ++j) exchange(c, k % 5, 0, 3 * k + j);
      MPI_Comm_free(&c);
    }
  double t = MPI_Wtime() - start, slowest = 0;
  MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  unsigned long long d = digest, *all = malloc(sizeof d * (size_t)size);
  MPI_Gather(&d, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("rank %d digest %016llx\n", r, all[r]);
    fprintf(stderr, "pmpi_thrash %s %d: %.6f s\n", mode, n, slowest);
  }
  free(all);
  MPI_Finalize();
  return 0;
}
