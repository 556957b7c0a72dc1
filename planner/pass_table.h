// The pass table (Binaryen's registerPasses()): one entry per pass, naming it, its
// source, what it does and what it guarantees. The pass runner (planner/pass_runner.h) runs
// passes by their Pass value, never by a string, and sets the verifier's rules from the entry of
// the pass that produced a schedule; --list-passes, --print-after and --verify-each read it too.
// Adding a pass: a value of Pass, one line of kPasses (planner/pass_table.cpp), and the pass's
// own .h/.cpp pair under passes/ (docs/ARCHITECTURE.md).
#pragma once

#include "passes/verify.h"

#include <optional>
#include <span>
#include <string>

namespace commfit {

// A name, its source (paper and section) and a one-line description: a row of --list-passes.
struct NamedEntry {
  const char* name;
  const char* source;
  const char* description;
};

enum class Pass {
  compress,          // CompressedMatrix
  decompose,         // Schedule
  decompose_links,   // Schedule
  post_all,          // Schedule
  posting_order,     // PostingOrder
  heap_split,        // Schedule
  quantised_split,   // Schedule
  profile_split,     // Schedule
  shave,             // Schedule
  link_check,        // Schedule
  group_phases,      // Schedule
  two_stage_split,   // TwoStageSplit
  stage_schedule,    // Schedule
  park,              // Schedule
  relaxation,        // optional Schedule
  node_aggregate,    // Schedule
  lower,             // Plan
  verify,            // problems
};

struct PassEntry {
  Pass pass;
  NamedEntry entry;
  // The pass returns a Schedule, which --verify-each lowers and verifies under the rules below.
  bool schedule = false;
  // Rule 4 its schedule keeps: none (several messages per port per phase), node (every phase a
  // partial permutation) or link (the node rule, and a phase's routes link-disjoint; on a machine
  // without shared links the node rule). nullopt: whatever rule its input kept.
  std::optional<Contention> contention;
  bool memory = false;   // rule 5: every phase receives at most each rank's free bytes
};

std::span<const PassEntry> pass_table();
const PassEntry& pass_entry(Pass p);
const char* name(Pass p);
std::optional<Pass> find_pass(const std::string& name);

bool has_entry(std::span<const NamedEntry> table, const std::string& name);
std::string entry_names(std::span<const NamedEntry> table);   // "a, b, c"

// Pads to `width` characters (UTF-8 code points, not bytes: the sources hold "§" and "ö").
std::string pad(const std::string& s, std::size_t width);

// The text of `commfit --list-passes`: the strategy table, then the pass table.
std::string list_passes_text();

}  // namespace commfit
