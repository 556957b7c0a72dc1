// The network model's command-line options (plan and compare share them): --network,
// --overhead, --eager-limit, --ib-factors, --link-latency, --window, --rtt-weight, --intra-latency,
// --intra-bandwidth (ir/network_sim.h documents what each models), and --machine FILE, a machine
// file whose figures apply where no option is given (planner/machine_file.h).
#pragma once

#include "ir/network_sim.h"
#include "planner/pipeline.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace commfit {

struct NetworkFlags {
  std::string machine;             // --machine FILE ("": none)
  const CLI::App* app = nullptr;   // the subcommand: which options its command line gave
};

// Adds the options to `sub`: the network model's planning options (planner/plan_option.h), read
// into `o` as the command line is parsed, and --machine.
std::shared_ptr<NetworkFlags> add_network_options(CLI::App* sub, PlanOptions& o);

// After parsing, and after the matrix file's defaults (apply_file_defaults): the machine file's
// figures for every option the command line did not give. Throws UsageError for --ib-factors with
// a model that is not ib; InputError for a machine file that cannot be read or is not one.
void apply_network_flags(const NetworkFlags& flags, PlanOptions& o);

}  // namespace commfit
