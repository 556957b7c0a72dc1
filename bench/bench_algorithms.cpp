// Schedule quality: estimate / LB of every candidate (planner/candidates.h) on the Ranka-Wang
// non-uniform sets and on skewed sets (lognormal sizes, hot receivers), per p and seed.
//   bench_algorithms [--p 256,1024] [--seeds 3] [--csv FILE]
// Prints one row per (set, p, candidate): median and max of estimate/LB over the seeds.
#include "planner/candidates.h"
#include "workloads/generators.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace commfit;

int main(int argc, char** argv) {
  std::vector<Rank> ps = {256, 1024};
  int seeds = 3;
  const char* csv = nullptr;
  for (int k = 1; k + 1 < argc; k += 2) {
    if (!std::strcmp(argv[k], "--p")) {
      ps.clear();
      std::stringstream ss(argv[k + 1]);
      for (std::string x; std::getline(ss, x, ',');) ps.push_back(static_cast<Rank>(std::stol(x)));
    } else if (!std::strcmp(argv[k], "--seeds")) {
      seeds = std::atoi(argv[k + 1]);
    } else if (!std::strcmp(argv[k], "--csv")) {
      csv = argv[k + 1];
    }
  }
  struct Set {
    const char* name;
    std::function<CommMatrix(Rank, std::uint64_t)> make;
  };
  const std::vector<Set> sets = {
      {"nonuniform d=16 (Ranka-Wang 7.2)", [](Rank p, std::uint64_t s) { return gen_nonuniform(p, 16, 256, s); }},
      {"lognormal 16/rank, median 4 KiB, sigma 2", [](Rank p, std::uint64_t s) { return gen_lognormal(p, 16.0 / p, 4096, 2.0, s); }},
      {"hot receiver + 1% background", [](Rank p, std::uint64_t s) { return gen_hot_receiver(p, 0, 1 << 16, 0.01, s); }},
  };
  std::FILE* out = csv ? std::fopen(csv, "w") : nullptr;
  if (out) std::fprintf(out, "set,p,seed,candidate,phases,estimate_s,loose_s,lower_bound_s,ratio,plan_s\n");
  std::printf("| set | p | candidate | phases (median) | estimate/LB median | estimate/LB max | loose/LB median | plan s (median) |\n"
              "|---|---|---|---|---|---|---|---|\n");
  for (const Set& set : sets)
    for (Rank p : ps) {
      std::map<std::string, std::vector<CandidateRow>> rows;
      std::vector<std::string> order;
      for (int seed = 1; seed <= seeds; ++seed) {
        const CommMatrix m = set.make(p, static_cast<std::uint64_t>(seed));
        const Comparison c = compare_candidates(m, PlanOptions{}, false);
        for (const CandidateRow& r : c.rows) {
          if (!r.skipped.empty()) continue;
          if (!rows.count(r.name)) order.push_back(r.name);
          rows[r.name].push_back(r);
          if (out)
            std::fprintf(out, "\"%s\",%d,%d,%s,%u,%.6g,%.6g,%.6g,%.4f,%.3f\n", set.name, p, seed, r.name.c_str(), r.phases, r.estimate_s,
                         r.loose_s, r.lower_bound_s, r.estimate_s / r.lower_bound_s, r.seconds);
        }
      }
      for (const std::string& name : order) {
        std::vector<double> ratio, loose, secs;
        std::vector<Phase> phases;
        for (const CandidateRow& r : rows[name]) {
          ratio.push_back(r.estimate_s / r.lower_bound_s);
          loose.push_back(r.loose_s / r.lower_bound_s);
          secs.push_back(r.seconds);
          phases.push_back(r.phases);
        }
        std::sort(ratio.begin(), ratio.end());
        std::sort(loose.begin(), loose.end());
        std::sort(secs.begin(), secs.end());
        std::sort(phases.begin(), phases.end());
        std::printf("| %s | %d | %s | %u | %.3f | %.3f | %.3f | %.3f |\n", set.name, p, name.c_str(), phases[phases.size() / 2],
                    ratio[ratio.size() / 2], ratio.back(), loose[loose.size() / 2], secs[secs.size() / 2]);
        std::fflush(stdout);
      }
    }
  if (out) std::fclose(out);
  return 0;
}
