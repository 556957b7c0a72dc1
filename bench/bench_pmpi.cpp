// bench_pmpi: what the PMPI interposer adds to a call it replays (docs/EXECUTOR.md, "The PMPI
// interposer"). Run it under LD_PRELOAD=libcommfit_pmpi.so; it times, block by block interleaved,
// (a) MPI_Alltoallv, which the interposer intercepts and replays, (b) the same plan's executor
// called directly (plan_in_job with the interposer's default options), and (c) PMPI_Alltoallv,
// MPI itself. (a) - (b) is the interposer's cost per call: finding the communicator's state and
// trying the last pattern. Without LD_PRELOAD, (a) is MPI and the table says so.
// --thread-multiple initialises MPI with MPI_THREAD_MULTIPLE (one thread calls): what the
// interposer's thread safety and MPI's own locking cost, against a run without it.
//
//   mpirun -np 8 -x LD_PRELOAD=build/runtime/libcommfit_pmpi.so bench_pmpi [--blocks 9] [--bytes 256] [--thread-multiple]
#include "runtime/in_job.hpp"
#include "bench/mpi_timing.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

using commfit::bench::time_block;

}  // namespace

int main(int argc, char** argv) {
  const bool multiple = std::any_of(argv + 1, argv + argc, [](const char* a) { return !std::strcmp(a, "--thread-multiple"); });
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  if (multiple && provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "bench_pmpi: --thread-multiple: this MPI provides no MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0, p = 0, blocks = 9, bytes = 256;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--blocks") && k + 1 < argc) blocks = std::max(1, std::atoi(argv[++k]));
    else if (!std::strcmp(argv[k], "--bytes") && k + 1 < argc) bytes = std::max(1, std::atoi(argv[++k]));
  }
  // An irregular pattern: each rank sends to about half the others, sizes around `bytes`.
  std::vector<int> sc(p), sd(p), rc(p), rd(p);
  auto count = [&](int i, int j) { return (i * 7 + j * 3) % 2 == 0 && i != j ? 0 : bytes / 2 + (i * 31 + j * 17) % bytes; };
  int st = 0, rt = 0;
  for (int q = 0; q < p; ++q) sc[q] = count(rank, q), sd[q] = st, st += sc[q], rc[q] = count(q, rank), rd[q] = rt, rt += rc[q];
  std::vector<char> send(static_cast<std::size_t>(st) + 1, 1), recv(static_cast<std::size_t>(rt) + 1);
  std::vector<std::int64_t> s64(sc.begin(), sc.end()), r64(rc.begin(), rc.end());
  commfit::runtime::InJobOptions o;
  o.plan.strategy = "auto";
  commfit::exec::Executor ex = commfit::runtime::plan_in_job(MPI_COMM_WORLD, s64.data(), r64.data(), o);
  auto intercepted = [&] { MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(), MPI_BYTE, MPI_COMM_WORLD); };
  auto direct = [&] { ex.execute(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data()); };
  auto mpi = [&] { PMPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(), MPI_BYTE, MPI_COMM_WORLD); };
  for (int k = 0; k < 10; ++k) intercepted();   // past the interposer's threshold: planned and replayed
  const double probe = time_block(mpi, 50);
  const int iters = std::clamp(static_cast<int>(0.05 / std::max(probe, 1e-7)), 10, 20000);
  std::vector<double> a, b, c;
  for (int k = 0; k < blocks; ++k) {
    a.push_back(time_block(intercepted, iters));
    b.push_back(time_block(direct, iters));
    c.push_back(time_block(mpi, iters));
  }
  for (auto* v : {&a, &b, &c}) std::sort(v->begin(), v->end());
  if (rank == 0) {
    const bool preloaded = std::getenv("LD_PRELOAD") && std::strstr(std::getenv("LD_PRELOAD"), "commfit_pmpi");
    std::printf("bench_pmpi: %d ranks%s, messages of %d-%d bytes, %d blocks of %d calls (minimum / median, us per call)\n", p,
                multiple ? " (MPI_THREAD_MULTIPLE)" : "", bytes / 2, bytes / 2 + bytes - 1, blocks, iters);
    std::printf("  MPI_Alltoallv%-24s %8.2f / %8.2f\n", preloaded ? " (interposed)" : " (no LD_PRELOAD)", 1e6 * a.front(), 1e6 * a[a.size() / 2]);
    std::printf("  executor, called directly           %8.2f / %8.2f\n", 1e6 * b.front(), 1e6 * b[b.size() / 2]);
    std::printf("  PMPI_Alltoallv (MPI itself)         %8.2f / %8.2f\n", 1e6 * c.front(), 1e6 * c[c.size() / 2]);
    std::printf("  interposer's cost per call          %8.2f us (minimum of interposed - minimum of direct)\n", 1e6 * (a.front() - b.front()));
    std::printf("  interposed / MPI                    %8.3f (medians)\n", a[a.size() / 2] / c[c.size() / 2]);
  }
  MPI_Finalize();
  return 0;
}
