// The network model's command-line options (plan and compare share them): --network,
// --overhead, --eager-limit, --ib-factors, --link-latency, --window, --rtt-weight, --intra-latency,
// --intra-bandwidth (ir/network_sim.h documents what each models).
#pragma once

#include "ir/network_sim.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace commfit {

struct NetworkFlags {
  std::string network = "flow";
  std::string ib_factors;   // empty: SimGrid's example values
  CLI::Option* ib_option = nullptr;
};

// Adds the options to `sub`; --overhead and --eager-limit write into `net` directly.
std::shared_ptr<NetworkFlags> add_network_options(CLI::App* sub, NetworkOptions& net);

// After parsing: the model and the IB factors into `net`. Throws UsageError for --ib-factors that
// are not three positive numbers, or given with --network flow.
void apply_network_flags(const NetworkFlags& flags, NetworkOptions& net);

}  // namespace commfit
