// Subcommands of the commfit command line, one file each (planner/cmd_NAME.cpp). Each adds its
// subcommand to the app with its own options struct and, when the subcommand is
// chosen, sets `run` to the function that carries it out and returns the exit status.
// User errors are thrown as InputError (exit 2) or UsageError (exit 2); main reports them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace commfit {

using Runner = std::function<int()>;

void add_plan_command(CLI::App& app, Runner& run);
void add_verify_command(CLI::App& app, Runner& run);
void add_stats_command(CLI::App& app, Runner& run);
void add_show_command(CLI::App& app, Runner& run);
void add_convert_command(CLI::App& app, Runner& run);
void add_compare_command(CLI::App& app, Runner& run);
void add_bound_command(CLI::App& app, Runner& run);
void add_gen_command(CLI::App& app, Runner& run);
void add_extract_command(CLI::App& app, Runner& run);
void add_report_command(CLI::App& app, Runner& run);

}  // namespace commfit
