// The strategy table (PETSc's PetscSFOps and sfregi.c are the model): one entry per
// strategy, saying everything the rest of the planner needs to know of it: its name and source,
// the options it reads and the values they accept, how it plans (a straight list of passes,
// in its own file planner/strategy_NAME.cpp), which candidates it offers `auto`, and
// the size of the schedule it builds (planner/limits.h). The help text, --list-passes, option
// validation and the candidate list are all generated from it.
//
// Adding a strategy: planner/strategy_NAME.cpp defines `const Strategy& NAME_strategy()`, and
// NAME goes into COMMFIT_STRATEGIES below (docs/ARCHITECTURE.md walks through it).
#pragma once

#include "ir/schedule.h"
#include "planner/pass_runner.h"
#include "planner/pass_table.h"
#include "planner/pipeline.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

// The strategies, in the order auto plans them (and --list-passes lists them).
#define COMMFIT_STRATEGIES(X) X(direct) X(async) X(throttled) X(bounded) X(two_stage) X(memory) X(node)

namespace commfit {

// What a strategy's passes produce. The verifier's rules come from the pass table (the runner
// tracks them), not from the strategy.
struct StrategyOutput {
  Schedule schedule;
  Timing timing = Timing::synchronous;
  nlohmann::ordered_json options = nlohmann::ordered_json::object();   // what shaped it (manifest)
  std::uint32_t max_outstanding = 0;   // the request window every rank schedule carries (0: none)
  // Per rank, the posting order its schedule carries (RankSchedule::send_order); empty: every
  // rank posts rotated.
  std::vector<std::vector<Rank>> send_order;
};

// The options of `commfit plan` that belong to some strategies only (the rest apply to all).
enum class StrategyOption { algorithm, variant, method, chunk, memory, concurrency, max_outstanding, steps };

const char* flag(StrategyOption o);   // "--algorithm"
// A choice option's value in `o` as its table of choices names it ("optimal", "8"), and setting
// it by that name: through the option's entry in planner/plan_option.h.
std::string choice(const PlanOptions& o, StrategyOption option);
void set_choice(PlanOptions& o, StrategyOption option, const std::string& name);

struct OptionEntry {
  StrategyOption option;
  std::span<const NamedEntry> choices;   // the values it accepts; empty: any number (chunk, memory)
};

struct Strategy {
  NamedEntry entry;
  std::span<const OptionEntry> options;   // what it reads besides the options of every strategy
  StrategyOutput (*run)(const CommMatrix& m, const PlanOptions& o, PassRunner& passes);
  // auto and compare plan one candidate per value of this option ("NAME/VALUE"), or one ("NAME").
  std::optional<StrategyOption> sweep;
  // Plans only under per-rank memory limits; every other strategy only without them (it would
  // ignore them), so limits decide which strategies auto considers.
  bool needs_memory_limits = false;
  // Why auto and compare do not plan it on m (too large to try every variant); empty: they do.
  // --strategy NAME still plans it.
  std::string (*auto_skip)(const CommMatrix& m) = nullptr;
  // Transfers its schedule holds (each becomes two steps): the size estimate of planner/limits.h.
  std::uint64_t (*pieces)(const CommMatrix& m, const PlanOptions& o);
  // Planning time of one candidate relative to async's (its network simulation and search passes
  // dominate), measured at p = 1024 on the bench sets (docs/PERFORMANCE.md): auto's threads take
  // the candidates longest first so that they finish together. It orders the work, never the
  // result. nullptr: 1.
  double (*plan_cost)(const PlanOptions& o) = nullptr;
};

#define COMMFIT_DECLARE_STRATEGY(name) const Strategy& name##_strategy();
COMMFIT_STRATEGIES(COMMFIT_DECLARE_STRATEGY)
#undef COMMFIT_DECLARE_STRATEGY

// async's one phase: every message whole and direct, in one phase (the post-all pass). throttled
// replays the same schedule through a request window, without async's posting order.
Schedule post_all_schedule(const CommMatrix& m, PassRunner& passes);

std::span<const Strategy* const> strategy_table();
const Strategy* find_strategy(const std::string& name);   // nullptr for "auto" and unknown names
std::string strategy_names();                              // "auto, direct, async, ..."

// The values of the option auto sweeps (empty when it sweeps none).
std::span<const NamedEntry> sweep_choices(const Strategy& s);

// A strategy option's values over the strategies that read it: "direct: a, b; two-stage: c".
std::string option_choices_text(StrategyOption option);

// Refuses (UsageError) options given on the command line that `strategy` does not read, naming
// the strategies that do; auto reads --memory only (its candidates choose the rest).
void check_given_options(const std::string& strategy, std::span<const StrategyOption> given);

// Refuses (UsageError) a value of a choice option that the strategy does not accept.
void check_choices(const Strategy& s, const PlanOptions& o);

// Size estimates (Strategy::pieces): network messages (src != dst), the pieces of a plan that
// sends every message whole, and arithmetic that saturates instead of wrapping.
std::uint64_t network_messages(const CommMatrix& m);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

}  // namespace commfit
