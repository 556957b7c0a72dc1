/* An unmodified MPI program for the interposer's SMPI benchmark (bench/smpi/pmpi_halo.sh): a sparse
 * 9-point halo on a periodic px x py grid of ranks (px the largest divisor of p up to sqrt(p)), each
 * rank sending BYTES to each of its 8 neighbours, repeated. MODE alltoallv makes each exchange one
 * MPI_Alltoallv over the whole communicator (the call the interposer takes); MODE ac makes it the
 * hand-written exchange (MPI_Irecv from each neighbour, MPI_Isend to each, MPI_Waitall). WARM calls
 * first, then a barrier, then CALLS timed calls; rank 0 prints the slowest rank's time per timed
 * call (simulated under SMPI). Every received byte of every call is checked.
 *
 *   smpi_halo MODE CALLS WARM BYTES        e.g. smpi_halo alltoallv 100 60 1024
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char value(int src, int dst, int call, int k) { return (unsigned char)(src * 131 + dst * 7 + call * 3 + k); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc != 5 || (strcmp(argv[1], "alltoallv") != 0 && strcmp(argv[1], "ac") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: smpi_halo alltoallv|ac CALLS WARM BYTES\n");
    MPI_Finalize();
    return 2;
  }
  const int ac = strcmp(argv[1], "ac") == 0, calls = atoi(argv[2]), warm = atoi(argv[3]), bytes = atoi(argv[4]);
  int px = 1;
  for (int d = 1; d * d <= p; ++d)
    if (p % d == 0) px = d;
  const int py = p / px, x = rank % px, y = rank / px;
  /* The distinct neighbours (a small grid wraps onto itself). */
  int peers[8], n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      const int q = ((y + dy + py) % py) * px + (x + dx + px) % px;
      int seen = q == rank;
      for (int k = 0; k < n; ++k) seen |= peers[k] == q;
      if (!seen) peers[n++] = q;
    }
  int* sc = calloc((size_t)p, sizeof(int));
  int* sd = calloc((size_t)p, sizeof(int));
  int* rc = calloc((size_t)p, sizeof(int));
  int* rd = calloc((size_t)p, sizeof(int));
  for (int k = 0; k < n; ++k) sc[peers[k]] = rc[peers[k]] = bytes; /* the halo is symmetric */
  for (int j = 0, at = 0; j < p; ++j) sd[j] = at, at += sc[j];
  for (int j = 0, at = 0; j < p; ++j) rd[j] = at, at += rc[j];
  unsigned char* send = malloc((size_t)n * bytes + 1);
  unsigned char* recv = malloc((size_t)n * bytes + 1);
  MPI_Request req[16];
  int bad = 0;
  double start = 0;
  for (int call = 0; call < warm + calls; ++call) {
    if (call == warm) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, call, k);
    if (ac) {
      for (int k = 0; k < n; ++k) MPI_Irecv(recv + rd[peers[k]], bytes, MPI_BYTE, peers[k], 0, MPI_COMM_WORLD, &req[k]);
      for (int k = 0; k < n; ++k) MPI_Isend(send + sd[peers[k]], bytes, MPI_BYTE, peers[k], 0, MPI_COMM_WORLD, &req[n + k]);
      MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
    } else {
      MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    }
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < rc[j]; ++k) bad += recv[rd[j] + k] != value(j, rank, call, k);
  }
  const double mine = (MPI_Wtime() - start) / (calls > 0 ? calls : 1);
  double slowest = 0;
  int wrong = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&bad, &wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("smpi_halo %s p %d grid %dx%d bytes %d calls %d warm %d: %.3f us per call, %d wrong bytes\n", argv[1], p, px, py, bytes, calls, warm,
           slowest * 1e6, wrong);
  free(sc), free(sd), free(rc), free(rd), free(send), free(recv);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
