// Strategies: each is a straight list of passes from the matrix to a schedule (STYLE.md 3), in
// its own file planner/strategy_NAME.cpp. The strategy table (planner/passes.cpp) names them.
#pragma once

#include "ir/schedule.h"
#include "passes/verify.h"
#include "planner/pass_runner.h"
#include "planner/pipeline.h"

#include <nlohmann/json.hpp>

namespace commfit {

// How the executor runs the plan, and so how the cost model prices it.
enum class Timing {
  synchronous,   // phase after phase: sum of tau + mu * largest message per phase
  async,         // everything posted at once (AC): the busiest rank's port
};

struct StrategyOutput {
  Schedule schedule;
  Timing timing = Timing::synchronous;
  Contention contention = Contention::node;  // the verifier's rule 4 that its phases keep
  bool memory_rule = false;                  // rule 5 applies (memory-constrained plans)
  nlohmann::ordered_json options = nlohmann::ordered_json::object();  // what shaped it (manifest)
};

using StrategyFn = StrategyOutput (*)(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);

StrategyOutput strategy_direct(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);
StrategyOutput strategy_two_stage(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);
StrategyOutput strategy_memory(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);
StrategyOutput strategy_async(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);

}  // namespace commfit
