/* An unmodified MPI program that picks its exchange by timing the alternatives at set-up, as FFT
 * and sparse-matrix libraries do: an irregular pattern with skewed sizes (some pairs 16x the
 * others) sent either (A) by MPI_Alltoallv, or (B) by MPI_Alltoall with every block padded to the
 * largest count. SETUP calls of each are timed (the slowest rank's total), the faster is chosen,
 * then CALLS calls of the chosen one run. Rank 0 prints the choice and both set-up times; every
 * rank checks every byte it receives. bench/pmpi_choice.sh runs it with and without the
 * interposer: the interposer must not change the choice (its planning is not in the calls timed).
 *
 *   pmpi_choice SETUP CALLS [INTS]       (INTS: the small pairs' size, 256 by default)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int count(int i, int j, int p, int ints) {
  if (i == j) return 0;
  const int d = (j - i + p) % p;
  if (d != 1 && d != 3 && d != p - 2) return 0;         /* a sparse, irregular ring */
  return ((i * 7 + j * 3) % 5 == 0) ? 16 * ints : ints;  /* skewed: a few large pairs */
}

static int value(int src, int dst, int call, int k) { return src * 1000003 + dst * 7919 + call * 131 + k; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: pmpi_choice SETUP CALLS [INTS]\n");
    MPI_Finalize();
    return 2;
  }
  const int setup = atoi(argv[1]), calls = atoi(argv[2]), ints = argc > 3 ? atoi(argv[3]) : 256;
  int *sc = malloc(sizeof(int) * p), *sd = malloc(sizeof(int) * p), *rc = malloc(sizeof(int) * p), *rd = malloc(sizeof(int) * p);
  int largest = 0, st = 0, rt = 0;
  for (int j = 0; j < p; ++j) {
    sc[j] = count(rank, j, p, ints), rc[j] = count(j, rank, p, ints);
    sd[j] = st, st += sc[j], rd[j] = rt, rt += rc[j];
    for (int k = 0; k < p; ++k) largest = count(j, k, p, ints) > largest ? count(j, k, p, ints) : largest;
  }
  int* send = malloc(sizeof(int) * (st + 1));
  int* recv = malloc(sizeof(int) * (rt + 1));
  int* padded_send = malloc(sizeof(int) * ((size_t)largest * p + 1));
  int* padded_recv = malloc(sizeof(int) * ((size_t)largest * p + 1));
  long bad = 0;
  /* One exchange by method m (0: MPI_Alltoallv, 1: padded MPI_Alltoall); checks what arrived. */
#define EXCHANGE(m, call)                                                                               \
  do {                                                                                                  \
    for (int j = 0; j < p; ++j)                                                                         \
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, (call), k);                      \
    if ((m) == 0) {                                                                                     \
      MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD);                      \
    } else {                                                                                            \
      for (int j = 0; j < p; ++j)                                                                       \
        for (int k = 0; k < largest; ++k) padded_send[j * largest + k] = k < sc[j] ? send[sd[j] + k] : -1; \
      MPI_Alltoall(padded_send, largest, MPI_INT, padded_recv, largest, MPI_INT, MPI_COMM_WORLD);       \
      for (int j = 0; j < p; ++j)                                                                       \
        for (int k = 0; k < rc[j]; ++k) recv[rd[j] + k] = padded_recv[j * largest + k];                 \
    }                                                                                                   \
    for (int j = 0; j < p; ++j)                                                                         \
      for (int k = 0; k < rc[j]; ++k) bad += recv[rd[j] + k] != value(j, rank, (call), k);              \
  } while (0)
  double took[2] = {0, 0}, slowest[2] = {0, 0};
  int call = 0;
  for (int m = 0; m < 2; ++m) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = MPI_Wtime();
    for (int c = 0; c < setup; ++c, ++call) EXCHANGE(m, call);
    took[m] = MPI_Wtime() - t;
  }
  MPI_Allreduce(took, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int chosen = slowest[1] < slowest[0] ? 1 : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t = MPI_Wtime();
  for (int c = 0; c < calls; ++c, ++call) EXCHANGE(chosen, call);
  double run = MPI_Wtime() - t, run_max = 0;
  long wrong = 0;
  MPI_Reduce(&run, &run_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&bad, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("pmpi_choice: chose %s (set-up: alltoallv %.1f us, padded alltoall %.1f us per call); %d calls %.1f us per call; %ld wrong ints\n",
           chosen ? "padded-alltoall" : "alltoallv", 1e6 * slowest[0] / setup, 1e6 * slowest[1] / setup, calls, 1e6 * run_max / calls, wrong);
  free(sc), free(sd), free(rc), free(rd), free(send), free(recv), free(padded_send), free(padded_recv);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
