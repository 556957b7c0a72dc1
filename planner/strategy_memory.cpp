// Strategy "memory" (Pinar-Hendrickson §3): not yet implemented.
#include "planner/strategies.h"

namespace commfit {

StrategyOutput strategy_memory(const CommMatrix&, const PlanOptions&, PassRunner&) {
  throw UsageError("strategy \"memory\" is not implemented yet (issue 6)");
}

}  // namespace commfit
