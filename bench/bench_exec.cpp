// Executor overhead against MPI_Alltoallv and AC in real MPI on this machine (docs/PERFORMANCE.md,
// "Benchmarks"; results in docs/EXECUTOR.md). A benchmark, not a test: it prints a table and
// optionally writes a CSV; correctness is checked once per method before timing.
//
//   mpirun -np 8 bench_exec [--blocks 7] [--csv FILE] [--sizes 64,1048576] [--degree 3] [--machine FILE]
//
// Under each case the plan's estimate is printed beside the executor's measured time: the network
// model's, priced with the figures of a machine file (commfit-calibrate's, --machine) or the
// defaults, on the job's nodes as in-job planning finds them (runtime::detect_nodes: one node
// holding more ranks than the file's cores shares them).
//
// Cases: dense (every rank sends to every other rank) and sparse (every rank sends to and
// receives from `degree` random ranks, Ranka-Wang §7.1's uniform pattern), each message of the
// given size. Methods: MPI_Alltoallv, AC (all Irecv, all Isend, Waitall over nonzero entries), and
// the executor replaying the optimal direct plan under several options. Time per exchange is the
// slowest rank's mean over a block of iterations (about 0.1 s of MPI_Alltoallv); methods are
// interleaved block by block so that drift hits them alike. The table shows the median and the
// minimum over blocks; ratios use the minimum, the least disturbed by other load on the machine.
#include "backends/exec/commfit_exec.hpp"
#include "bench/mpi_timing.h"
#include "planner/machine_file.h"
#include "planner/pipeline.h"
#include "runtime/in_job.hpp"
#include "workloads/generators.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace commfit;

namespace {

struct Args {
  int blocks = 7;
  int degree = 3;
  std::vector<Bytes> sizes = {64, Bytes{1} << 20};
  std::string csv;
  std::string machine;
};

struct Method {
  std::string name;
  std::function<void()> run;
};

using commfit::bench::time_block;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    if (s == "--blocks" && k + 1 < argc) a.blocks = std::atoi(argv[++k]);
    else if (s == "--degree" && k + 1 < argc) a.degree = std::atoi(argv[++k]);
    else if (s == "--csv" && k + 1 < argc) a.csv = argv[++k];
    else if (s == "--machine" && k + 1 < argc) a.machine = argv[++k];
    else if (s == "--sizes" && k + 1 < argc) {
      a.sizes.clear();
      for (char* p = std::strtok(argv[++k], ","); p; p = std::strtok(nullptr, ",")) a.sizes.push_back(std::strtoull(p, nullptr, 10));
    } else {
      if (rank == 0) std::fprintf(stderr, "usage: bench_exec [--blocks N] [--degree D] [--sizes B,B,...] [--csv FILE] [--machine FILE]\n");
      MPI_Finalize();
      return 2;
    }
  }
  a.degree = std::min(a.degree, size - 1);
  std::optional<MachineFile> machine;
  if (!a.machine.empty()) {
    try {
      machine = read_machine_file(a.machine);
    } catch (const std::exception& e) {
      if (rank == 0) std::fprintf(stderr, "bench_exec: %s\n", e.what());
      MPI_Finalize();
      return 2;
    }
  }

  std::FILE* csv = rank == 0 && !a.csv.empty() ? std::fopen(a.csv.c_str(), "w") : nullptr;
  if (csv) std::fprintf(csv, "case,bytes,method,median_s,min_s,ratio_alltoallv,ratio_ac\n");
  if (rank == 0)
    std::printf("bench_exec: %d ranks, %d blocks, time per exchange (slowest rank), ratios of the minima\n\n"
                "%-13s %9s  %-26s %11s %11s %10s %8s\n", size, a.blocks, "case", "bytes", "method", "median us",
                "min us", "/alltoallv", "/AC");

  // "dense 2-stage": the dense pattern planned by the two-stage strategy, whose phases send several
  // pieces to one intermediary (one message each when coalesced, the executor's default); "dense
  // auto": the plan --strategy auto chooses with these figures (its name in the line under it).
  for (const char* pattern : {"dense", "sparse", "dense 2-stage", "dense auto"}) {
    for (const Bytes bytes : a.sizes) {
      const bool is_dense = std::strncmp(pattern, "dense", 5) == 0;
      const CommMatrix m = gen_uniform(size, is_dense ? size - 1 : a.degree, bytes, 42);
      PlanOptions po;
      if (std::strcmp(pattern, "dense 2-stage") == 0) po.strategy = "two-stage";
      if (std::strcmp(pattern, "dense auto") == 0) po.strategy = "auto";
      if (machine) apply_machine_file(*machine, po, {});
      po.topology = runtime::detect_nodes(MPI_COMM_WORLD, po.cost.network.cores_per_node);   // as in-job planning sees the job
      const Plan plan = make_plan(m, po);
      std::vector<int> sc(size), sd(size), rc(size), rd(size);
      int stotal = 0, rtotal = 0;
      for (int q = 0; q < size; ++q) {
        sc[q] = static_cast<int>(m.at(rank, q));
        rc[q] = static_cast<int>(m.at(q, rank));
        sd[q] = stotal;
        rd[q] = rtotal;
        stotal += sc[q];
        rtotal += rc[q];
      }
      std::vector<unsigned char> sb(std::size_t(stotal) + 1), rb(std::size_t(rtotal) + 1), ref(std::size_t(rtotal) + 1);
      for (std::size_t k = 0; k < sb.size(); ++k) sb[k] = static_cast<unsigned char>(k * 131 + rank * 7);

      exec::AllAtOnce ac(MPI_COMM_WORLD);
      auto executor = [&](auto set) {
        exec::Options o;
        set(o);
        return exec::Executor::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, o, "bench");
      };
      exec::Executor e_post = executor([](exec::Options&) {});
      exec::Executor e_first = executor([](exec::Options& o) { o.count_check = exec::CountCheck::first_call; });
      exec::Executor e_hand = executor([](exec::Options& o) { o.protocol = exec::Protocol::handshake; });
      exec::Executor e_barrier = executor([](exec::Options& o) { o.barrier = true; });
      exec::Executor e_persistent = executor([](exec::Options& o) { o.persistent = true; });
      exec::Executor e_single = executor([](exec::Options& o) { o.coalesce = 0; });
      auto args = [&](auto& x) {
        return [&] { x.execute(sb.data(), sc.data(), sd.data(), rb.data(), rc.data(), rd.data()); };
      };
      const std::vector<Method> methods = {
          {"MPI_Alltoallv", [&] { exec::alltoallv_bytes(sb.data(), sc.data(), sd.data(), rb.data(), rc.data(), rd.data(), MPI_COMM_WORLD); }},
          {"AC", args(ac)},
          {"exec post-all", args(e_post)},
          {"exec post-all first_call", args(e_first)},
          {"exec handshake", args(e_hand)},
          {"exec post-all+barrier", args(e_barrier)},
          {"exec post-all persistent", args(e_persistent)},
          {"exec post-all coalesce=0", args(e_single)},
      };
      // Correctness once, against MPI_Alltoallv.
      MPI_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_BYTE, ref.data(), rc.data(), rd.data(), MPI_BYTE, MPI_COMM_WORLD);
      for (const Method& x : methods) {
        std::fill(rb.begin(), rb.end(), 0);
        x.run();
        int bad = std::memcmp(rb.data(), ref.data(), std::size_t(rtotal)) != 0, any = 0;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) {
          if (rank == 0) std::fprintf(stderr, "bench_exec: %s delivers wrong data\n", x.name.c_str());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
      // Iterations per block: about 0.1 s of MPI_Alltoallv.
      time_block(methods[0].run, 5);
      const double probe = time_block(methods[0].run, 20);
      const int iters = std::clamp(static_cast<int>(0.1 / std::max(probe, 1e-7)), 5, 20000);
      std::vector<std::vector<double>> t(methods.size());
      for (const Method& x : methods) time_block(x.run, std::max(iters / 10, 2));   // warm-up
      for (int b = 0; b < a.blocks; ++b)
        for (std::size_t k = 0; k < methods.size(); ++k) t[k].push_back(time_block(methods[k].run, iters));
      std::vector<double> med(methods.size()), low(methods.size());
      for (std::size_t k = 0; k < methods.size(); ++k) {
        std::sort(t[k].begin(), t[k].end());
        med[k] = t[k][t[k].size() / 2];
        low[k] = t[k].front();
      }
      if (rank == 0) {
        for (std::size_t k = 0; k < methods.size(); ++k) {
          std::printf("%-13s %9llu  %-26s %11.1f %11.1f %10.2f %8.2f\n", pattern, static_cast<unsigned long long>(bytes),
                      methods[k].name.c_str(), med[k] * 1e6, low[k] * 1e6, low[k] / low[0], low[k] / low[1]);
          if (csv)
            std::fprintf(csv, "%s,%llu,%s,%.9g,%.9g,%.4f,%.4f\n", pattern, static_cast<unsigned long long>(bytes),
                         methods[k].name.c_str(), med[k], low[k], low[k] / low[0], low[k] / low[1]);
        }
        const std::string& chosen = plan.manifest.contract.chosen;
        std::printf("%-13s %9s  (%s%u phases, %d iterations per block; the model's estimate %.1f us, exec post-all / estimate %.2f; %s)\n\n",
                    "", "", chosen.empty() ? "" : ("auto chose " + chosen + ", ").c_str(), plan.manifest.phases, iters,
                    plan.manifest.cost.estimate_s * 1e6, low[2] / plan.manifest.cost.estimate_s, machine_line(po).c_str());
      }
    }
  }
  if (csv) std::fclose(csv);
  MPI_Finalize();
  return 0;
}
