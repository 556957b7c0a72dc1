/* A hybrid MPI + threads program that knows nothing of commfit: it asks for MPI_THREAD_MULTIPLE
 * and runs THREADS threads per rank, each on its own duplicate of MPI_COMM_WORLD, each repeating
 * an irregular MPI_Alltoallv of its own (a pattern per thread, changed once half way) with an
 * MPI_Alltoall every tenth call, all at once. Every received int is checked against what its
 * sender must have sent. Run it with and without LD_PRELOAD=libcommfit_pmpi.so
 * (tests/mpi/pmpi_threads.cmake).
 *   mpirun -np N pmpi_threads THREADS ITERATIONS
 * prints per rank "pmpi_threads: rank R: T threads, N calls, W wrong ints" and exits 1 if W > 0.
 *   mpirun -np N pmpi_threads 2 ITERATIONS same
 * is an erroneous program: after a few calls from the main thread, two threads of rank 0 call
 * MPI_Alltoallv on one communicator at once (the other ranks come late, so the first is still in
 * its call when the second starts). MPI forbids it; the interposer must say so, not hang. */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* Ints rank i sends rank j on thread t's communicator in phase `which` (0, then 1 from half way):
 * irregular, about a third of the pairs empty. */
static int count(int t, int which, int i, int j) {
  const int h = (i * 7 + j * 13 + t * 3 + which * 5) % 11;
  if (h < 4 && i != j) return 0;
  return 1 + (i * 31 + j * 17 + t * 41 + which * 101 + size) % 97;
}

/* The k-th int rank i sends rank j in call `it` of thread t. */
static int value(int t, int it, int i, int j, int k) {
  const uint32_t v = (uint32_t)i * 2654435761u ^ (uint32_t)j * 40503u ^ (uint32_t)k * 97u ^ (uint32_t)it * 7919u ^ (uint32_t)t * 104729u;
  return (int)(v & 0x7fffffff);
}

struct work {
  int t, iterations;
  MPI_Comm comm;
  long calls, wrong;
};

static void* run(void* arg) {
  struct work* w = (struct work*)arg;
  int *sc = calloc((size_t)size, sizeof(int)), *sd = calloc((size_t)size, sizeof(int));
  int *rc = calloc((size_t)size, sizeof(int)), *rd = calloc((size_t)size, sizeof(int));
  int capacity = 0;
  for (int j = 0; j < size; ++j) capacity += 2 * 98 + 3;
  int *send = calloc((size_t)capacity, sizeof(int)), *recv = calloc((size_t)capacity, sizeof(int));
  for (int it = 0; it < w->iterations; ++it) {
    const int which = it >= w->iterations / 2;
    if (it % 10 == 9) { /* MPI_Alltoall: 3 ints to every rank */
      for (int j = 0; j < size; ++j)
        for (int k = 0; k < 3; ++k) send[3 * j + k] = value(w->t, it, rank, j, k);
      memset(recv, 0xff, (size_t)(3 * size) * sizeof(int));
      MPI_Alltoall(send, 3, MPI_INT, recv, 3, MPI_INT, w->comm);
      for (int q = 0; q < size; ++q)
        for (int k = 0; k < 3; ++k) w->wrong += recv[3 * q + k] != value(w->t, it, q, rank, k);
      ++w->calls;
      continue;
    }
    int at = 0;
    for (int j = 0; j < size; ++j) {
      sc[j] = count(w->t, which, rank, j), sd[j] = at;
      for (int k = 0; k < sc[j]; ++k) send[at + k] = value(w->t, it, rank, j, k);
      at += sc[j] + 1; /* a gap after each block */
    }
    at = 0;
    for (int q = 0; q < size; ++q) rc[q] = count(w->t, which, q, rank), rd[q] = at, at += rc[q] + 2;
    memset(recv, 0xff, (size_t)at * sizeof(int));
    MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, w->comm);
    for (int q = 0; q < size; ++q) {
      for (int k = 0; k < rc[q]; ++k) w->wrong += recv[rd[q] + k] != value(w->t, it, q, rank, k);
      w->wrong += recv[rd[q] + rc[q]] != -1 || recv[rd[q] + rc[q] + 1] != -1; /* the gaps stay as they were */
    }
    ++w->calls;
  }
  free(sc), free(sd), free(rc), free(rd), free(send), free(recv);
  return NULL;
}

/* The erroneous mode's threads: one exchange each on the shared communicator. */
static void* late(void* arg) {
  struct work* w = (struct work*)arg;
  if (rank == 0 && w->t == 1) usleep(300000); /* rank 0's second thread comes while the first waits */
  if (rank != 0 && w->t == 0) sleep(3);      /* the others keep rank 0's first thread waiting */
  if (rank == 0 || w->t == 0) {
    w->iterations = 1;
    run(w);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, argc < 3 ? "usage: pmpi_threads THREADS ITERATIONS [same]\n" : "pmpi_threads: no MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int threads = atoi(argv[1]);
  const int iterations = atoi(argv[2]);
  const int same = argc > 3 && strcmp(argv[3], "same") == 0;
  if (threads < 1 || threads > 64 || iterations < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  struct work* w = calloc((size_t)threads, sizeof(struct work));
  pthread_t* id = calloc((size_t)threads, sizeof(pthread_t));
  MPI_Comm shared = MPI_COMM_NULL;
  if (same) { /* a few calls from this thread first: the communicator is known to the interposer */
    MPI_Comm_dup(MPI_COMM_WORLD, &shared);
    struct work first = {0, 4, shared, 0, 0};
    run(&first);
  }
  for (int t = 0; t < threads; ++t) { /* duplicates made in one order on every rank, by this thread */
    w[t].t = t, w[t].iterations = iterations;
    if (same) w[t].comm = shared;
    else MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
  }
  for (int t = 0; t < threads; ++t) pthread_create(&id[t], NULL, same ? late : run, &w[t]);
  long calls = 0, wrong = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(id[t], NULL);
    calls += w[t].calls, wrong += w[t].wrong;
    if (!same) MPI_Comm_free(&w[t].comm);
  }
  if (same) MPI_Comm_free(&shared);
  printf("pmpi_threads: rank %d: %d threads, %ld calls, %ld wrong ints\n", rank, threads, calls, wrong);
  free(w), free(id);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
