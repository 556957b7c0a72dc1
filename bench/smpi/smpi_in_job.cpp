// smpi_in_job: the time to plan in-job (runtime/in_job.hpp) at scale, under SMPI (docs/EXECUTOR.md
// "Planning inside the job"). Every rank r sends D messages, to r + 1 .. r + D (mod p), of 1-4 KiB,
// and calls plan_in_job; the program reports the simulated time of the whole collective call (the
// gathers, the schedules sent out, the executors' load checks: run it with
// --cfg=smpi/simulate-computation:no so that only communication is simulated), the root's real
// planning time (make_plan, measured with std::chrono), and checks every byte of one replay. Then,
// for the PMPI interposer's per-call cost at this scale, the simulated time of its agreement (one
// MPI_Allreduce of five 64-bit words, runtime/pmpi.cpp) against that of a replay, each averaged
// over a few calls.
//
//   smpirun -np P -platform X.xml -hostfile H --cfg=smpi/simulate-computation:no smpi_in_job D [STRATEGY]
#include "runtime/in_job.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// As in smpi_driver.cpp: SMPI 3.32's MPI_Iallreduce is linear (p^2 simulated messages); replay.cpp
// is compiled to call this blocking stand-in instead (build_in_job.sh).
extern "C" int commfit_smpi_iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                       MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allreduce(send, recv, count, type, op, comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int d = std::min(argc > 1 ? std::atoi(argv[1]) : 10, p - 1);
  const std::string strategy = argc > 2 ? argv[2] : "direct";
  auto bytes = [](int src, int k) { return 1024 + (src * 131 + k * 37) % 3072; };
  std::vector<std::int64_t> s(static_cast<std::size_t>(p), 0), r(s.size(), 0);
  for (int k = 1; k <= d; ++k) {
    s[static_cast<std::size_t>((rank + k) % p)] = bytes(rank, k);
    r[static_cast<std::size_t>((rank - k + p) % p)] = bytes((rank - k + p) % p, k);
  }
  commfit::runtime::InJobOptions o;
  o.plan.strategy = strategy;
  // The executor's consistency check is an MPI_Alltoall of per-peer hashes: p^2 simulated messages,
  // minutes of host time at 1024 ranks under SMPI 3.32. The plan comes from make_plan here.
  o.exec.check_consistency = false;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  const auto c0 = std::chrono::steady_clock::now();
  commfit::runtime::InJobReport report;
  commfit::exec::Executor ex = commfit::runtime::plan_in_job(MPI_COMM_WORLD, s.data(), r.data(), o, &report);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  const double simulated = MPI_Wtime() - t0;
  // One replay, each received byte checked against the formula its sender filled it with (an
  // MPI_Alltoallv for reference would be p^2 simulated messages).
  std::vector<int> sc(s.begin(), s.end()), rc(r.begin(), r.end()), sd(sc.size()), rd(rc.size());
  int st = 0, rt = 0;
  for (int q = 0; q < p; ++q) sd[q] = st, st += sc[q], rd[q] = rt, rt += rc[q];
  auto byte = [](int from, int to, int j) { return static_cast<char>(from * 7 + to * 3 + j); };
  std::vector<char> send(static_cast<std::size_t>(st) + 1), recv(static_cast<std::size_t>(rt) + 1);
  for (int q = 0; q < p; ++q)
    for (int j = 0; j < sc[q]; ++j) send[static_cast<std::size_t>(sd[q] + j)] = byte(rank, q, j);
  ex.execute(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data());
  int bad = 0, any = 0;
  for (int q = 0; q < p; ++q)
    for (int j = 0; j < rc[q]; ++j) bad |= recv[static_cast<std::size_t>(rd[q] + j)] != byte(q, rank, j);
  // The interposer's agreement against a replay (simulated, mean per call; the replays read the same
  // buffers again).
  const int calls = 5;
  std::uint64_t words[5] = {0, 1, 2, 3, static_cast<std::uint64_t>(rank)}, folded[5];
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int k = 0; k < calls; ++k) MPI_Allreduce(words, folded, 5, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
  const double agree = (MPI_Wtime() - t) / calls;
  MPI_Barrier(MPI_COMM_WORLD);
  t = MPI_Wtime();
  for (int k = 0; k < calls; ++k) ex.execute(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data());
  const double replay = (MPI_Wtime() - t) / calls;
  double times[4] = {simulated, wall, agree, replay}, max_times[4];
  MPI_Reduce(&bad, &any, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(times, max_times, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("smpi_in_job: p %d, %llu messages, machine %s, strategy %s%s%s, %u phases: in-job planning %.6f s simulated (communication), "
                "%.3f s real on the host (the whole simulated call, every rank); replay %s; per call (simulated): the interposer's "
                "agreement %.2f us, a replay %.2f us\n",
                p, static_cast<unsigned long long>(report.messages), report.topology.c_str(), report.strategy.c_str(), report.chosen.empty() ? "" : " ",
                report.chosen.c_str(), report.phases, max_times[0], max_times[1], any ? "WRONG" : "every byte right", 1e6 * max_times[2],
                1e6 * max_times[3]);
  MPI_Finalize();
  return any ? 1 : 0;
}
