/* Patterns from global ids (commfit_pattern.h) from C. 10^5 sparse ids owned by a seeded
 * permutation split unevenly (rank 1 owns nothing), needed with locality plus a random part, with
 * duplicates and self-owned ids (the last rank of three or more needs nothing). Gather of MPI_DOUBLE,
 * MPI_INT64_T and MPI_INT checked value by value against a function of the id; scatter with MPI_SUM,
 * MPI_MAX, MPI_MIN and MPI_REPLACE checked against a reference made with plain MPI_Alltoallv from
 * the test's own knowledge of the owners. Then every owner lookup method (lookup=) and every
 * reverse step (reverse=) on the same inputs: gather and scatter (MPI_SUM, MPI_REPLACE) identical
 * to the reference (the directories with every reverse= too: their first round is a sparse
 * exchange). Then the errors (an id nobody owns, an id owned twice, a negative id) under the
 * directory (reduce-scatter and NBX) and a ring, a bad lookup= or reverse= value, a derived datatype, an unsupported op: the
 * same code and message on every rank, the id named, no pattern made. Split phase (gather_begin/end,
 * scatter_begin/end) under several plans, with work and another exchange between begin and end,
 * equal to the plain calls value for value, and its misuses.
 * Usage: mpirun -np N test_pattern */
#include "runtime/commfit_pattern.h"
#include "check_c.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

enum { N = 100000 };

static uint64_t state;
static uint64_t next_random(void) { /* splitmix64: the same stream on every rank */
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int64_t id_of(int64_t g) { return 7 * g + 3; } /* sparse ids */
static double dvalue(int64_t id) { return (double)id * 0.5 + 1.0 / (double)(id + 1); }
static int64_t ivalue(int64_t id) { return id * 1000003 ^ (id << 17); }

/* The ownership: perm[k] is a global index; rank r owns perm[start[r] .. start[r + 1]). */
static int64_t* perm;
static int64_t start[65];
static int* owner_of_g;     /* owner of global index g */
static int64_t* local_of_g; /* its index in the owner's owned[] */

static void make_ownership(void) {
  int64_t k, total_weight = 0, at = 0;
  int r;
  perm = malloc(sizeof(int64_t) * N);
  owner_of_g = malloc(sizeof(int) * N);
  local_of_g = malloc(sizeof(int64_t) * N);
  for (k = 0; k < N; ++k) perm[k] = k;
  state = 12345;
  for (k = N - 1; k > 0; --k) {
    int64_t j = (int64_t)(next_random() % (uint64_t)(k + 1)), t = perm[k];
    perm[k] = perm[j];
    perm[j] = t;
  }
  for (r = 0; r < size; ++r) total_weight += (size > 1 && r == 1) ? 0 : r + 2; /* uneven, rank 1 none */
  for (r = 0; r < size; ++r) {
    start[r] = at;
    at += (r == size - 1) ? N - at : N * ((size > 1 && r == 1) ? 0 : r + 2) / total_weight;
  }
  start[size] = N;
  for (r = 0; r < size; ++r)
    for (k = start[r]; k < start[r + 1]; ++k) owner_of_g[perm[k]] = r, local_of_g[perm[k]] = k - start[r];
}

/* This rank's needs: a window of the permutation around its own slice (some self-owned, some the
 * neighbours'), a random part, and repeats. The last of three or more ranks needs nothing. */
static int64_t* make_needed(int64_t* n_out) {
  int64_t n = 0, k, cap = 20000, lo, hi;
  int64_t* needed = malloc(sizeof(int64_t) * cap);
  if (size >= 3 && rank == size - 1) {
    *n_out = 0;
    return needed;
  }
  state = 777 + (uint64_t)rank;
  lo = start[rank] - 1500;
  hi = start[rank] + 1500;
  for (k = lo; k < hi; k += 2) needed[n++] = id_of(perm[(k + N) % N]);
  for (k = 0; k < 3000; ++k) needed[n++] = id_of((int64_t)(next_random() % N));
  for (k = 0; k < 500; ++k) { /* duplicates */
    int64_t again = needed[next_random() % (uint64_t)n];
    needed[n++] = again;
  }
  *n_out = n;
  return needed;
}

/* What scatter must give, made with MPI_Alltoallv alone: every needed value travels with its
 * position to the owner, which combines them in (sender rank, position) order. op: 0 sum, 1 max,
 * 2 min, 3 replace. */
static void reference_scatter(const int64_t* needed, int64_t n_needed, const int64_t* owned_ids, int64_t n_owned,
                              const void* values, int is_double, int op, void* result) {
  int *sc = calloc(size, sizeof(int)), *rc = calloc(size, sizeof(int)), *sd = calloc(size, sizeof(int)),
      *rd = calloc(size, sizeof(int)), *at = calloc(size, sizeof(int));
  int64_t j, k, total = 0;
  int q;
  int64_t* sb;
  int64_t* rb;
  (void)owned_ids;
  for (j = 0; j < n_needed; ++j) sc[owner_of_g[(needed[j] - 3) / 7]] += 2;
  MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
  for (q = 1; q < size; ++q) sd[q] = sd[q - 1] + sc[q - 1], rd[q] = rd[q - 1] + rc[q - 1];
  for (q = 0; q < size; ++q) total += rc[q];
  sb = malloc(sizeof(int64_t) * (size_t)(2 * n_needed + 1));
  rb = malloc(sizeof(int64_t) * (size_t)(total + 1));
  for (j = 0; j < n_needed; ++j) {
    int o = owner_of_g[(needed[j] - 3) / 7];
    sb[sd[o] + at[o]] = needed[j];
    memcpy(&sb[sd[o] + at[o] + 1], (const char*)values + 8 * j, 8);
    at[o] += 2;
  }
  MPI_Alltoallv(sb, sc, sd, MPI_INT64_T, rb, rc, rd, MPI_INT64_T, MPI_COMM_WORLD);
  for (k = 0; k < total; k += 2) { /* rd is in rank order: (sender, position) order */
    int64_t g = (rb[k] - 3) / 7, i = local_of_g[g];
    CHECK(owner_of_g[g] == rank && i < n_owned, "reference: an id sent to a rank that does not own it");
    if (is_double) {
      double a = ((double*)result)[i], b;
      memcpy(&b, &rb[k + 1], 8);
      ((double*)result)[i] = op == 0 ? a + b : op == 1 ? (b > a ? b : a) : op == 2 ? (b < a ? b : a) : b;
    } else {
      int64_t a = ((int64_t*)result)[i], b = rb[k + 1];
      ((int64_t*)result)[i] = op == 0 ? a + b : op == 1 ? (b > a ? b : a) : op == 2 ? (b < a ? b : a) : b;
    }
  }
  free(sc); free(rc); free(sd); free(rd); free(at); free(sb); free(rb);
}

/* The same error code and message on every rank, naming `id`, and no pattern. */
static void expect_error(const char* what, int rc, commfit_pattern* p, const char* id, const char* text) {
  const char* msg = commfit_exec_last_error();
  int lo = 0, hi = 0, len = (int)strlen(msg), len_lo = 0, len_hi = 0;
  unsigned sum = 0, sum_lo = 0, sum_hi = 0;
  const char* c;
  char line[600];
  for (c = msg; *c; ++c) sum = sum * 31u + (unsigned char)*c;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&len, &len_lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&len, &len_hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&sum, &sum_lo, 1, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&sum, &sum_hi, 1, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
  snprintf(line, sizeof line, "%s: rc %d, message \"%s\"", what, rc, msg);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE, line);
  CHECK(lo == hi && len_lo == len_hi && sum_lo == sum_hi, line); /* the same everywhere */
  CHECK(p == NULL, line);
  CHECK(strstr(msg, id) != NULL, line);
  CHECK(strstr(msg, text) != NULL, line);
  if (rank == 0) printf("  %s: %s\n", what, msg);
}

/* One owner lookup method (options: its plan_options): gather of MPI_DOUBLE value by value, and
 * scatter with MPI_SUM and MPI_REPLACE identical to the MPI_Alltoallv reference. */
static void check_method(const char* options, const int64_t* owned, int64_t n_owned, const int64_t* needed, int64_t n_needed) {
  commfit_pattern* p = NULL;
  double* od = malloc(8 * (size_t)(n_owned + 1));
  double* nd = malloc(8 * (size_t)(n_needed + 1));
  double* rd = malloc(8 * (size_t)(n_owned + 1));
  int64_t i, j;
  int bad = 0, op, rc;
  double t0 = MPI_Wtime(), t_lookup;
  char what[300];
  rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, options, &p);
  t_lookup = MPI_Wtime() - t0;
  snprintf(what, sizeof what, "%s: from_ids: %s", options, commfit_exec_last_error());
  CHECK(rc == COMMFIT_EXEC_SUCCESS && p != NULL, what);
  if (p) {
    for (i = 0; i < n_owned; ++i) od[i] = dvalue(owned[i]);
    for (j = 0; j < n_needed; ++j) nd[j] = -1;
    rc = commfit_pattern_gather(p, od, nd, MPI_DOUBLE);
    CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
    for (j = 0; j < n_needed; ++j) bad += nd[j] != dvalue(needed[j]);
    snprintf(what, sizeof what, "%s: gather: a needed value is not its owner's", options);
    CHECK(bad == 0, what);
    for (op = 0; op < 4; op += 3) {
      for (j = 0; j < n_needed; ++j) nd[j] = (double)((rank * 7919 + j * 31) % 1009) * 0.25 - 100;
      for (i = 0; i < n_owned; ++i) od[i] = rd[i] = dvalue(owned[i]) - 1000;
      reference_scatter(needed, n_needed, owned, n_owned, nd, 1, op, rd);
      rc = commfit_pattern_scatter(p, nd, od, MPI_DOUBLE, op == 0 ? MPI_SUM : MPI_REPLACE);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      for (bad = 0, i = 0; i < n_owned; ++i) bad += od[i] != rd[i];
      snprintf(what, sizeof what, "%s: scatter %s: an owned value differs from the reference", options, op == 0 ? "MPI_SUM" : "MPI_REPLACE");
      CHECK(bad == 0, what);
    }
  }
  commfit_pattern_free(&p);
  if (rank == 0) printf("  %-40s from_ids %.3f s, all %.3f s\n", options, t_lookup, MPI_Wtime() - t0);
  free(od); free(nd); free(rd);
}

/* What a caller does between begin and end: arithmetic, and an exchange of its own on another
 * communicator. */
static MPI_Comm other = MPI_COMM_NULL;
static double work_between(void) {
  double acc = 0, sum = 0;
  int k, token = rank, got = -1;
  for (k = 1; k < 20000; ++k) acc += 1.0 / k;
  MPI_Allreduce(&acc, &sum, 1, MPI_DOUBLE, MPI_SUM, other);
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size, 7, other, MPI_STATUS_IGNORE);
  return sum + got;
}

/* Split phase under one plan (options): gather_begin/end and scatter_begin/end with work between,
 * every value equal to the plain call's (gather of MPI_DOUBLE and MPI_INT64_T, scatter under all
 * four ops on doubles and MPI_SUM on int64), twice each; then the misuses, on every rank. */
static void check_split(const char* options, const int64_t* owned, int64_t n_owned, const int64_t* needed, int64_t n_needed) {
  commfit_pattern* p = NULL;
  double *od = malloc(8 * (size_t)(n_owned + 1)), *nd = malloc(8 * (size_t)(n_needed + 1)), *pd = malloc(8 * (size_t)(n_needed + 1));
  double *rd = malloc(8 * (size_t)(n_owned + 1));
  int64_t *oi = malloc(8 * (size_t)(n_owned + 1)), *ni = malloc(8 * (size_t)(n_needed + 1)), *pi = malloc(8 * (size_t)(n_needed + 1));
  int64_t *ri = malloc(8 * (size_t)(n_owned + 1));
  int64_t i, j;
  int bad = 0, op, iter, rc;
  char what[300];
  rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, options, &p);
  snprintf(what, sizeof what, "split %s: from_ids: %s", options ? options : "(defaults)", commfit_exec_last_error());
  CHECK(rc == COMMFIT_EXEC_SUCCESS && p != NULL, what);
  if (!p) return;
  for (iter = 0; iter < 2; ++iter) {
    for (i = 0; i < n_owned; ++i) od[i] = dvalue(owned[i]) + iter, oi[i] = ivalue(owned[i]) + iter;
    for (j = 0; j < n_needed; ++j) nd[j] = pd[j] = -1, ni[j] = pi[j] = -1;
    rc = commfit_pattern_gather(p, od, pd, MPI_DOUBLE);
    rc |= commfit_pattern_gather(p, oi, pi, MPI_INT64_T);
    rc |= commfit_pattern_gather_begin(p, od, nd, MPI_DOUBLE);
    work_between();
    rc |= commfit_pattern_gather_end(p);
    rc |= commfit_pattern_gather_begin(p, oi, ni, MPI_INT64_T);
    work_between();
    rc |= commfit_pattern_gather_end(p);
    CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
    for (j = 0; j < n_needed; ++j) bad += nd[j] != pd[j] || ni[j] != pi[j] || nd[j] != dvalue(needed[j]) + iter;
    snprintf(what, sizeof what, "split %s: gather_begin/end differs from gather", options ? options : "(defaults)");
    CHECK(bad == 0, what);
    for (op = 0; op < 4; ++op) {
      MPI_Op mpi_op = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : op == 2 ? MPI_MIN : MPI_REPLACE;
      for (j = 0; j < n_needed; ++j) nd[j] = (double)((rank * 7919 + j * 31 + iter) % 1009) * 0.25 - 100, ni[j] = (rank * 7919 + j * 31) % 1009 - 500;
      for (i = 0; i < n_owned; ++i) od[i] = rd[i] = dvalue(owned[i]) - 1000, oi[i] = ri[i] = ivalue(owned[i]) % 1000;
      rc = commfit_pattern_scatter(p, nd, rd, MPI_DOUBLE, mpi_op);
      rc |= commfit_pattern_scatter_begin(p, nd, od, MPI_DOUBLE, mpi_op);
      work_between();
      rc |= commfit_pattern_scatter_end(p);
      if (op == 0) {
        rc |= commfit_pattern_scatter(p, ni, ri, MPI_INT64_T, MPI_SUM);
        rc |= commfit_pattern_scatter_begin(p, ni, oi, MPI_INT64_T, MPI_SUM);
        work_between();
        rc |= commfit_pattern_scatter_end(p);
      }
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      for (bad = 0, i = 0; i < n_owned; ++i) bad += od[i] != rd[i] || oi[i] != ri[i];
      snprintf(what, sizeof what, "split %s: scatter_begin/end (op %d) differs from scatter", options ? options : "(defaults)", op);
      CHECK(bad == 0, what);
    }
  }
  /* The misuses: an end without its begin, a begin or a plain call while one is pending. */
  rc = commfit_pattern_gather_end(p);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "gather_end was called without gather_begin"), "gather_end without begin");
  rc = commfit_pattern_scatter_end(p);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "scatter_end was called without scatter_begin"), "scatter_end without begin");
  for (i = 0; i < n_owned; ++i) od[i] = dvalue(owned[i]);
  rc = commfit_pattern_gather_begin(p, od, nd, MPI_DOUBLE);
  CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
  rc = commfit_pattern_gather_begin(p, od, nd, MPI_DOUBLE);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "gather_begin: a split gather is pending"), "gather_begin while pending");
  rc = commfit_pattern_gather(p, od, pd, MPI_DOUBLE);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "gather: a split gather is pending"), "gather while pending");
  rc = commfit_pattern_scatter(p, nd, od, MPI_DOUBLE, MPI_SUM);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "scatter: a split gather is pending"), "scatter while pending");
  rc = commfit_pattern_scatter_begin(p, nd, od, MPI_DOUBLE, MPI_SUM);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "scatter_begin: a split gather is pending"), "scatter_begin while pending");
  rc = commfit_pattern_scatter_end(p);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "while a split gather is pending"), "scatter_end while a gather is pending");
  rc = commfit_pattern_gather_end(p);
  CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
  for (bad = 0, j = 0; j < n_needed; ++j) bad += nd[j] != dvalue(needed[j]);
  CHECK(bad == 0, "the pending gather survives the refused calls");
  commfit_pattern_free(&p);
  if (rank == 0) printf("  split phase %s: ok\n", options ? options : "(defaults)");
  free(od); free(nd); free(pd); free(rd); free(oi); free(ni); free(pi); free(ri);
}

int main(int argc, char** argv) {
  int64_t n_owned, n_needed, i, j;
  int64_t *owned, *needed;
  commfit_pattern* p = NULL;
  int rc, op;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  make_ownership();
  n_owned = start[rank + 1] - start[rank];
  owned = malloc(sizeof(int64_t) * (size_t)(n_owned + 2));
  for (i = 0; i < n_owned; ++i) owned[i] = id_of(perm[start[rank] + i]);
  needed = make_needed(&n_needed);

  rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, NULL, &p);
  CHECK(rc == COMMFIT_EXEC_SUCCESS && p != NULL, commfit_exec_last_error());
  if (p) {
    double* od = malloc(8 * (size_t)(n_owned + 1));
    double* nd = malloc(8 * (size_t)(n_needed + 1));
    double* rd = malloc(8 * (size_t)(n_owned + 1));
    int64_t* oi = malloc(8 * (size_t)(n_owned + 1));
    int64_t* ni = malloc(8 * (size_t)(n_needed + 1));
    int64_t* ri = malloc(8 * (size_t)(n_owned + 1));
    int* o4 = malloc(4 * (size_t)(n_owned + 1));
    int* n4 = malloc(4 * (size_t)(n_needed + 1));
    int iter, bad = 0;
    for (i = 0; i < n_owned; ++i) od[i] = dvalue(owned[i]), oi[i] = ivalue(owned[i]), o4[i] = (int)(owned[i] % 1000003);

    /* Gather, twice each (the second replays the executor). */
    for (iter = 0; iter < 2; ++iter) {
      for (j = 0; j < n_needed; ++j) nd[j] = -1, ni[j] = -1, n4[j] = -1;
      rc = commfit_pattern_gather(p, od, nd, MPI_DOUBLE);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      rc = commfit_pattern_gather(p, oi, ni, MPI_INT64_T);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      rc = commfit_pattern_gather(p, o4, n4, MPI_INT);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      for (j = 0; j < n_needed; ++j)
        bad += nd[j] != dvalue(needed[j]) || ni[j] != ivalue(needed[j]) || n4[j] != (int)(needed[j] % 1000003);
    }
    CHECK(bad == 0, "gather: a needed value is not its owner's");

    /* Scatter: each op on doubles and on int64, against the MPI_Alltoallv reference. The needed
     * values differ per rank and position so that the order of the combination shows. */
    for (op = 0; op < 4; ++op) {
      static const char* names[] = {"MPI_SUM", "MPI_MAX", "MPI_MIN", "MPI_REPLACE"};
      MPI_Op mpi_op = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : op == 2 ? MPI_MIN : MPI_REPLACE;
      char what[80];
      for (j = 0; j < n_needed; ++j) nd[j] = (double)((rank * 7919 + j * 31) % 1009) * 0.25 - 100, ni[j] = (rank * 7919 + j * 31) % 1009 - 500;
      for (i = 0; i < n_owned; ++i) od[i] = rd[i] = dvalue(owned[i]) - 1000, oi[i] = ri[i] = ivalue(owned[i]) % 1000;
      reference_scatter(needed, n_needed, owned, n_owned, nd, 1, op, rd);
      reference_scatter(needed, n_needed, owned, n_owned, ni, 0, op, ri);
      rc = commfit_pattern_scatter(p, nd, od, MPI_DOUBLE, mpi_op);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      rc = commfit_pattern_scatter(p, ni, oi, MPI_INT64_T, mpi_op);
      CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
      for (bad = 0, i = 0; i < n_owned; ++i) bad += od[i] != rd[i] || oi[i] != ri[i];
      snprintf(what, sizeof what, "scatter %s: an owned value differs from the reference", names[op]);
      CHECK(bad == 0, what);
    }

    /* Refused arguments: a derived datatype, an op outside the four. */
    {
      MPI_Datatype pair;
      MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
      MPI_Type_commit(&pair);
      rc = commfit_pattern_gather(p, od, nd, pair);
      CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "predefined contiguous") != NULL, "derived datatype");
      MPI_Type_free(&pair);
      rc = commfit_pattern_scatter(p, nd, od, MPI_DOUBLE, MPI_PROD);
      CHECK(rc == COMMFIT_EXEC_ERR_USAGE && strstr(commfit_exec_last_error(), "MPI_SUM, MPI_MAX, MPI_MIN or MPI_REPLACE") != NULL, "MPI_PROD");
    }
    free(od); free(nd); free(rd); free(oi); free(ni); free(ri); free(o4); free(n4);
  }
  commfit_pattern_free(&p);
  CHECK(p == NULL, "free");
  commfit_pattern_free(&p);

  /* Every lookup method and every reverse step on the same inputs. */
  {
    static const char* methods[] = {
        "lookup=directory",           "lookup=auto reverse=auto",       "lookup=directory reverse=nbx",
        "lookup=directory reverse=allreduce", "lookup=directory reverse=reduce-scatter",
        "lookup=directory-block reverse=nbx", "lookup=directory-block reverse=allreduce",
        "lookup=directory-block reverse=reduce-scatter",
        "lookup=ring reverse=nbx",    "lookup=ring reverse=allreduce",  "lookup=ring reverse=reduce-scatter",
        "lookup=ring2d reverse=nbx",  "lookup=ring2d reverse=allreduce", "lookup=ring2d reverse=reduce-scatter",
        "lookup=ring3d reverse=nbx",  "lookup=ring3d reverse=allreduce", "lookup=ring3d reverse=reduce-scatter",
        "lookup=ring4d reverse=nbx",  "lookup=ring4d reverse=allreduce", "lookup=ring4d reverse=reduce-scatter"};
    size_t k;
    for (k = 0; k < sizeof methods / sizeof *methods; ++k) check_method(methods[k], owned, n_owned, needed, n_needed);
  }

  /* Split phase: one-phase and multi-phase plans, and a request window (which overlaps nothing). */
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  {
    static const char* plans[] = {NULL, "strategy=direct", "strategy=bounded concurrency=2", "strategy=async",
                                  "strategy=throttled max-outstanding=8"};
    size_t k;
    for (k = 0; k < sizeof plans / sizeof *plans; ++k) check_split(plans[k], owned, n_owned, needed, n_needed);
  }
  MPI_Comm_free(&other);

  /* Errors on every rank, under the directory (its registrations and queries by the default
   * reduce-scatter and by NBX) and under a ring. An id nobody owns, needed by rank 0. */
  for (op = 0; op < 3; ++op) {
    const char* options = op == 0 ? NULL : op == 1 ? "lookup=directory-block reverse=nbx" : "lookup=ring2d reverse=reduce-scatter";
    char id[40];
    int64_t extra = id_of(N + 5), keep = n_needed ? needed[0] : 0;
    if (rank == 0) needed[0] = extra;
    snprintf(id, sizeof id, "id %lld ", (long long)extra);
    p = (commfit_pattern*)&p; /* not NULL: must be cleared */
    rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, options, &p);
    expect_error("unowned id", rc, p, id, "owned by no rank");
    if (rank == 0) needed[0] = keep;

    /* An id owned twice: the last rank also owns rank 0's first id. */
    extra = id_of(perm[0]);
    snprintf(id, sizeof id, "id %lld ", (long long)extra);
    if (rank == size - 1) owned[n_owned] = extra;
    rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned + (rank == size - 1), owned, n_needed, needed, options, &p);
    expect_error("doubly owned id", rc, p, id, size > 1 ? "is owned by ranks 0 and" : "is owned twice by rank 0");

    /* A negative id, needed by the last rank. */
    rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, rank == size - 1 ? 1 : n_needed,
                                  rank == size - 1 ? (int64_t[]){-5} : needed, options, &p);
    expect_error("negative id", rc, p, "id -5 ", "is negative");
  }

  /* Bad lookup options: a value no method has, a reverse step no method has, ranks that differ. */
  rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, "lookup=spiral", &p);
  expect_error("bad lookup", rc, p, "lookup=spiral", "expected an owner lookup method (auto, directory, directory-block, ring, ring2d");
  rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, "strategy=direct reverse=gossip", &p);
  expect_error("bad reverse", rc, p, "reverse=gossip", "expected a reverse-step method (auto, nbx, allreduce, reduce-scatter)");
  if (size > 1) {
    rc = commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, rank == 0 ? "lookup=ring" : "lookup=directory", &p);
    expect_error("lookup differs between ranks", rc, p, "lookup=", "the owner lookup options differ between ranks");
  }

  {
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_pattern: %d ranks, %d ids, %d failures\n", size, N, all);
    free(perm); free(owner_of_g); free(local_of_g); free(owned); free(needed);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
  }
}
