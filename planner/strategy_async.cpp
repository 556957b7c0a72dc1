// Strategy "async" (Ranka-Wang §3, AC): one phase in which every rank posts all its receives,
// then all its sends. No contention rule holds; the cost model prices it by the busiest port.
#include "planner/strategies.h"

namespace commfit {

StrategyOutput strategy_async(const CommMatrix& m, const PlanOptions&, PassRunner& passes) {
  StrategyOutput out;
  out.timing = Timing::async;
  passes.rules.contention = out.contention = Contention::none;
  out.schedule = passes.run("decompose", [&] {
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
  return out;
}

}  // namespace commfit
