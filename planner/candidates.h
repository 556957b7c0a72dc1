// Candidates for --strategy auto and commfit compare: every strategy of the strategy table that
// applies, once per value of the option it sweeps (direct: each algorithm, two-stage: each variant,
// memory: each method), is planned (and verified), base.threads of them at once; the cheapest
// under the cost model wins. Memory limits restrict the field to the strategies that honour them.
#pragma once

#include "ir/cost_model.h"
#include "planner/pipeline.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace commfit {

struct CandidateRow {
  std::string name;            // "direct/optimal", "async", "two-stage/bhj", ...
  PlanOptions options;
  std::string skipped;         // why it does not apply (empty when planned)
  Phase phases = 0;
  Bytes max_message = 0;
  double estimate_s = 0;       // the network model's time for the plan (ir/network_sim.h)
  bool simulated = true;       // false: the plan was beyond the simulation's limits, estimate_s is analytic
  double loose_s = 0;          // loosely synchronous (no barriers): the critical path
  double lower_bound_s = 0;
  double seconds = 0;          // planning time
};

struct Comparison {
  std::vector<CandidateRow> rows;
  std::optional<std::size_t> chosen;   // cheapest row (first of equals; simulated rows first)
  std::optional<Plan> plan;            // its plan, when asked for
  std::vector<std::string> log;        // every candidate's pass log (PlanReport::log), "name: " first
};

// auto's order: a simulated estimate before an analytic one, then the lower estimate, then (equal
// up to 1e-9 relative) fewer phases.
bool candidate_cheaper(const CandidateRow& a, const CandidateRow& b);

// The candidate list for a matrix: `base` supplies seed, cost and the other options.
std::vector<CandidateRow> candidates_for(const CommMatrix& m, const PlanOptions& base);

// Plans every candidate on base.threads threads (one with --print-after); keeps the cheapest plan
// when keep_plan is true. Rows, choice, plan and log are those of planning them one after another
// in index order, whatever the number of threads; only the rows' planning times differ.
// base.progress is called from one thread at a time.
Comparison compare_candidates(const CommMatrix& m, const PlanOptions& base, bool keep_plan);

// The comparison table, one row per candidate, the chosen one marked with '*'.
std::string format_comparison(const Comparison& c);

// The table as JSON rows, recorded in an auto plan's manifest options.
std::vector<CandidateRecord> candidate_records(const Comparison& c);

// The bound's JSON object of bound --json (schemas/bound.schema.json).
nlohmann::ordered_json bound_json(const ExchangeBound& b);

}  // namespace commfit
