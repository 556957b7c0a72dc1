/* An unmodified MPI program for the interposer's SMPI benchmark on given patterns
 * (bench/smpi/pmpi_rows.sh): the exchange of a counts file, repeated. MODE alltoallv makes each
 * exchange one MPI_Alltoallv over the whole communicator (the call the interposer takes); MODE ac
 * makes it the hand-written exchange (MPI_Irecv from each rank that sends here, MPI_Isend to each
 * rank this one sends to, MPI_Waitall; a rank's message to itself is a memcpy). WARM calls first,
 * then a barrier, then CALLS timed calls back to back; rank 0 prints the slowest rank's time per
 * timed call (simulated under SMPI). Every received byte of every call is checked.
 *
 * With GAP (simulated seconds, longer than a call), every call starts at a common instant instead,
 * GAP after the previous call's, as when each exchange follows a synchronising step; rank 0 then
 * prints the mean over the timed calls of the last rank's finish after that instant. Back to back,
 * ranks drift apart and a hot receiver's senders arrive spread out; from a common instant they all
 * send at once, which the InfiniBand model's penalties for concurrent flows punish.
 *
 * The counts file (bench/smpi/counts_of.py writes it from a commfit matrix): a line "P M", then M
 * lines "SRC DST BYTES" (each pair at most once, BYTES > 0). Every rank reads it and keeps its own
 * row and column.
 *
 *   smpi_alltoallv_loop MODE CALLS WARM COUNTS [GAP]    e.g. smpi_alltoallv_loop alltoallv 20 100 moe.counts 0.1
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sleeps (in simulated time: SMPI replaces nanosleep) until `instant`; 1 when it had already passed. */
static int sleep_until(double instant) {
  const double wait = instant - MPI_Wtime();
  if (wait < 0) return 1;
  struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
  nanosleep(&ts, NULL);
  return 0;
}

static unsigned char value(int src, int dst, int call, long k) { return (unsigned char)(src * 131 + dst * 7 + call * 3 + k); }

/* Reads this rank's send row and receive column; 0 on success, else 1 (rank 0 says why on stderr). */
static int read_counts(const char* path, int p, int rank, int* sc, int* rc) {
  FILE* f = fopen(path, "r");
  if (!f) {
    if (rank == 0) fprintf(stderr, "smpi_alltoallv_loop: %s: cannot open\n", path);
    return 1;
  }
  long ranks = 0, m = 0;
  if (fscanf(f, "%ld %ld", &ranks, &m) != 2 || ranks != p || m < 0) {
    if (rank == 0) fprintf(stderr, "smpi_alltoallv_loop: %s: line 1: want \"P M\" with P = %d ranks\n", path, p);
    fclose(f);
    return 1;
  }
  for (long k = 0; k < m; ++k) {
    long s = 0, d = 0, b = 0;
    if (fscanf(f, "%ld %ld %ld", &s, &d, &b) != 3 || s < 0 || s >= p || d < 0 || d >= p || b <= 0 || b > 1L << 30) {
      if (rank == 0) fprintf(stderr, "smpi_alltoallv_loop: %s: message %ld: want \"SRC DST BYTES\", ranks below %d, 0 < BYTES <= 2^30\n", path, k + 1, p);
      fclose(f);
      return 1;
    }
    if (s == rank) sc[d] = (int)b;
    if (d == rank) rc[s] = (int)b;
  }
  fclose(f);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 5 || argc > 6 || (strcmp(argv[1], "alltoallv") != 0 && strcmp(argv[1], "ac") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: smpi_alltoallv_loop alltoallv|ac CALLS WARM COUNTS [GAP]\n");
    MPI_Finalize();
    return 2;
  }
  const int ac = strcmp(argv[1], "ac") == 0, calls = atoi(argv[2]), warm = atoi(argv[3]);
  const double gap = argc == 6 ? atof(argv[5]) : 0;
  int* sc = calloc((size_t)p, sizeof(int));
  int* sd = calloc((size_t)p, sizeof(int));
  int* rc = calloc((size_t)p, sizeof(int));
  int* rd = calloc((size_t)p, sizeof(int));
  int status = read_counts(argv[4], p, rank, sc, rc), failed = 0;
  MPI_Allreduce(&status, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) {
    free(sc), free(sd), free(rc), free(rd);
    MPI_Finalize();
    return 2;
  }
  long sent = 0, received = 0;
  for (int j = 0; j < p; ++j) sd[j] = (int)sent, sent += sc[j];
  for (int j = 0; j < p; ++j) rd[j] = (int)received, received += rc[j];
  if (sent > 2147483647L || received > 2147483647L) {
    fprintf(stderr, "smpi_alltoallv_loop: rank %d: more than 2^31 - 1 bytes in or out (int displacements)\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  unsigned char* send = malloc((size_t)sent + 1);
  unsigned char* recv = malloc((size_t)received + 1);
  MPI_Request* req = malloc(sizeof(MPI_Request) * 2 * (size_t)p);
  double* took = calloc((size_t)(calls > 0 ? calls : 1), sizeof(double));
  long bad = 0;
  int late = 0;
  double start = 0;
  if (gap > 0) { /* the common instant of the first call: a barrier, then the latest rank's clock plus a margin */
    MPI_Barrier(MPI_COMM_WORLD);
    const double now = MPI_Wtime();
    MPI_Allreduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    start += 1e-2;
  }
  for (int call = 0; call < warm + calls; ++call) {
    if (gap > 0) {
      late |= sleep_until(start + call * gap);
    } else if (call == warm) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    for (int j = 0; j < p; ++j)
      for (long k = 0; k < sc[j]; ++k) send[sd[j] + k] = value(rank, j, call, k);
    if (ac) {
      int n = 0;
      for (int j = 0; j < p; ++j)
        if (rc[j] > 0 && j != rank) MPI_Irecv(recv + rd[j], rc[j], MPI_BYTE, j, 0, MPI_COMM_WORLD, &req[n++]);
      for (int j = 0; j < p; ++j)
        if (sc[j] > 0 && j != rank) MPI_Isend(send + sd[j], sc[j], MPI_BYTE, j, 0, MPI_COMM_WORLD, &req[n++]);
      if (sc[rank] > 0) memcpy(recv + rd[rank], send + sd[rank], (size_t)sc[rank]);
      MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    } else {
      MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    }
    if (gap > 0 && call >= warm) took[call - warm] = MPI_Wtime() - (start + call * gap);
    for (int j = 0; j < p; ++j)
      for (long k = 0; k < rc[j]; ++k) bad += recv[rd[j] + k] != value(j, rank, call, k);
  }
  /* After the last call (and GAP later, so that no rank still receives): the slowest rank's times. */
  if (gap > 0) late |= sleep_until(start + (warm + calls) * gap);
  const double mine = (MPI_Wtime() - start) / (calls > 0 ? calls : 1);
  double slowest = 0, mean = 0;
  long wrong = 0;
  int any_late = 0;
  double* last = calloc((size_t)(calls > 0 ? calls : 1), sizeof(double));
  if (gap > 0) {
    MPI_Reduce(took, last, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int c = 0; c < calls; ++c) mean += last[c] / calls;
  } else {
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  MPI_Reduce(&bad, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&late, &any_late, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && any_late) fprintf(stderr, "smpi_alltoallv_loop: a call outlasted GAP %g s: the times are not from common instants\n", gap);
  if (rank == 0)
    printf("smpi_alltoallv_loop %s p %d counts %s calls %d warm %d gap %g: %.3f us per call, %ld wrong bytes%s\n", argv[1], p, argv[4], calls,
           warm, gap, (gap > 0 ? mean : slowest) * 1e6, wrong, any_late ? " (a call outlasted GAP)" : "");
  free(sc), free(sd), free(rc), free(rd), free(send), free(recv), free(req), free(took), free(last);
  MPI_Finalize();
  return wrong == 0 && !any_late ? 0 : 1;
}
