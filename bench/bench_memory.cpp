// Memory-constrained planning (Pinar-Hendrickson §3.1), docs/MEMORY.md's table: for p = 32..1024
// and free memory of 5, 10, 25, 50 % of the bytes moved, the phases of the two methods of strategy
// memory against the lower bound, the bytes they park and their planning time.
// Patterns: "lognormal", data redistribution after load balancing (gen_lognormal: every rank sends
// to about 16 others, lognormal sizes, median 64 KiB, sigma 1), and "uniform" (gen_uniform: every
// rank sends and receives 16 messages of 64 KiB, so no rank gains data). Free memory: frac * T / p
// on every rank, plus max(0, c_j - r_j) where a rank must gain more than that (the least that
// makes it feasible): with lognormal this top-up makes M/T larger than frac (column M/T).
// Usage: bench_memory [--csv FILE] [--max-p P]
#include "passes/lower.h"
#include "passes/memory_bound.h"
#include "passes/park.h"
#include "passes/relaxation.h"
#include "passes/verify.h"
#include "workloads/generators.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

using namespace commfit;

namespace {

std::vector<Bytes> memory_for(const CommMatrix& m, double frac) {
  const TrafficStats st = traffic_stats(m);
  std::vector<Bytes> mem(static_cast<std::size_t>(m.ranks));
  for (Rank j = 0; j < m.ranks; ++j) {
    const Bytes share = static_cast<Bytes>(frac * double(st.total_bytes) / m.ranks);
    mem[j] = std::max<Bytes>(share, st.c[j] > st.r[j] ? st.c[j] - st.r[j] : 0);
  }
  return mem;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The relaxation's rounding premise (docs/MEMORY.md): L M - T >= (L + 1) (2 E + 8 p), L = ceil(T/M).
bool rounding_premise(const CommMatrix& m, const MemoryBound& lb) {
  const auto L = static_cast<unsigned __int128>(lb.volume_bound);
  const auto E = static_cast<unsigned __int128>(traffic_stats(m).messages);
  return L * lb.memory - lb.total >= (L + 1) * (2 * E + 8 * static_cast<unsigned>(m.ranks));
}

bool valid(const Schedule& s, const CommMatrix& m) {
  VerifyRules r;
  r.contention = Contention::none;
  r.memory = true;
  return verify(lower(s, m), m, r).empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv;
  Rank max_p = 1024;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else if (!std::strcmp(argv[i], "--max-p") && i + 1 < argc) max_p = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_memory [--csv FILE] [--max-p P]\n");
      return 2;
    }
  }
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "pattern,p,free_pct,messages,T,M,ceil_T_M,lower_bound,parking_phases,parking_parked,parking_s,"
           "relaxation_phases,relaxation_main,relaxation_parked,relaxation_s,rounding_premise\n";
  }
  std::printf("| pattern | p | free | T (MiB) | M/T | ceil(T/M) | LB | parking | parked | plan ms | relaxation (L used) | premise | parked | plan ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|---:|\n");
  for (const char* pattern : {"lognormal", "uniform"})
  for (Rank p = 32; p <= max_p; p *= 2) {
    const CommMatrix base = std::string(pattern) == "uniform" ? gen_uniform(p, 16, 65536, 2000 + p)
                                                              : gen_lognormal(p, 16.0 / p, 65536, 1.0, 1000 + p);
    for (double frac : {0.05, 0.10, 0.25, 0.50}) {
      CommMatrix m = base;
      m.memory = memory_for(m, frac);
      const MemoryBound lb = memory_lower_bound(m);
      auto t0 = std::chrono::steady_clock::now();
      ParkStats ps;
      const Schedule a = park(m, {}, &ps);
      const double ta = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      RelaxationStats rs;
      const std::optional<Schedule> b = relaxation(m, {}, &rs);
      const double tb = seconds_since(t0);
      if (!valid(a, m) || (b && !valid(*b, m))) {
        std::fprintf(stderr, "bench_memory: an invalid schedule at p = %d, free %.0f%%\n", p, frac * 100);
        return 1;
      }
      char relax[64], rpark[32];
      if (b) {
        std::snprintf(relax, sizeof relax, "%u (%llu)", b->phases, (unsigned long long)rs.main_phases);
        std::snprintf(rpark, sizeof rpark, "%.1f%%", 100.0 * double(rs.parked_bytes) / double(lb.total));
      } else {
        std::snprintf(relax, sizeof relax, "no fit");
        std::snprintf(rpark, sizeof rpark, "-");
      }
      const bool premise = rounding_premise(m, lb);
      std::printf("| %s | %d | %.0f%% | %.0f | %.2f | %llu | %llu | %u | %.1f%% | %.2f | %s | %s | %s | %.2f |\n", pattern, p, frac * 100,
                  double(lb.total) / 1048576.0, double(lb.memory) / double(lb.total), (unsigned long long)lb.volume_bound, (unsigned long long)lb.phases,
                  a.phases, 100.0 * double(ps.parked_bytes) / double(lb.total), ta * 1e3, relax, premise ? "yes" : "no", rpark, tb * 1e3);
      std::fflush(stdout);
      if (out)
        out << pattern << ',' << p << ',' << frac * 100 << ',' << traffic_stats(m).messages << ',' << lb.total << ',' << lb.memory << ','
            << lb.volume_bound << ',' << lb.phases << ',' << a.phases << ',' << ps.parked_bytes << ',' << ta << ','
            << (b ? b->phases : 0) << ',' << rs.main_phases << ',' << rs.parked_bytes << ',' << tb << ',' << premise << '\n';
    }
  }
  return 0;
}
