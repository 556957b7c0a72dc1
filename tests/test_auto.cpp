// --strategy auto: the plan it keeps is verified and no candidate is cheaper; memory limits
// restrict the field to memory plans.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "passes/verify.h"
#include "planner/candidates.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

using namespace commfit;

TEST_CASE("auto_keeps_the_cheapest_verified_candidate") {
  std::vector<CommMatrix> ms = {gen_random_sparse(24, 0.2, 1 << 20, 1, true), gen_lognormal(40, 0.1, 512, 2, 2),
                                gen_hot_receiver(20, 3, 1 << 16, 0.05, 3), gen_uniform(16, 4, 64, 4), gen_dense(9, 4096, 5)};
  for (const CommMatrix& m : ms) {
    for (double tau : {2e-6, 1e-4}) {
      PlanOptions o;
      o.cost.tau_s = tau;
      const Comparison c = compare_candidates(m, o, false);
      o.strategy = "auto";
      PlanReport report;
      const Plan plan = make_plan(m, o, &report);
      CHECK(plan.manifest.strategy == "auto");
      REQUIRE(c.chosen);
      std::size_t planned = 0;
      for (const CandidateRow& r : c.rows) {
        if (!r.skipped.empty()) continue;
        ++planned;
        // Ties up to rounding (1e-9 relative) go to fewer phases.
        CHECK(plan.manifest.cost.estimate_s <= r.estimate_s * (1 + 1e-9));
        if (plan.manifest.cost.estimate_s > r.estimate_s) CHECK(plan.manifest.phases <= r.phases);
      }
      CHECK(planned >= 5);
      CHECK(plan.manifest.options["chosen"] == c.rows[*c.chosen].name);
      VerifyRules rules;
      const std::string contention = plan.manifest.options["contention"];
      rules.contention = contention == "none" ? Contention::none : contention == "bounded" ? Contention::bounded : Contention::node;
      if (rules.contention == Contention::bounded) rules.per_port = plan.manifest.options["concurrency"].get<int>();
      CHECK(verify(plan, m, rules).empty());
      CHECK(report.comparison.find("*") != std::string::npos);
      // Deterministic: the manifest records no timings.
      CHECK(manifest_json(make_plan(m, o).manifest) == manifest_json(plan.manifest));
    }
  }
}

TEST_CASE("auto_breaks_a_tie_toward_fewer_phases_then_the_table_order") {
  // Uniform pattern, d = 4: bounded/4 .. bounded/32 merge the 4 König phases into one, the very
  // plan async builds, so they price the same; on a fat-tree with shared links direct/optimal is
  // link-repaired into more phases. Of equal estimates auto keeps the fewest phases, then the
  // first candidate in the table: async.
  const CommMatrix m = gen_uniform(16, 4, 1024, 7);
  PlanOptions o;
  const Comparison c = compare_candidates(m, o, false);
  REQUIRE(c.chosen);
  double async = 0;
  for (const CandidateRow& r : c.rows)
    if (r.name == "async") async = r.estimate_s;
  for (const CandidateRow& r : c.rows)
    if (r.name == "bounded/4" || r.name == "bounded/32") {
      CHECK(r.estimate_s == async);
      CHECK(r.phases == 1);
    }
  CHECK(c.rows[*c.chosen].estimate_s <= async);
  if (c.rows[*c.chosen].estimate_s == async) CHECK(c.rows[*c.chosen].name == "async");
}

TEST_CASE("auto_with_memory_limits_considers_memory_plans_only") {
  CommMatrix m = gen_random_sparse(8, 0.5, 1000, 9, false);
  m.memory.assign(8, 1 << 20);
  const auto rows = candidates_for(m, {});
  REQUIRE(!rows.empty());
  for (const CandidateRow& r : rows) CHECK(r.options.strategy == "memory");
}
