// Strategy "bounded" (bounded concurrency; the network model of ir/network_sim.h rewards it):
// the exact König decomposition (h partial permutations, as direct/optimal), then its phases
// merged --concurrency k at a time, largest first (passes/group_phases.h). Every rank sends to
// and receives from at most k ranks per phase: a hot receiver takes its flows in waves of k while
// the ranks it does not hold up run ahead. k = 1 would be direct/optimal and k >= h the one-phase
// AC plan; auto plans every k of the table and keeps the one the network model prices lowest.
// Within a merged phase a rank posts its messages by König phase (passes/posting_order.h), so
// that a receiver's messages of the phase leave their senders at distinct positions.
#include "passes/decompose_optimal.h"
#include "passes/group_phases.h"
#include "passes/posting_order.h"
#include "planner/strategy_table.h"

#include <algorithm>

namespace commfit {
namespace {

constexpr NamedEntry kConcurrency[] = {
    {"2", "bounded concurrency", "at most 2 messages per port per phase"},
    {"4", "bounded concurrency", "at most 4 messages per port per phase"},
    {"8", "bounded concurrency", "at most 8 messages per port per phase"},
    {"16", "bounded concurrency", "at most 16 messages per port per phase"},
    {"32", "bounded concurrency", "at most 32 messages per port per phase"},
};

StrategyOutput run_bounded(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  const int k = static_cast<int>(o.concurrency);   // one of kConcurrency (check_choices)
  StrategyOutput out;
  Schedule phases = passes.run(Pass::decompose, [&] { return decompose_optimal(m); });
  out.schedule = passes.run(Pass::group_phases, [&] { return group_phases(phases, k); }, k);
  out.send_order = passes.run(Pass::posting_order, [&] { return posting_order_of(phases); }).peers;
  return out;
}

constexpr OptionEntry kBoundedOptions[] = {{StrategyOption::concurrency, kConcurrency}};

}  // namespace

const Strategy& bounded_strategy() {
  static const Strategy s{
      .entry = {"bounded", "bounded concurrency (ir/network_sim.h)", "König phases merged k at a time: at most k messages per port per phase"},
      .options = kBoundedOptions,
      .run = run_bounded,
      .sweep = StrategyOption::concurrency,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return network_messages(m); },
      .plan_cost = [](const PlanOptions& o) { return std::min(1.0, o.concurrency / 16.0); },   // flows in flight
  };
  return s;
}

}  // namespace commfit
