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
  std::string network = "flow";
  std::string ib_factors;   // empty: SimGrid's example values
  std::string machine;      // --machine FILE ("": none)
  CLI::Option* ib_option = nullptr;
  const CLI::App* app = nullptr;   // the subcommand: which options its command line gave
};

// Adds the options to `sub`; --overhead and --eager-limit write into `net` directly.
std::shared_ptr<NetworkFlags> add_network_options(CLI::App* sub, NetworkOptions& net);

// After parsing, and after the matrix file's defaults (apply_file_defaults): the model and the IB
// factors into `o.cost.network`, then the machine file's figures for every option the command line
// did not give. Throws UsageError for --ib-factors that are not three positive numbers, or given
// with --network flow; InputError for a machine file that cannot be read or is not one.
void apply_network_flags(const NetworkFlags& flags, PlanOptions& o);

}  // namespace commfit
