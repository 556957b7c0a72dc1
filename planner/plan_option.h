// The planning options: one table (plan_option_table) of every option a plan is made with, and
// one reader of their values, which every way of giving them feeds:
//  - the command line (`--KEY VALUE`, add_plan_options below),
//  - in-job planning's "key=value" words (runtime/in_job.hpp), and so the interposer's
//    COMMFIT_PLAN_OPTIONS,
//  - the matrix file's "cost" defaults (planner/file_defaults.h).
// A machine file's figures (planner/machine_file.h) are typed by its own reader and go into the
// same fields.
//
// A value of the wrong kind is refused here, naming the option as it was written ("--tau 2parsecs:
// expected a time ..." on the command line, "tau=2parsecs: expected ..." in words). Whether a
// strategy reads an option and accepts a choice (algorithm, variant, method, concurrency,
// max-outstanding, steps), and the model's ranges (overhead at most tau / 2), are checked once by
// check_plan_options (planner/pipeline.h), before `auto` branches.
//
// Adding an option: one field in PlanOptions (planner/pipeline.h) and one entry in the table
// (plan_option.cpp); docs/ARCHITECTURE.md walks through it.
#pragma once

#include "planner/pipeline.h"
#include "planner/units.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Declared only: code that runs inside MPI jobs (runtime/, also under SMPI) reads options without
// CLI11.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace commfit {

enum class StrategyOption;   // planner/strategy_table.h

struct PlanOptionEntry {
  const char* key;    // --KEY on the command line, KEY=VALUE in words
  const char* value;  // what the value is, in the command line's help: NAME, N, BYTES, SECONDS...
  const char* help;   // the command line's help line (a strategy option's choices are added to it)
  // Set when only some strategies read the option (the strategy table says which).
  std::optional<StrategyOption> strategy_option;
  // Reads `value` into `o`. Returns "" or why it refuses it ("expected a time (2us, 500ns, or
  // seconds)"), which the caller puts after the option as it was written.
  std::string (*set)(PlanOptions& o, const std::string& value);
  // The option's value in `o` as text: the command line's help shows the default with it.
  std::string (*text)(const PlanOptions& o);
};

// Every planning option, in the order they are listed to a user.
std::span<const PlanOptionEntry> plan_option_table();
const PlanOptionEntry* find_plan_option(std::string_view key);   // nullptr: not a planning option

// The keys of the table, in its order (the callers that list them: "keys: strategy, ...").
std::vector<std::string> plan_option_keys();

// Sets `key` to `value` in `o`; false when `key` is not a planning option (the caller may know
// it). A value the option cannot take is a UsageError "KEY=VALUE: expected WHAT".
bool set_plan_option(PlanOptions& o, const std::string& key, const std::string& value);

// Adds --KEY to `sub` for each of `keys`: its value goes into `o` through the entry's set as the
// command line is parsed, and a value it refuses is the parser's error "--KEY VALUE: expected
// WHAT". Returns the options added, by key, for the callers that ask what was given.
std::vector<std::pair<std::string, CLI::Option*>> add_plan_options(CLI::App* sub, PlanOptions& o, std::span<const char* const> keys);

// Refuses (UsageError) planning options as the command line does, before any strategy runs:
// check_plan_options (pipeline.h), and a strategy option among `keys` (the keys a caller set:
// "algorithm", "memory", ...) that o.strategy does not read ("--algorithm does not apply to
// strategy auto (it applies to: direct, two-stage)").
void check_plan_option_keys(const PlanOptions& o, std::span<const std::string> keys);

// The value of KEY=VALUE as a whole number, or as a finite non-negative quantity of `kind` (with
// or without a unit, planner/units.h); otherwise a UsageError "KEY=VALUE: expected WHAT". For the
// callers that add keys of their own (in-job planning's memory and root).
std::uint64_t option_whole(const std::string& key, const std::string& value, const char* what);
double option_quantity(const std::string& key, const std::string& value, Quantity kind, const char* what);

}  // namespace commfit
