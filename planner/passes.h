// The one table that names every pass, decomposition algorithm and strategy (STYLE.md 4).
// It drives --list-passes, the help text and option validation.
#pragma once

#include "planner/strategies.h"

#include <span>
#include <string>

namespace commfit {

struct NamedEntry {
  const char* name;
  const char* source;        // paper and section
  const char* description;   // one line
};

std::span<const NamedEntry> pass_table();
std::span<const NamedEntry> algorithm_table();   // --algorithm values of the direct strategy
struct StrategyEntry {
  NamedEntry entry;
  StrategyFn run;
};
std::span<const StrategyEntry> strategies();     // --strategy values and what runs them
std::span<const NamedEntry> strategy_table();    // their names and descriptions
const StrategyEntry* find_strategy(const std::string& name);

bool has_entry(std::span<const NamedEntry> table, const std::string& name);
std::string entry_names(std::span<const NamedEntry> table);   // "a, b, c"

// The text of `commfit --list-passes`.
std::string list_passes_text();

}  // namespace commfit
