// Strategy "async" (Ranka-Wang §3, AC): one phase in which every rank posts all its receives,
// then all its sends, in the coloured posting order (passes/posting_order.h) that the plan
// carries: each receiver's messages leave their senders at distinct positions, so that no
// receiver waits on messages that are all posted last. No contention rule holds.
#include "passes/posting_order.h"
#include "planner/strategy_table.h"

namespace commfit {
namespace {

StrategyOutput run_async(const CommMatrix& m, const PlanOptions&, PassRunner& passes) {
  StrategyOutput out;
  out.timing = Timing::async;
  out.schedule = passes.run(Pass::post_all, [&] {
    Schedule s;
    s.ranks = m.ranks;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != j) s.transfers.push_back({0, i, j, {i, j, 0, b}});
    });
    s.phases = s.transfers.empty() ? 0 : 1;
    s.copies = local_copies(m);
    canonicalize(s);
    return s;
  });
  out.send_order = passes.run(Pass::posting_order, [&] { return coloured_posting_order(m); }).peers;
  return out;
}

}  // namespace

const Strategy& async_strategy() {
  static const Strategy s{
      .entry = {"async", "Ranka-Wang §3 (AC)", "one phase: every receive posted, then every send, no ordering"},
      .options = {},
      .run = run_async,
      .sweep = std::nullopt,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return network_messages(m); },
  };
  return s;
}

}  // namespace commfit
