// The planning options by name: one setter that in-job planning's "key=value" strings (and so the
// interposer's COMMFIT_PLAN_OPTIONS) feed, with the command line's spellings without "--"
// (strategy, algorithm, concurrency, tau, link-latency...). A value of the wrong kind is refused
// here ("KEY=VALUE: expected ..."); whether a strategy accepts a choice (algorithm, variant,
// method, concurrency, max-outstanding, steps) and the model's ranges (overhead at most tau / 2)
// are checked once by check_plan_options (planner/pipeline.h), before any strategy runs.
#pragma once

#include "planner/pipeline.h"
#include "planner/units.h"

#include <span>
#include <string>

namespace commfit {

// The keys set_plan_option knows, in the order they are listed to a user.
std::span<const char* const> plan_option_keys();

// Sets `key` to `value` in `o`; false when `key` is not a planning option (the caller may know it).
bool set_plan_option(PlanOptions& o, const std::string& key, const std::string& value);

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
