// An irregular halo exchange with the commfit executor.
//
// The ranks form a 2D grid (MPI_Dims_create); each owns a block of nx x ny cells whose size varies
// from rank to rank (seeded), and sends its neighbours (8 directions, not periodic) halo strips of
// width 2: a column of 2 x ny doubles east and west, a row of nx x 2 north and south, 2 x 2 at the
// corners. Edge ranks have fewer neighbours, and block sizes differ, so the pattern is irregular:
// the MPI_Alltoallv counts a real code would pass.
//
//   mpirun -np 6 halo_exchange                        plan in-process with the planner library
//   mpirun -np 6 halo_exchange --write-matrix m.json  write the pattern for `commfit plan`
//   commfit plan m.json -o halo.plan                  (or -o halo.cfp: the binary form)
//   mpirun -np 6 halo_exchange --plan halo.plan       load the plan, as a production code would
//
// Either way it runs the exchange 100 times (--iterations), checks every received value, compares
// the last exchange with MPI_Alltoallv, and prints the mean time of both.
#include "backends/exec/commfit_exec.hpp"
#include "ir/matrix_io.h"
#include "planner/pipeline.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr int kWidth = 2;   // halo width in cells

struct Grid {
  int dims[2] = {0, 0};
  int size = 0;
  int x(int r) const { return r % dims[0]; }
  int y(int r) const { return r / dims[0]; }
  int at(int x, int y) const { return x < 0 || y < 0 || x >= dims[0] || y >= dims[1] ? -1 : y * dims[0] + x; }
  // Block size of rank r, in [16, 256) cells each way, seeded by the rank.
  int nx(int r) const { return 16 + int((2654435761u * unsigned(r + 1)) % 240u); }
  int ny(int r) const { return 16 + int((2246822519u * unsigned(r + 7)) % 240u); }
  // Doubles rank r sends to its neighbour in direction (dx, dy).
  int strip(int r, int dx, int dy) const {
    return (dx != 0 ? kWidth : nx(r)) * (dy != 0 ? kWidth : ny(r));
  }
};

// The pattern in doubles: counts[src][dst].
std::vector<std::vector<int>> halo_counts(const Grid& g) {
  std::vector<std::vector<int>> c(g.size, std::vector<int>(g.size, 0));
  for (int r = 0; r < g.size; ++r)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int n = g.at(g.x(r) + dx, g.y(r) + dy);
        if ((dx || dy) && n >= 0) c[r][n] = g.strip(r, dx, dy);
      }
  return c;
}

double value(int src, int dst, int k, int iter) { return src * 1e6 + dst * 1e3 + k + iter * 1e-3; }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string plan_path, matrix_out, protocol = "post-all";
  int iterations = 100;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--plan" && k + 1 < argc) plan_path = argv[++k];
    else if (a == "--write-matrix" && k + 1 < argc) matrix_out = argv[++k];
    else if (a == "--protocol" && k + 1 < argc) protocol = argv[++k];
    else if (a == "--iterations" && k + 1 < argc) iterations = std::atoi(argv[++k]);
    else {
      if (rank == 0)
        std::fprintf(stderr, "usage: halo_exchange [--plan PATH | --write-matrix FILE] [--protocol post-all|handshake] [--iterations N]\n");
      MPI_Finalize();
      return 2;
    }
  }

  Grid g;
  g.size = size;
  MPI_Dims_create(size, 2, g.dims);
  const auto counts = halo_counts(g);
  std::vector<commfit::Message> msgs;
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < size; ++j) msgs.push_back({i, j, commfit::Bytes(counts[i][j]) * sizeof(double)});
  commfit::CommMatrix m = commfit::make_matrix(size, msgs);
  m.name = "halo_exchange";
  m.description = "irregular 2D halo exchange, width 2, of examples/halo_exchange.cpp";

  if (!matrix_out.empty()) {
    if (rank == 0) {
      std::ofstream(matrix_out) << commfit::matrix_json(m);
      std::printf("wrote %s: %d ranks on a %d x %d grid, %lld messages\n", matrix_out.c_str(), size, g.dims[0],
                  g.dims[1], static_cast<long long>(m.nnz()));
    }
    MPI_Finalize();
    return 0;
  }

  int status = 0;
  try {
    commfit::exec::Options options;
    options.protocol = commfit::exec::parse_protocol(protocol);
    // Either the plan `commfit plan` wrote, or one made here: every rank runs the same
    // deterministic planner and keeps its own schedule.
    commfit::exec::Executor ex =
        plan_path.empty()
            ? commfit::exec::Executor::from_schedule(commfit::make_plan(m, {}).ranks[rank], MPI_COMM_WORLD, options,
                                                     "halo_exchange (planned in-process)")
            : commfit::exec::Executor::load(plan_path, MPI_COMM_WORLD, options);

    std::vector<int> sc(size), sd(size), rc(size), rd(size);
    int stotal = 0, rtotal = 0;
    for (int q = 0; q < size; ++q) {
      sc[q] = counts[rank][q];
      rc[q] = counts[q][rank];
      sd[q] = stotal;
      rd[q] = rtotal;
      stotal += sc[q];
      rtotal += rc[q];
    }
    std::vector<double> halo_out(stotal), halo_in(rtotal), reference(rtotal);
    long wrong = 0;
    double t_exec = 0, t_ref = 0;
    for (int iter = 0; iter < iterations; ++iter) {
      for (int q = 0; q < size; ++q)   // "pack" the strips
        for (int k = 0; k < sc[q]; ++k) halo_out[sd[q] + k] = value(rank, q, k, iter);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      ex.execute(halo_out.data(), sc.data(), sd.data(), MPI_DOUBLE, halo_in.data(), rc.data(), rd.data(), MPI_DOUBLE);
      t_exec += MPI_Wtime() - t0;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      MPI_Alltoallv(halo_out.data(), sc.data(), sd.data(), MPI_DOUBLE, reference.data(), rc.data(), rd.data(),
                    MPI_DOUBLE, MPI_COMM_WORLD);
      t_ref += MPI_Wtime() - t0;
      for (int q = 0; q < size; ++q)   // "unpack" and check
        for (int k = 0; k < rc[q]; ++k) wrong += halo_in[rd[q] + k] != value(q, rank, k, iter);
      wrong += std::memcmp(halo_in.data(), reference.data(), reference.size() * sizeof(double)) != 0;
    }
    long all_wrong = 0;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double times[2] = {t_exec, t_ref}, max_times[2] = {0, 0};
    MPI_Reduce(times, max_times, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("halo_exchange: %d ranks on a %d x %d grid, %lld messages, %u phases, protocol %s\n", size,
                  g.dims[0], g.dims[1], static_cast<long long>(m.nnz()), ex.stats().phases, protocol.c_str());
      std::printf("  %d exchanges, %ld wrong values; mean time per exchange: executor %.1f us, MPI_Alltoallv %.1f us\n",
                  iterations, all_wrong, 1e6 * max_times[0] / iterations, 1e6 * max_times[1] / iterations);
    }
    MPI_Bcast(&all_wrong, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    status = all_wrong == 0 ? 0 : 1;
  } catch (const commfit::exec::Error& e) {   // raised on every rank alike
    if (rank == 0) std::fprintf(stderr, "halo_exchange: error: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {   // options or planning: the same on every rank
    if (rank == 0) std::fprintf(stderr, "halo_exchange: error: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
