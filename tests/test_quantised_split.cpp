// quantised_split: every schedule verifies, uses exactly D = max pieces per rank phases, and at
// q* = sqrt(tau t / (mu h)) costs at most 2 LB (the bound in passes/quantised_split.h).
#include "ir/cost_model.h"
#include "passes/lower.h"
#include "passes/quantised_split.h"
#include "passes/verify.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace commfit;

namespace {

std::vector<CommMatrix> matrices() {
  std::vector<CommMatrix> out;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    out.push_back(gen_random_sparse(static_cast<Rank>(3 + seed * 7), 0.3, 1 << 16, seed, true));
    out.push_back(gen_lognormal(static_cast<Rank>(16 + seed * 5), 0.2, 4096, 2.0, seed));
    out.push_back(gen_hot_receiver(static_cast<Rank>(10 + seed * 3), 0, 1 << 20, 0.1, seed));
    out.push_back(gen_nonuniform(64, static_cast<int>(4 * seed), 256, seed));
  }
  out.push_back(gen_dense(12, 100000, 5));
  out.push_back(make_matrix(1, {{0, 0, 7}}));
  out.push_back(make_matrix(2, {{0, 1, 1}, {1, 0, 1000000}}));
  return out;
}

}  // namespace

TEST_CASE("quantised_split_verifies_with_exactly_D_phases") {
  for (const CommMatrix& m : matrices()) {
    const TrafficStats st = traffic_stats(m);
    for (Bytes q : {Bytes{1} << 10, Bytes{4096}, Bytes{1} << 14, st.max_message + 1}) {
      if (q == 0 || 2.0 * m.ranks * static_cast<double>(quantised_degree(m, q)) > 1e7) continue;
      const Schedule s = quantised_split(m, q);
      INFO("p = " << m.ranks << ", q = " << q);
      CHECK(s.phases == static_cast<Phase>(quantised_degree(m, q)));
      for (const Transfer& t : s.transfers) CHECK(t.piece.bytes <= q);
      const auto problems = verify(lower(s, m), m, {});
      CHECK(problems.empty());
      if (!problems.empty()) MESSAGE(problems.front());
    }
  }
}

TEST_CASE("quantised_split_costs_at_most_2_LB_at_q_star") {
  const CostOptions c;
  for (const CommMatrix& m : matrices()) {
    const TrafficStats st = traffic_stats(m);
    if (st.h == 0) continue;
    const double mu = 1 / c.bandwidth_Bps;
    const auto q = static_cast<Bytes>(std::max(1.0, std::sqrt(c.tau_s * static_cast<double>(st.t) / (mu * static_cast<double>(st.h)))));
    const Plan plan = lower(quantised_split(m, q), m);
    const double lb = lower_bound_s(st, c);
    INFO("p = " << m.ranks << ", q = " << q);
    CHECK(synchronous_estimate_s(plan, c) <= 2 * lb * (1 + 1e-12));
  }
}

TEST_CASE("quantised_plans_through_the_pipeline") {
  // The strategy chooses q by the cost model: never worse than not splitting (optimal).
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const CommMatrix m = gen_lognormal(48, 0.15, 8192, 2.5, seed);
    PlanOptions o;
    o.verify_each = true;
    const Plan opt = make_plan(m, o);
    o.algorithm = "quantised";
    const Plan quant = make_plan(m, o);
    CHECK(quant.manifest.cost.estimate_s <= opt.manifest.cost.estimate_s * (1 + 1e-12));
    CHECK(quant.manifest.cost.estimate_s <= 2 * quant.manifest.cost.lower_bound_s);
  }
}
