/* An ordinary MPI program that knows nothing of commfit: a loop of MPI_Alltoallv on an irregular
 * pattern (MPI_INT, displacements with gaps), with MPI_Alltoall, MPI_Neighbor_alltoallv on a
 * distributed graph, an MPI_IN_PLACE call, a non-contiguous datatype and a split communicator mixed in. Run it with and without
 * LD_PRELOAD=libcommfit_pmpi.so (tests/mpi/pmpi.cmake): the output must be byte-identical.
 *   mpirun -np N pmpi_alltoallv ITERATIONS steady|change|resize|drift|short|types
 * "change" switches to a second pattern half way, and back to the first at three quarters;
 * "resize" does the same with the first pattern's nonzeros at other sizes (pattern reuse).
 * "drift" changes the pattern as a running code does: in blocks of 16 calls, the first six repeat
 * one pattern (it is planned), then each pair's size changes every third call, the pairs out of
 * step (a different pair changes on nearly every call); every other block a few pairs gain a peer
 * and a few lose one (another sparsity).
 * "short" is an erroneous program: in its last quarter rank 0 sends the first rank it sends to one
 * int fewer than that rank expects (MPI delivers what was sent and leaves the last int alone; so must the interposer).
 * Prints, per rank, a digest of every receive buffer of every call (gaps included).
 * "types" times each kind of call of the loop alone instead (ITERATIONS calls of it, after as many
 * untimed) and prints rank 0's time per call of each. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t digest = 1469598103934665603ull;

static void absorb(const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t k = 0; k < n; ++k) digest = (digest ^ p[k]) * 1099511628211ull;
}

/* Ints rank i sends rank j in pattern `which`: irregular, about a third of the pairs empty.
 * Pattern 2 has pattern 0's nonzeros with other sizes; pattern 3 is pattern 0 with one more int
 * from rank 0 to rank 1 only (two ranks' counts differ from the plan's, the others' do not). */
static int count(int which, int i, int j, int p) {
  const int h = (i * 7 + j * 13 + (which == 1) * 5) % 11;
  if (h < 4 && i != j) return 0;
  if (which == 2) return 3 + (i * 11 + j * 5 + p) % 150;
  if (which == 3) return count(0, i, j, p) + (i == 0 && j == 1 % p);
  return 1 + (i * 31 + j * 17 + which * 101 + p) % (which ? 300 : 97);
}

/* "drift": ints rank i sends rank j in call `iter` (a function of i, j and iter: both ends agree). */
static int drift_count(int i, int j, int p, int iter) {
  const int block = iter / 16, at = iter % 16;
  int n = count(0, i, j, p);
  if (block % 2 == 1 && i != j) {
    if (n == 0 && (i * 3 + j) % 5 == block % 5) n = 4 + (i + j) % 7;    /* a new peer */
    else if (n > 0 && (i + 2 * j) % 7 == 0) n = 0;                      /* a removed one */
  }
  if (n > 0 && at >= 6) n += ((iter + i * 5 + j * 3) / 3) % 4;         /* sizes, out of step */
  return n;
}

static void alltoallv_round(MPI_Comm comm, int which, int iter) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* sc = malloc(sizeof(int) * p);
  int* sd = malloc(sizeof(int) * p);
  int* rc = malloc(sizeof(int) * p);
  int* rd = malloc(sizeof(int) * p);
  int st = 0, rt = 0;
  const int short_by_one = which == 4;
  if (which == 4) which = 0;
  int short_peer = -1; /* "short": the first rank rank 0 sends to */
  for (int j = 1; short_by_one && short_peer < 0 && j < p; ++j)
    if (count(0, 0, j, p) > 0) short_peer = j;
  for (int j = 0; j < p; ++j) {
    sc[j] = which == 5 ? drift_count(rank, j, p, iter) : count(which, rank, j, p) - (rank == 0 && j == short_peer);
    rc[j] = which == 5 ? drift_count(j, rank, p, iter) : count(which, j, rank, p);
    sd[j] = st;
    rd[j] = rt;
    st += sc[j] + 2; /* gaps between segments */
    rt += rc[j] + 3;
  }
  int* send = malloc(sizeof(int) * (st + 1));
  int* recv = malloc(sizeof(int) * (rt + 1));
  for (int k = 0; k < st; ++k) send[k] = rank * 1000003 + k * 7 + iter * 131;
  for (int k = 0; k < rt; ++k) recv[k] = -1;
  MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm);
  absorb(recv, sizeof(int) * rt);
  free(send), free(recv), free(sc), free(sd), free(rc), free(rd);
}

static void alltoall_round(MPI_Comm comm, int iter) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int n = 5;
  int* send = malloc(sizeof(int) * n * p);
  int* recv = malloc(sizeof(int) * n * p);
  for (int k = 0; k < n * p; ++k) send[k] = rank * 7919 + k + iter;
  MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, comm);
  absorb(recv, sizeof(int) * n * p);
  free(send), free(recv);
}

/* MPI_Neighbor_alltoallv on a graph of rank +-1 and +3 (mod p, each neighbour once). */
static MPI_Comm neighbour_graph(void) {
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int out[3], in[3], nout = 0, nin = 0;
  const int steps[3] = {1, -1, 3};
  for (int k = 0; k < 3; ++k) {
    const int d = ((rank + steps[k]) % p + p) % p, s = ((rank - steps[k]) % p + p) % p;
    int dup = d == rank;
    for (int m = 0; m < nout; ++m) dup |= out[m] == d;
    if (!dup) out[nout++] = d;
    dup = s == rank;
    for (int m = 0; m < nin; ++m) dup |= in[m] == s;
    if (!dup) in[nin++] = s;
  }
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, MPI_UNWEIGHTED, nout, out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  return g;
}

static void neighbour_round(MPI_Comm g, int iter) {
  int rank, nin, nout, weighted;
  MPI_Comm_rank(g, &rank);
  MPI_Dist_graph_neighbors_count(g, &nin, &nout, &weighted);
  int in[3], out[3], sc[3], sd[3], rc[3], rd[3];
  MPI_Dist_graph_neighbors(g, nin, in, MPI_UNWEIGHTED, nout, out, MPI_UNWEIGHTED);
  int st = 0, rt = 0;
  for (int k = 0; k < nout; ++k) sc[k] = 1 + (rank * 5 + out[k] * 3) % 40, sd[k] = st, st += sc[k] + 1;
  for (int k = 0; k < nin; ++k) rc[k] = 1 + (in[k] * 5 + rank * 3) % 40, rd[k] = rt, rt += rc[k] + 1;
  int* send = malloc(sizeof(int) * (st + 1));
  int* recv = malloc(sizeof(int) * (rt + 1));
  for (int k = 0; k < st; ++k) send[k] = rank * 313 + k + iter;
  for (int k = 0; k < rt; ++k) recv[k] = -1;
  MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, g);
  absorb(recv, sizeof(int) * rt);
  free(send), free(recv);
}

/* Calls the interposer must hand to MPI untouched. */
static void unusual_rounds(MPI_Comm comm, int iter) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* c = malloc(sizeof(int) * p);
  int* d = malloc(sizeof(int) * p);
  for (int j = 0; j < p; ++j) c[j] = 2, d[j] = 2 * j;
  int* buf = malloc(sizeof(int) * 2 * p);
  for (int k = 0; k < 2 * p; ++k) buf[k] = rank * 100 + k + iter;
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, c, d, MPI_INT, comm);
  absorb(buf, sizeof(int) * 2 * p);
  /* A strided type: two ints with one between them (extent 3 ints). */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int* send = malloc(sizeof(int) * 4 * p);
  int* recv = malloc(sizeof(int) * 4 * p);
  for (int k = 0; k < 4 * p; ++k) send[k] = rank * 10 + k, recv[k] = -1;
  for (int j = 0; j < p; ++j) c[j] = 1, d[j] = j; /* in extents of 3 ints: ints 3j and 3j + 2 */
  int* rcnt = malloc(sizeof(int) * p);
  int* rdsp = malloc(sizeof(int) * p);
  for (int j = 0; j < p; ++j) rcnt[j] = 2, rdsp[j] = 4 * j;
  MPI_Alltoallv(send, c, d, strided, recv, rcnt, rdsp, MPI_INT, comm);
  absorb(recv, sizeof(int) * 4 * p);
  MPI_Type_free(&strided);
  free(c), free(d), free(buf), free(send), free(recv), free(rcnt), free(rdsp);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int iterations = argc > 1 ? atoi(argv[1]) : 20;
  const int change = argc > 2 && strcmp(argv[2], "change") == 0 ? 1 : argc > 2 && strcmp(argv[2], "resize") == 0 ? 2 : 0;
  const int short_end = argc > 2 && strcmp(argv[2], "short") == 0;
  const int drift = argc > 2 && strcmp(argv[2], "drift") == 0;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm graph = neighbour_graph();
  if (argc > 2 && strcmp(argv[2], "types") == 0) {
    static const char* const names[5] = {"MPI_Alltoallv (world)", "MPI_Alltoallv (a half)", "MPI_Alltoall", "MPI_Neighbor_alltoallv",
                                         "in place and strided"};
    for (int kind = 0; kind < 5; ++kind)
      for (int timed = 0; timed < 2; ++timed) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int it = 0; it < iterations; ++it) {
          if (kind == 0) alltoallv_round(MPI_COMM_WORLD, 0, it);
          if (kind == 1) alltoallv_round(half, 0, it);
          if (kind == 2) alltoall_round(MPI_COMM_WORLD, it);
          if (kind == 3) neighbour_round(graph, it);
          if (kind == 4) unusual_rounds(MPI_COMM_WORLD, it);
        }
        const double t = MPI_Wtime() - t0;
        if (rank == 0 && timed) printf("%s: %.3f us per call\n", names[kind], 1e6 * t / iterations);
      }
    MPI_Comm_free(&half);
    MPI_Comm_free(&graph);
    MPI_Finalize();
    return 0;
  }
  for (int it = 0; it < iterations; ++it) {
    const int which = drift ? 5 : it == iterations / 4 ? 3 : short_end && it >= 3 * iterations / 4 ? 4 : it >= iterations / 2 && it < 3 * iterations / 4 ? change : 0;
    alltoallv_round(MPI_COMM_WORLD, which, it);
    alltoallv_round(half, 0, it);
    if (it % 4 == 0) alltoall_round(MPI_COMM_WORLD, it);
    if (it % 2 == 0) neighbour_round(graph, it);
    if (it % 5 == 0) unusual_rounds(MPI_COMM_WORLD, it);
  }
  MPI_Comm_free(&half);
  MPI_Comm_free(&graph);
  /* Rank order output, through rank 0. */
  unsigned long long mine = (unsigned long long)digest, *all = NULL;
  if (rank == 0) all = malloc(sizeof(unsigned long long) * p);
  MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < p; ++r) printf("rank %d digest %016llx\n", r, all[r]);
    free(all);
  }
  MPI_Finalize();
  return 0;
}
