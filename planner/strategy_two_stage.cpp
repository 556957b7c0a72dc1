// Strategy "two-stage" (Transportation §7-8, Bader-Helman-JaJa §3): not yet implemented.
#include "planner/strategies.h"

namespace commfit {

StrategyOutput strategy_two_stage(const CommMatrix&, const PlanOptions&, PassRunner&) {
  throw UsageError("strategy \"two-stage\" is not implemented yet (issue 5)");
}

}  // namespace commfit
