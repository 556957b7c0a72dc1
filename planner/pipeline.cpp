#include "planner/pipeline.h"

#include "ir/error.h"
#include "planner/pass_runner.h"
#include "planner/passes.h"
#include "planner/strategies.h"

namespace commfit {

Plan make_plan(const CommMatrix& matrix, const PlanOptions& o, PlanReport* report) {
  const StrategyEntry* strategy = find_strategy(o.strategy);
  if (!strategy)
    throw UsageError("unknown strategy \"" + o.strategy + "\" (choose from: " + entry_names(strategy_table()) + ")");
  if (!(o.cost.tau_s >= 0) || !(o.cost.bandwidth_Bps > 0))
    throw UsageError("the cost model needs tau >= 0 and bandwidth > 0");

  // Memory limits given on the command line replace the matrix file's.
  CommMatrix with_memory;
  if (!o.memory.empty()) {
    if (o.memory.size() != static_cast<std::size_t>(matrix.ranks))
      throw UsageError("--memory gives " + std::to_string(o.memory.size()) + " limits for " + std::to_string(matrix.ranks) + " ranks");
    with_memory = matrix;
    with_memory.memory = o.memory;
  }
  const CommMatrix& m = o.memory.empty() ? matrix : with_memory;

  const TrafficStats stats = traffic_stats(m);
  PassRunner passes(m, o.verify_each, report);

  // 1. The strategy's passes: matrix -> schedule.
  StrategyOutput s = strategy->run(m, o, passes);
  passes.rules.contention = s.contention;
  passes.rules.memory = s.memory_rule;
  // 2. Lower to per-rank steps (staging offsets), 3. verify: no plan leaves unverified.
  Plan plan = passes.run("lower", [&] { return lower(s.schedule, m); });
  const auto problems = passes.run("verify", [&] { return verify(plan, m, passes.rules); });
  if (!problems.empty()) internal_error("make_plan", "the final plan fails verification: " + problems.front());

  Manifest& mf = plan.manifest;
  mf.strategy = o.strategy;
  mf.options = std::move(s.options);
  mf.options["tau_s"] = o.cost.tau_s;
  mf.options["bandwidth_Bps"] = o.cost.bandwidth_Bps;
  mf.options["contention"] = to_string(s.contention);
  mf.options["timing"] = s.timing == Timing::async ? "async" : "synchronous";
  if (s.memory_rule) mf.options["memory"] = m.memory;
  mf.cost.tau_s = o.cost.tau_s;
  mf.cost.bandwidth_Bps = o.cost.bandwidth_Bps;
  mf.cost.estimate_s = s.timing == Timing::async ? async_estimate_s(plan, o.cost) : synchronous_estimate_s(plan, o.cost);
  mf.cost.lower_bound_s = lower_bound_s(stats, o.cost);
  mf.planner = std::string("commfit ") + COMMFIT_VERSION;
  if (report) {
    report->h = stats.h;
    report->t = stats.t;
  }
  return plan;
}

}  // namespace commfit
