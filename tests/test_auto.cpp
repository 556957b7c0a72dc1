// --strategy auto: the plan it keeps is verified and no candidate is cheaper; memory limits
// restrict the field to memory plans.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "passes/verify.h"
#include "planner/candidates.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

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
      CHECK(plan.manifest.contract.chosen == c.rows[*c.chosen].name);
      VerifyRules rules;
      rules.contention = plan.manifest.contract.contention;
      rules.per_port = plan.manifest.contract.per_port;
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

// compare_candidates on several threads: the serial loop's rows, choice, plan and pass log. The
// threads finish in varying order and the choice's tolerance is not transitive, so the choosing
// must not depend on who finished first.
TEST_CASE("auto_on_threads_matches_the_serial_loop") {
  auto without_seconds = [](std::vector<std::string> log) {
    for (std::string& line : log) line.erase(line.rfind(": ") + 2);
    return log;
  };
  auto same_row = [](const CandidateRow& a, const CandidateRow& b) {
    return a.name == b.name && a.skipped == b.skipped && a.phases == b.phases && a.max_message == b.max_message &&
           a.estimate_s == b.estimate_s && a.simulated == b.simulated && a.loose_s == b.loose_s && a.lower_bound_s == b.lower_bound_s;
  };
  CommMatrix limited = gen_random_sparse(24, 0.3, 1 << 16, 11, false);
  limited.memory.assign(24, 1 << 20);
  const std::vector<CommMatrix> ms = {gen_uniform(16, 4, 1024, 7), gen_lognormal(40, 0.1, 512, 2, 2), gen_hot_receiver(20, 3, 1 << 16, 0.05, 3),
                                     gen_random_sparse(24, 0.2, 1 << 20, 1, true), limited};
  for (const CommMatrix& m : ms) {
    PlanOptions o;
    const Comparison serial = compare_candidates(m, o, true);
    REQUIRE(serial.plan);
    // The serial loop: rows in index order, each against the choice so far; the log likewise.
    std::optional<std::size_t> expected;
    std::size_t at = 0;
    for (std::size_t k = 0; k < serial.rows.size(); ++k) {
      const CandidateRow& r = serial.rows[k];
      if (!r.skipped.empty()) continue;
      if (!expected || candidate_cheaper(r, serial.rows[*expected])) expected = k;
      const std::string prefix = r.name + ": ";
      for (; at < serial.log.size() && serial.log[at].rfind(prefix, 0) == 0; ++at) {}
    }
    CHECK(serial.chosen == expected);
    CHECK(at == serial.log.size());
    for (unsigned threads : {2u, 3u, 8u}) {
      CAPTURE(threads);
      o.threads = threads;
      const Comparison c = compare_candidates(m, o, true);
      REQUIRE(c.rows.size() == serial.rows.size());
      for (std::size_t k = 0; k < c.rows.size(); ++k) CHECK(same_row(c.rows[k], serial.rows[k]));
      CHECK(c.chosen == serial.chosen);
      REQUIRE(c.plan);
      CHECK(manifest_json(c.plan->manifest) == manifest_json(serial.plan->manifest));
      CHECK(c.plan->manifest.plan_hash == serial.plan->manifest.plan_hash);
      CHECK(without_seconds(c.log) == without_seconds(serial.log));
    }
  }
}

TEST_CASE("auto_tells_progress_one_pass_at_a_time") {
  const CommMatrix m = gen_lognormal(40, 0.1, 512, 2, 2);
  PlanOptions o;
  o.threads = 4;
  std::atomic<int> inside{0};
  int calls = 0, overlaps = 0;
  o.progress = [&](const std::string& what) {
    overlaps += inside++ > 0;
    ++calls;
    CHECK(what.find(": ") != std::string::npos);   // "candidate: pass"
    --inside;
  };
  compare_candidates(m, o, false);
  CHECK(calls > 20);
  CHECK(overlaps == 0);
}
