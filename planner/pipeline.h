// The planning pipeline: options in, verified Plan out. Strategies are straight lists of passes
// (planner/strategy_*.cpp) named by the strategy table (planner/strategy_table.h); the passes by
// the pass table (planner/pass_table.h).
#pragma once

#include "ir/cost_model.h"
#include "ir/plan.h"
#include "ir/schedule.h"
#include "ir/topology.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace commfit {

// The options a plan is made with. Each one a user can give has one entry in the table of
// planner/plan_option.h, the one reader of its value (command line, in-job words, matrix file).
struct PlanOptions {
  // Which options a strategy reads, and the values it accepts: its strategy table entry.
  std::string strategy = "direct";     // "auto" or one of strategy_table()
  std::string algorithm = "optimal";   // direct and two-stage: the decomposition
  std::string variant = "transport";   // two-stage: which intermediaries carry the extra bytes
  std::string method = "parking";      // memory
  unsigned concurrency = 4;            // bounded: messages per port per phase
  unsigned max_outstanding = 4;        // throttled: requests in flight per rank
  unsigned steps = 3;                  // node: hops of a message between nodes (3 or 2)
  Bytes chunk = 0;                     // direct/quantised: piece size; 0 = chosen by the cost model
  std::vector<Bytes> memory;           // free bytes per rank overriding the matrix's (empty: keep)
  Topology topology;                   // the machine (default full: a crossbar)
  std::uint64_t seed = 1;
  CostOptions cost;
  std::string machine;                 // the machine file `cost` was read from (planner/machine_file.h); "" none
  // Run the verifier after every schedule-producing pass (also on without this flag in builds
  // without NDEBUG and where COMMFIT_VERIFY_EACH is set: verify_each_by_default()).
  bool verify_each = false;
  std::string print_after;             // a pass's name: print the schedule it returns on stderr
  // Called with a pass's name as it starts (auto: "candidate: pass"); commfit plan shows it on a
  // terminal for long plans. Empty: nothing is called.
  std::function<void(const std::string&)> progress;
  // --strategy auto and compare: candidates planned at once (planner/candidates.h); the result is
  // the same whatever the number. The command line's default is usable_cpus() (planner/limits.h);
  // callers of make_plan get one thread unless they ask for more.
  unsigned threads = 1;
};

struct PlanReport {
  std::int64_t h = 0;                // max fan-in / fan-out (network messages)
  Bytes t = 0;                       // max bytes sent or received by one rank
  std::vector<std::string> log;      // one line per pass run: name, seconds, and "verified" with --verify-each
  std::string comparison;            // --strategy auto: the table it chose from
  std::string bound_term;            // the term that sets cost.lower_bound_s (ExchangeBound::binding)
};

// --verify-each without the flag: in Debug builds (no NDEBUG), and when the environment sets
// COMMFIT_VERIFY_EACH to anything but "" or "0" (the test suite does).
bool verify_each_by_default();

// Where a plan goes as make_plan makes it: each rank schedule in rank order as soon as it is
// lowered (the whole plan is never held), then, once every rank has passed the verifier, the
// manifest. A plan that fails verification is an internal error thrown before finish(): a sink
// that writes files keeps them out of sight until finish() (backends/plan_binary.h writes a
// temporary file and renames it).
class PlanSink {
 public:
  virtual ~PlanSink() = default;
  // May move the schedule away.
  virtual void rank(RankSchedule&& rs) = 0;
  virtual void finish(const Manifest& m) = 0;
};

// The checks of `o` that need no matrix: a known strategy ("auto" or one of the table), its
// options' values among their choices, a cost model that can price. Throws UsageError naming the
// option. make_plan runs it first (before auto branches); in-job planning and the interposer run
// it when their options are read.
void check_plan_options(const PlanOptions& o);

// Runs the strategy's passes, lowers, verifies; throws UsageError for options it cannot honour.
// A plan that fails verification is an internal error (it never leaves this function). The
// first form streams the plan into `sink` and returns its manifest; the second keeps it.
Manifest make_plan(const CommMatrix& m, const PlanOptions& options, PlanSink& sink, PlanReport* report = nullptr);
Plan make_plan(const CommMatrix& m, const PlanOptions& options, PlanReport* report = nullptr);

}  // namespace commfit
