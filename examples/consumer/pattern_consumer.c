/* Patterns from global ids through the C API (<commfit/commfit_pattern.h>), built with mpicc against
 * the installed package (docs/PATTERN.md, "Building against an installed commfit"):
 *
 *   mpicc pattern_consumer.c -o pattern_consumer_c $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
 *   mpirun -np NP pattern_consumer_c ["strategy=auto"]
 *
 * The ids 7k + 3 (k < 30 np + 11) are owned by ranks drawn at random, each rank needs a random draw
 * of them (duplicates and its own ids included); every rank computes the draws of all ranks from
 * the same generator (Park and Miller's, the same in pattern_consumer.cpp and pattern_consumer.F90),
 * so the expected values need no communication. Two gathers of doubles and one scatter of int64
 * with MPI_SUM, every value checked. Exit status 0 only when all are right on every rank. */
#include <commfit/commfit_pattern.h>

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Park and Miller's minimal standard generator: exact in 64-bit integers in every language. */
static int64_t next(int64_t s) { return s * 48271 % 2147483647; }
static int64_t id_of(int64_t k) { return 7 * k + 3; }
static int owner_of(int64_t k, int np) { return (int)(next(next(k + 1)) % np); }
static int64_t needed_count(int q) { return 20 + (q * 5) % 13; }
/* Rank q's j-th needed k, j = 0, 1, ... in turn: *s starts at 1000 + 7919 q. */
static int64_t draw(int64_t* s, int64_t n_ids) {
  *s = next(*s);
  return *s % n_ids;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char* options = argc > 1 ? argv[1] : "";
  const int64_t n_ids = 30 * (int64_t)np + 11;

  /* This rank's ids: owned in descending order of k (any order is fine), needed as drawn. */
  int64_t* local = malloc(sizeof(int64_t) * (size_t)n_ids);   /* k -> position in owned, or -1 */
  int64_t* owned = malloc(sizeof(int64_t) * (size_t)n_ids);
  int64_t n_owned = 0;
  for (int64_t k = n_ids - 1; k >= 0; --k) {
    local[k] = -1;
    if (owner_of(k, np) == rank) local[k] = n_owned, owned[n_owned++] = id_of(k);
  }
  const int64_t n_needed = needed_count(rank);
  int64_t* needed = malloc(sizeof(int64_t) * (size_t)n_needed);
  int64_t s = 1000 + 7919 * (int64_t)rank;
  for (int64_t j = 0; j < n_needed; ++j) needed[j] = id_of(draw(&s, n_ids));

  double* x = malloc(sizeof(double) * (size_t)(n_owned + 1));
  double* y = malloc(sizeof(double) * (size_t)n_needed);
  int64_t* z = malloc(sizeof(int64_t) * (size_t)(n_owned + 1));
  int64_t* w = malloc(sizeof(int64_t) * (size_t)n_needed);
  int64_t* expect = malloc(sizeof(int64_t) * (size_t)(n_owned + 1));
  long wrong = 0;
  commfit_pattern* p = NULL;
  if (commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, options, &p) != COMMFIT_EXEC_SUCCESS) {
    if (rank == 0) fprintf(stderr, "pattern_consumer_c: %s\n", commfit_exec_last_error());
    wrong = 1;
  }
  /* Gather: needed value j is its owner's value of needed[j], twice with other values. */
  for (int iter = 0; iter < 2 && wrong == 0; ++iter) {
    for (int64_t i = 0; i < n_owned; ++i) x[i] = 0.5 * (double)owned[i] + iter;
    for (int64_t j = 0; j < n_needed; ++j) y[j] = -1;
    if (commfit_pattern_gather(p, x, y, MPI_DOUBLE) != COMMFIT_EXEC_SUCCESS) {
      if (rank == 0) fprintf(stderr, "pattern_consumer_c: %s\n", commfit_exec_last_error());
      wrong = 1;
      break;
    }
    for (int64_t j = 0; j < n_needed; ++j) wrong += y[j] != 0.5 * (double)needed[j] + iter;
  }
  /* Scatter, MPI_SUM: each owned id gets its own id plus q + 1 for every time rank q needs it. */
  if (wrong == 0) {
    for (int64_t i = 0; i < n_owned; ++i) z[i] = expect[i] = owned[i];
    for (int64_t j = 0; j < n_needed; ++j) w[j] = rank + 1;
    for (int q = 0; q < np; ++q) {
      int64_t sq = 1000 + 7919 * (int64_t)q;
      for (int64_t j = 0; j < needed_count(q); ++j) {
        const int64_t k = draw(&sq, n_ids);
        if (local[k] >= 0) expect[local[k]] += q + 1;
      }
    }
    if (commfit_pattern_scatter(p, w, z, MPI_INT64_T, MPI_SUM) != COMMFIT_EXEC_SUCCESS) {
      if (rank == 0) fprintf(stderr, "pattern_consumer_c: %s\n", commfit_exec_last_error());
      wrong = 1;
    } else {
      for (int64_t i = 0; i < n_owned; ++i) wrong += z[i] != expect[i];
    }
  }
  commfit_pattern_free(&p);
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("pattern_consumer_c: %d ranks, %lld ids, 2 gathers and 1 scatter, %ld wrong values\n", np, (long long)n_ids, all);
  free(local), free(owned), free(needed), free(x), free(y), free(z), free(w), free(expect);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
