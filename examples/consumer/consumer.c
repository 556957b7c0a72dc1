/* The C side of examples/consumer: the same irregular exchange as consumer.cpp, through the C API
 * (<commfit/commfit_exec.h>), built with mpicc against the installed package:
 *
 *   mpicc consumer.c -o consumer_c $(pkg-config --cflags --libs commfit-exec)
 *   mpirun -np NP consumer_c m.plan          load a plan made by `commfit plan` and execute it
 *
 * Built with -DCOMMFIT_CONSUMER_IN_JOB it plans the pattern inside the job instead
 * (commfit_exec_plan, defined in the runtime library):
 *
 *   mpicc -DCOMMFIT_CONSUMER_IN_JOB consumer.c -o consumer_c_in_job \
 *         $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
 *   mpirun -np NP consumer_c_in_job "strategy=auto"
 *
 * Exit status 0 only when every received byte on every rank is right. */
#include <commfit/commfit_exec.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes rank s sends to rank d (consumer.cpp's formula). */
static int count(int s, int d) {
  if ((s * 7 + d * 3) % 5 == 0 && s != d) return 0;
  return 1 + (s * 131 + d * 29) % 997;
}

static unsigned char byte(int s, int d, int k, int iter) { return (unsigned char)(s * 37 + d * 11 + k * 3 + iter); }

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mpirun -np NP consumer_c PLAN | mpirun -np NP consumer_c_in_job OPTIONS\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int* sc = malloc(4 * sizeof(int) * (size_t)np);
  int *sd = sc + np, *rc = sc + 2 * np, *rd = sc + 3 * np;
  int stotal = 0, rtotal = 0;
  for (int q = 0; q < np; ++q) {
    sc[q] = count(rank, q);
    sd[q] = stotal;
    stotal += sc[q];
    rc[q] = count(q, rank);
    rd[q] = rtotal;
    rtotal += rc[q];
  }
  unsigned char* send = malloc((size_t)stotal);
  unsigned char* recv = malloc((size_t)rtotal);
  long wrong = 0;
  commfit_exec_t ex = NULL;
#ifdef COMMFIT_CONSUMER_IN_JOB
  int rc_ = commfit_exec_plan(MPI_COMM_WORLD, sc, rc, 1, argv[1], NULL, &ex);
#else
  int rc_ = commfit_exec_load(argv[1], MPI_COMM_WORLD, NULL, &ex);
#endif
  if (rc_ != COMMFIT_EXEC_SUCCESS) {
    if (rank == 0) fprintf(stderr, "consumer_c: %s\n", commfit_exec_last_error());
    wrong = 1;
  }
  for (int iter = 0; iter < 10 && wrong == 0; ++iter) {
    for (int q = 0; q < np; ++q)
      for (int k = 0; k < sc[q]; ++k) send[sd[q] + k] = byte(rank, q, k, iter);
    memset(recv, 0xEE, (size_t)rtotal);
    if (commfit_exec_execute(ex, send, sc, sd, recv, rc, rd) != COMMFIT_EXEC_SUCCESS) {
      if (rank == 0) fprintf(stderr, "consumer_c: %s\n", commfit_exec_last_error());
      wrong = 1;
      break;
    }
    for (int q = 0; q < np; ++q)
      for (int k = 0; k < rc[q]; ++k) wrong += recv[rd[q] + k] != byte(q, rank, k, iter);
  }
  commfit_exec_free(&ex);
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("consumer_c: %d ranks, 10 exchanges, %ld wrong bytes\n", np, all);
  free(send);
  free(recv);
  free(sc);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
