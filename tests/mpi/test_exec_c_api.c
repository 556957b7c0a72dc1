/* The C API from C: load (directory and binary file), execute (bytes and MPI_Datatype), split
 * calls (start and finish, with work between), free,
 * and errors returned with the same code and message on every rank. Needs the fixture written
 * by exec_write_plan (the pattern bytes(i, j) = ((3i + 5j) mod 7) * 100).
 * Usage: mpirun -np 4 test_exec_c_api DIR */
#include "backends/exec/commfit_exec.h"
#include "check_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

static int bytes_of(int i, int j) { return ((3 * i + 5 * j) % 7) * 100; }
static unsigned char byte_of(int src, int dst, int k, int iter) {
  return (unsigned char)(src * 31 + dst * 17 + k * 7 + (k >> 8) + iter * 101);
}

/* Runs one exchange with `ex` (typed: in ints; split: start, work, finish) and compares with
 * MPI_Alltoallv. */
static void exchange(commfit_exec_t ex, int typed, int split, int iter) {
  int *sc = calloc(size, sizeof(int)), *sd = calloc(size, sizeof(int));
  int *rc = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
  int unit = typed ? 4 : 1, stotal = 0, rtotal = 0, q, k, rc_exec;
  for (q = size - 1; q >= 0; --q) { /* reversed layout with gaps */
    sc[q] = bytes_of(rank, q) / unit;
    rc[q] = bytes_of(q, rank) / unit;
    sd[q] = stotal;
    rd[q] = rtotal;
    stotal += sc[q] + 1;
    rtotal += rc[q] + 2;
  }
  unsigned char *sb = malloc((size_t)stotal * unit + 1), *rb = malloc((size_t)rtotal * unit + 1),
                *ref = malloc((size_t)rtotal * unit + 1);
  memset(sb, 0xA5, (size_t)stotal * unit + 1);
  memset(rb, 0xEE, (size_t)rtotal * unit + 1);
  memset(ref, 0xEE, (size_t)rtotal * unit + 1);
  for (q = 0; q < size; ++q)
    for (k = 0; k < sc[q] * unit; ++k) sb[sd[q] * unit + k] = byte_of(rank, q, k, iter);
  MPI_Alltoallv(sb, sc, sd, typed ? MPI_INT : MPI_BYTE, ref, rc, rd, typed ? MPI_INT : MPI_BYTE, MPI_COMM_WORLD);
  if (split) {
    double work = 0;
    rc_exec = typed ? commfit_exec_start_typed(ex, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT)
                    : commfit_exec_start(ex, sb, sc, sd, rb, rc, rd);
    CHECK(rc_exec == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
    /* One split call in flight: a second start is refused on this rank, nothing collective. */
    CHECK(commfit_exec_start(ex, sb, sc, sd, rb, rc, rd) == COMMFIT_EXEC_ERR_USAGE, "second start: expected COMMFIT_EXEC_ERR_USAGE");
    for (k = 0; k < 100000; ++k) work += k * 1e-9; /* the caller's work while the messages travel */
    CHECK(work > 0, "work");
    rc_exec = commfit_exec_finish(ex);
  } else {
    rc_exec = typed ? commfit_exec_execute_typed(ex, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT)
                    : commfit_exec_execute(ex, sb, sc, sd, rb, rc, rd);
  }
  CHECK(rc_exec == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
  CHECK(memcmp(rb, ref, (size_t)rtotal * unit + 1) == 0, "receive buffer differs from MPI_Alltoallv");
  for (q = 0; q < size; ++q)
    for (k = 0; k < rc[q] * unit; ++k)
      if (ref[rd[q] * unit + k] != byte_of(q, rank, k, iter)) {
        CHECK(0, "MPI_Alltoallv reference is not the expected pattern");
        q = size;
        break;
      }
  /* Other counts: the same error code on every rank. */
  if (!typed) {
    sc[(rank + 1) % size] += 1;
    rc_exec = commfit_exec_execute(ex, sb, sc, sd, rb, rc, rd);
    CHECK(rc_exec == COMMFIT_EXEC_ERR_COUNTS, "other counts: expected COMMFIT_EXEC_ERR_COUNTS");
    CHECK(strstr(commfit_exec_last_error(), "the plan was made for other counts") != NULL, commfit_exec_last_error());
  }
  free(sc); free(sd); free(rc); free(rd); free(sb); free(rb); free(ref);
}

int main(int argc, char** argv) {
  char path[4096];
  commfit_exec_t ex = NULL;
  commfit_exec_options o;
  int rc;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: test_exec_c_api DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  snprintf(path, sizeof path, "%s/formula.plan", argv[1]);
  rc = commfit_exec_load(path, MPI_COMM_WORLD, NULL, &ex);
  CHECK(rc == COMMFIT_EXEC_SUCCESS && ex != NULL, commfit_exec_last_error());
  if (ex) {
    exchange(ex, 0, 0, 1);
    exchange(ex, 1, 0, 2);
    exchange(ex, 0, 0, 3);
    exchange(ex, 0, 1, 5);
    exchange(ex, 1, 1, 6);
    CHECK(commfit_exec_finish(ex) == COMMFIT_EXEC_ERR_USAGE, "finish without start: expected COMMFIT_EXEC_ERR_USAGE");
    CHECK(strstr(commfit_exec_last_error(), "start") != NULL, commfit_exec_last_error());
  }
  CHECK(commfit_exec_free(&ex) == COMMFIT_EXEC_SUCCESS && ex == NULL, "free");
  CHECK(commfit_exec_free(&ex) == COMMFIT_EXEC_SUCCESS, "free of NULL");

  commfit_exec_default_options(&o);
  o.protocol = COMMFIT_EXEC_HANDSHAKE;
  o.barrier = 1;
  snprintf(path, sizeof path, "%s/formula.cfp", argv[1]);
  rc = commfit_exec_load(path, MPI_COMM_WORLD, &o, &ex);
  CHECK(rc == COMMFIT_EXEC_SUCCESS, commfit_exec_last_error());
  if (ex) {
    exchange(ex, 0, 0, 4);
    exchange(ex, 1, 1, 7); /* handshake and barrier: start posts nothing, finish runs it all */
  }
  commfit_exec_free(&ex);

  /* Errors: the same code on every rank, a message that says what is wrong. */
  snprintf(path, sizeof path, "%s/no-such.plan", argv[1]);
  rc = commfit_exec_load(path, MPI_COMM_WORLD, NULL, &ex);
  CHECK(rc == COMMFIT_EXEC_ERR_PLAN && ex == NULL, "missing plan: expected COMMFIT_EXEC_ERR_PLAN");
  CHECK(strstr(commfit_exec_last_error(), "no such plan directory or binary plan file") != NULL, commfit_exec_last_error());
  commfit_exec_default_options(&o);
  o.protocol = 7;
  snprintf(path, sizeof path, "%s/formula.plan", argv[1]);
  rc = commfit_exec_load(path, MPI_COMM_WORLD, &o, &ex);
  CHECK(rc == COMMFIT_EXEC_ERR_USAGE, "unknown protocol: expected COMMFIT_EXEC_ERR_USAGE");
  CHECK(strstr(commfit_exec_last_error(), "unknown protocol 7") != NULL, commfit_exec_last_error());
  CHECK(commfit_exec_execute(NULL, NULL, NULL, NULL, NULL, NULL, NULL) == COMMFIT_EXEC_ERR_USAGE, "NULL executor");
  CHECK(commfit_exec_start(NULL, NULL, NULL, NULL, NULL, NULL, NULL) == COMMFIT_EXEC_ERR_USAGE, "NULL executor (start)");
  CHECK(commfit_exec_finish(NULL) == COMMFIT_EXEC_ERR_USAGE, "NULL executor (finish)");

  {
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_exec_c_api: %d ranks, %d failures\n", size, all);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
  }
}
