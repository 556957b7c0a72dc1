// The planning pipeline: options in, verified Plan out. Strategies are straight lists of passes
// (planner/strategy_*.cpp); the pass table (planner/passes.cpp) names them for --list-passes,
// the help text and option validation.
#pragma once

#include "ir/cost_model.h"
#include "ir/plan.h"
#include "ir/topology.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace commfit {

struct PlanOptions {
  std::string strategy = "direct";     // "auto" or one of strategy_table()
  std::string algorithm = "optimal";   // direct: decomposition, see algorithm_table()
  std::string variant = "transport";   // two-stage: transport | transport-scan | transport-alt | bhj | random
  std::string method = "parking";      // memory: parking | relaxation
  Bytes chunk = 0;                     // direct/quantised: piece size; 0 = chosen by the cost model
  std::vector<Bytes> memory;           // free bytes per rank overriding the matrix's (empty: keep)
  Topology topology;                   // the machine (default full: a crossbar)
  std::uint64_t seed = 1;
  CostOptions cost;
  bool verify_each = false;            // run the verifier after every schedule-producing pass
  // Called with a pass's name as it starts (auto: "candidate: pass"); commfit plan shows it on a
  // terminal for long plans. Empty: nothing is called.
  std::function<void(const std::string&)> progress;
};

struct PlanReport {
  std::int64_t h = 0;                // max fan-in / fan-out (network messages)
  Bytes t = 0;                       // max bytes sent or received by one rank
  std::vector<std::string> log;      // one line per pass run: name, seconds, and "verified" with --verify-each
  std::string comparison;            // --strategy auto: the table it chose from
};

// Runs the strategy's passes, lowers, verifies; throws UsageError for options it cannot honour.
// A plan that fails verification is an internal error (it never leaves this function).
Plan make_plan(const CommMatrix& m, const PlanOptions& options, PlanReport* report = nullptr);

}  // namespace commfit
