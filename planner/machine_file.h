// Machine files (docs/FORMAT.md "Machine files", schemas/machine.schema.json): the network model's
// parameters for the machine a job runs on, as commfit-calibrate measures them, read by planning
// in place of the defaults: `plan --machine FILE` and `compare --machine FILE`, in-job planning's
// `machine=FILE`, the interposer's COMMFIT_MACHINE. An option given explicitly (on the command
// line, in the in-job string) overrides the file's value; the file overrides a matrix file's
// "cost" defaults. The field names are the plan manifest's (docs/FORMAT.md §3 "options").
#pragma once

#include "ir/network_options.h"
#include "planner/pipeline.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace commfit {

struct MachineFile {
  std::string path;               // as given: recorded in the plan (PlanContract::machine)
  std::string name;               // "name": the machine's, free text ("" when absent)
  // The parameters the file sets (unset: the default, or what the options say).
  std::optional<double> tau_s, bandwidth_Bps;
  std::optional<Network> network;
  std::optional<double> overhead_s;
  std::optional<Bytes> eager_limit;
  std::optional<IbFactors> ib_factors;
  std::optional<double> link_latency_s, window_bytes, rtt_weight_bytes, intra_latency_s, intra_bandwidth_Bps;
  std::optional<std::uint32_t> cores_per_node;
  std::optional<double> rendezvous_s;
};

// Reads and checks a machine file (a regular file of at most 16 MiB). Anything wrong is an
// InputError naming the file, the field's place and the problem: not JSON, another format or
// version, a field of the wrong kind or out of range (a negative time, a zero bandwidth, an
// overhead above half of tau), an unknown field.
MachineFile read_machine_file(const std::string& path);
// The same from the file's text, named `file` in errors.
MachineFile parse_machine_file(std::string_view text, const std::string& file);

// Sets in `o` every parameter `m` has whose planning option (plan_option_keys: "tau",
// "bandwidth", "network", "ib-factors", "overhead", "eager-limit", "link-latency", "window",
// "rtt-weight", "intra-latency", "intra-bandwidth") is not among `given`, and records the file
// (o.machine).
void apply_machine_file(const MachineFile& m, PlanOptions& o, std::span<const std::string> given);

// One line of what the planner assumes for the machine: the file (or "defaults"), the model and
// its figures ("machine m.json (cluster A): network ib, tau 2.1 us, bandwidth 12 GB/s, overhead
// 0.45 us, eager limit 64 KiB, intra-node 0.3 us at 9.1 GB/s"). For the plan's summary.
std::string machine_line(const PlanOptions& o);

}  // namespace commfit
