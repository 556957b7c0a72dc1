// Strategy "throttled": async's one phase (every message posted, no ordering) replayed through a
// request window: each rank keeps at most --max-outstanding k requests in flight, posting its
// transfers in one global order of rank pairs (docs/EXECUTOR.md, max_outstanding), so that a hot
// receiver takes its senders a few at a time. The window travels in the plan (each rank file's
// "max_outstanding"); the executor honours it unless its options set another. Under the ib
// network model a sender or receiver with many concurrent flows is penalised, and a small window
// can beat both AC and phases; auto plans every k of the table and keeps the one the network
// model prices lowest.
#include "planner/strategy_table.h"

#include <algorithm>

namespace commfit {
namespace {

constexpr NamedEntry kWindows[] = {
    {"4", "request window", "at most 4 requests in flight per rank"},
    {"8", "request window", "at most 8 requests in flight per rank"},
    {"16", "request window", "at most 16 requests in flight per rank"},
    {"32", "request window", "at most 32 requests in flight per rank"},
};

StrategyOutput run_throttled(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  StrategyOutput out;   // a request window posts in its own order, not in async's
  out.timing = Timing::async;
  out.schedule = post_all_schedule(m, passes);
  out.max_outstanding = o.max_outstanding;   // one of kWindows (check_choices)
  out.options["max_outstanding"] = out.max_outstanding;
  return out;
}

constexpr OptionEntry kThrottledOptions[] = {{StrategyOption::max_outstanding, kWindows}};

}  // namespace

const Strategy& throttled_strategy() {
  static const Strategy s{
      .entry = {"throttled", "request window (ir/network_sim.h)", "one phase posted through a window of k requests per rank"},
      .options = kThrottledOptions,
      .run = run_throttled,
      .sweep = StrategyOption::max_outstanding,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return network_messages(m); },
      .plan_cost = [](const PlanOptions& o) { return std::min(1.0, o.max_outstanding / 16.0); },   // flows in flight
  };
  return s;
}

}  // namespace commfit
