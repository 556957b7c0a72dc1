// bench_two_stage: modelled cost of the two-stage variants (Transportation §7-8, Bader-Helman-JaJa
// §3) against the direct strategy on skewed patterns (docs/PERFORMANCE.md: schedule quality).
// For each pattern and p every plan is made with make_plan (so it is lowered and verified) and the
// table shows Plan.manifest.cost.estimate_s (synchronous model: per phase tau + mu * largest
// message), the lower bound LB = h tau + t mu, and the paper's guarantee for the transport split,
// (p-1)(tau + mu ceil(t/p)) + (p-1)(tau + mu (t + p(p-1))/p) = 2 t mu + 2 (p-1) tau + O(p^2 mu).
//
// Patterns (workloads/skewed.h), sized so a two-stage plan (one piece per message and
// intermediary) stays near 8M pieces at p = 1024:
//   hot receiver  gen_hot_spots: Transportation §9's generator, fan-out 8, l = 1/8, 4 MiB per rank;
//   sample sort   gen_sample_sort_skewed: 8192 records of 16 KiB in all (8192/p per rank), keys
//                 Zipf s = 1.1, 16 samples per rank;
//   MoE dispatch  gen_moe_dispatch: 4096 tokens in all (4096/p per rank), top-2 of p experts
//                 (one per rank), popularity Zipf s = 1.0, 14336-byte tokens (7168 x bf16);
//   BHJ eq. (7)   gen_bader_h_relation: n/p = 65536 keys of 8 bytes per rank, h = 8n/p: ~p^2/4
//                 messages, so two-stage is refused (too many pieces) at p = 1024.
//
//   bench_two_stage [--p 64,256,1024] [--only PATTERN] [--csv FILE]
#include "ir/error.h"
#include "passes/two_stage_split.h"
#include "planner/pipeline.h"
#include "workloads/skewed.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace commfit;

namespace {

struct Candidate {
  std::string label, strategy, algorithm, variant;
};

struct Pattern {
  std::string name;
  std::function<CommMatrix(Rank)> make;
};

std::vector<Candidate> candidates() {
  // direct-lp is the papers' baseline (linear permutation, Transportation §5, BHJ §3.2).
  std::vector<Candidate> out = {{"direct-lp", "direct", "lp", ""}, {"direct-optimal", "direct", "optimal", ""}};
  out.push_back({"direct-quantised", "direct", "quantised", ""});
  for (const TwoStageVariantEntry& v : two_stage_variants()) out.push_back({v.name, "two-stage", "optimal", v.name});
  return out;
}

std::vector<Pattern> patterns() {
  return {
      {"hot receiver", [](Rank p) { return gen_hot_spots(p, 8, 1.0 / 8, Bytes{4} << 20, 1); }},
      {"sample sort", [](Rank p) { return gen_sample_sort_skewed(p, 8192 / p, 16384, 1.1, 16, 2); }},
      {"MoE dispatch", [](Rank p) { return gen_moe_dispatch(p, 1, 4096 / p, 2, 1.0, 14336, 3); }},
      {"BHJ eq. (7) h=8n/p", [](Rank p) { return gen_bader_h_relation(p, 65536, 8, 8); }},
  };
}

std::vector<Rank> parse_list(const char* s) {
  std::vector<Rank> out;
  for (const char* c = s; *c;) {
    out.push_back(static_cast<Rank>(std::strtol(c, const_cast<char**>(&c), 10)));
    if (*c == ',') ++c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Rank> ps = {64, 256, 1024};
  const char* csv_path = nullptr;
  std::string only;   // a pattern name prefix
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--p") == 0 && k + 1 < argc) ps = parse_list(argv[++k]);
    else if (std::strcmp(argv[k], "--csv") == 0 && k + 1 < argc) csv_path = argv[++k];
    else if (std::strcmp(argv[k], "--only") == 0 && k + 1 < argc) only = argv[++k];
    else {
      std::fprintf(stderr, "usage: bench_two_stage [--p 64,256,1024] [--only PATTERN] [--csv FILE]\n");
      return 2;
    }
  }
  FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
  if (csv) std::fprintf(csv, "pattern,p,messages,t_bytes,h,plan,phases,estimate_s,lower_bound_s,paper_bound_s,plan_seconds\n");

  const std::vector<Candidate> cands = candidates();
  std::printf("estimate in ms (estimate / LB); tau = 2 us, bandwidth = 1e10 B/s\n\n");
  std::printf("| pattern | p | messages | t (MB) | LB | 2tμ | paper bound |");
  for (const Candidate& c : cands) std::printf(" %s |", c.label.c_str());
  std::printf("\n|---|---|---|---|---|---|---|");
  for (std::size_t k = 0; k < cands.size(); ++k) std::printf("---|");
  std::printf("\n");
  std::fflush(stdout);

  for (const Pattern& pat : patterns())
    for (Rank p : ps) {
      if (!only.empty() && pat.name.rfind(only, 0) != 0) continue;
      const CommMatrix m = pat.make(p);
      const TrafficStats st = traffic_stats(m);
      const CostOptions cost;
      const double tau = cost.tau_s, mu = 1.0 / cost.bandwidth_Bps;
      const double t = static_cast<double>(st.t), dp = p;
      const double lb = lower_bound_s(st, cost);
      const double b1 = std::ceil(t / dp), b2 = (t + dp * (dp - 1)) / dp;
      const double bound = (dp - 1) * (2 * tau + mu * (b1 + b2));
      std::printf("| %s | %d | %lld | %.1f | %.3f | %.3f | %.3f |", pat.name.c_str(), p, static_cast<long long>(st.messages), t / 1e6,
                  lb * 1e3, 2 * t * mu * 1e3, bound * 1e3);
      std::fflush(stdout);
      for (const Candidate& c : cands) {
        PlanOptions o;
        o.strategy = c.strategy;
        o.algorithm = c.algorithm;
        if (!c.variant.empty()) o.variant = c.variant;
        o.seed = 1;
        const auto start = std::chrono::steady_clock::now();
        try {
          const Plan plan = make_plan(m, o);
          const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          const double est = plan.manifest.cost.estimate_s;
          std::printf(" %.3f (%.3f) |", est * 1e3, est / lb);
          std::fprintf(stderr, "%s p=%d %s: %u phases, planned in %.1f s\n", pat.name.c_str(), p, c.label.c_str(), plan.manifest.phases, secs);
          if (csv)
            std::fprintf(csv, "%s,%d,%lld,%llu,%lld,%s,%u,%.9g,%.9g,%.9g,%.3f\n", pat.name.c_str(), p, static_cast<long long>(st.messages),
                         static_cast<unsigned long long>(st.t), static_cast<long long>(st.h), c.label.c_str(), plan.manifest.phases, est, lb,
                         bound, secs);
        } catch (const UsageError& e) {
          std::printf(" — |");
          std::fprintf(stderr, "%s p=%d %s: %s\n", pat.name.c_str(), p, c.label.c_str(), e.what());
        }
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  if (csv) std::fclose(csv);
  return 0;
}
