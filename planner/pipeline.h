// The planning pipeline: options in, verified Plan out. Strategies are straight lists of passes
// (pipeline.cpp); the pass table (passes.h) names them for --list-passes and the help text.
#pragma once

#include "ir/cost_model.h"
#include "ir/plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace commfit {

struct PlanOptions {
  std::string strategy = "direct";   // direct (more strategies land with their issues)
  std::string algorithm = "optimal"; // decomposition for direct: optimal | rs_n | lp
  std::uint64_t seed = 1;
  CostOptions cost;
  bool verify_each = false;          // run the verifier after every schedule-producing pass
};

struct PlanReport {
  std::int64_t h = 0;                // max fan-in / fan-out (network messages)
  Bytes t = 0;                       // max bytes sent or received by one rank
  std::vector<std::string> log;      // one line per pass run: name, seconds, and "verified" with --verify-each
};

// Runs the strategy's passes, lowers, verifies; throws UsageError for options it cannot honour.
// A plan that fails verification is an internal error (it never leaves this function).
Plan make_plan(const CommMatrix& m, const PlanOptions& options, PlanReport* report = nullptr);

}  // namespace commfit
