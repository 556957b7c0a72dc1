// The matrix file's defaults for the machine and the cost model ("topology", "cost"): they
// apply unless the command line gave its own (docs/FORMAT.md §1: the command line overrides them).
#pragma once

#include "ir/matrix_io.h"
#include "planner/pipeline.h"

#include <CLI/CLI.hpp>

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace commfit {

struct CommandLineMachine {
  bool topology_given = false;  // --topology given (its value is in the PlanOptions already)
  std::string node_map;         // --node-map FILE (empty: not given)
  bool tau_given = false;       // --tau given
  bool bandwidth_given = false; // --bandwidth given
};

// What the command line of `sub` (plan, compare) gave of the machine.
CommandLineMachine command_line_machine(const CLI::App& sub, const std::string& node_map);

// Sets o.topology and o.cost from the file `path` read into `in` where the command line gave
// none (the file's tau and bandwidth go through the planning options' reader,
// planner/plan_option.h), then places the ranks by the --node-map file, if given. A bad
// "topology" in the file is an InputError naming the file and /topology; a bad node map one
// naming the map file and the line.
void apply_file_defaults(const MatrixFile& in, const std::string& path, const CommandLineMachine& cli, PlanOptions& o);

// A node map file (docs/FORMAT.md "Node maps"): one entry per rank, in rank order, separated by
// white space; '#' starts a comment to the end of its line. Entries are node numbers, or names
// (a host name each, as `mpirun --display-map` or `hostname` on each rank prints them) that are
// numbered by first appearance. Throws InputError naming the file and the line.
std::vector<Rank> read_node_map(const std::string& path);   // a regular file of at most 1 GiB (read_text_file)
std::vector<Rank> read_node_map(std::istream& in, const std::string& path);   // the text, read from `in`

// --node-map FILE of plan and compare.
void add_node_map_option(CLI::App* sub, std::string& path);

// The MATRIX argument of plan, verify, stats and compare ("what" says what it is) and its
// --input-format json|mtx, which overrides the format read_matrix tells from the content.
void add_matrix_argument(CLI::App* sub, std::string& path, std::optional<MatrixFormat>& format, const std::string& what);

// --threads N of plan and compare: auto's candidates planned at once (PlanOptions::threads).
// Read it with threads_or_default (planner/limits.h).
void add_threads_option(CLI::App* sub, std::optional<int>& threads);

}  // namespace commfit
