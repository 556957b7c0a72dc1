#include "planner/pipeline.h"

#include "ir/error.h"
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "planner/passes.h"

#include <chrono>
#include <cstdio>

namespace commfit {
namespace {

class PassRunner {
 public:
  PassRunner(const CommMatrix& m, bool verify_each, PlanReport* report)
      : m_(m), verify_each_(verify_each), report_(report) {}

  // Runs one pass, times it, and with --verify-each checks the schedule it produced.
  template <class F>
  auto run(const char* name, F&& pass) {
    const auto start = std::chrono::steady_clock::now();
    auto result = pass();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string line = std::string(name) + ": " + format_seconds(seconds);
    if constexpr (std::is_same_v<decltype(result), Schedule>) {
      if (verify_each_) {
        const auto problems = verify(lower(result, m_), m_, rules_);
        if (!problems.empty()) internal_error(name, "the schedule fails verification: " + problems.front());
        line += ", verified";
      }
    }
    if (report_) report_->log.push_back(line);
    return result;
  }

  VerifyRules rules_;

 private:
  static std::string format_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
  }
  const CommMatrix& m_;
  bool verify_each_;
  PlanReport* report_;
};

nlohmann::ordered_json options_json(const PlanOptions& o, const VerifyRules& rules) {
  nlohmann::ordered_json j;
  j["algorithm"] = o.algorithm;
  j["seed"] = o.seed;
  j["tau_s"] = o.cost.tau_s;
  j["bandwidth_Bps"] = o.cost.bandwidth_Bps;
  j["contention"] = to_string(rules.contention);
  return j;
}

}  // namespace

Plan make_plan(const CommMatrix& m, const PlanOptions& o, PlanReport* report) {
  if (!has_entry(strategy_table(), o.strategy))
    throw UsageError("unknown strategy \"" + o.strategy + "\" (choose from: " + entry_names(strategy_table()) + ")");
  if (!has_entry(algorithm_table(), o.algorithm))
    throw UsageError("unknown algorithm \"" + o.algorithm + "\" (choose from: " + entry_names(algorithm_table()) + ")");
  if (!(o.cost.tau_s >= 0) || !(o.cost.bandwidth_Bps > 0))
    throw UsageError("the cost model needs tau >= 0 and bandwidth > 0");

  const TrafficStats stats = traffic_stats(m);
  PassRunner passes(m, o.verify_each, report);
  passes.rules_.contention = Contention::node;

  // Strategy "direct": every message goes whole from src to dst.
  Schedule schedule;
  if (o.algorithm == "rs_n") {
    const CompressedMatrix ccom = passes.run("compress", [&] { return compress(m, o.seed); });
    schedule = passes.run("decompose", [&] { return decompose_rs_n(ccom, m, o.seed); });
  } else if (o.algorithm == "lp") {
    schedule = passes.run("decompose", [&] { return decompose_lp(m); });
  } else {
    schedule = passes.run("decompose", [&] { return decompose_optimal(m); });
  }
  // From here on every phase is a partial permutation: <= 1 send and <= 1 receive per rank.
  Plan plan = passes.run("lower", [&] { return lower(schedule, m); });
  const auto problems = passes.run("verify", [&] { return verify(plan, m, passes.rules_); });
  if (!problems.empty()) internal_error("make_plan", "the final plan fails verification: " + problems.front());

  Manifest& mf = plan.manifest;
  mf.strategy = o.strategy;
  mf.options = options_json(o, passes.rules_);
  mf.cost.tau_s = o.cost.tau_s;
  mf.cost.bandwidth_Bps = o.cost.bandwidth_Bps;
  mf.cost.estimate_s = synchronous_estimate_s(plan, o.cost);
  mf.cost.lower_bound_s = lower_bound_s(stats, o.cost);
  mf.planner = std::string("commfit ") + COMMFIT_VERSION;
  if (report) {
    report->h = stats.h;
    report->t = stats.t;
  }
  return plan;
}

}  // namespace commfit
