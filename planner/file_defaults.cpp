#include "planner/file_defaults.h"

#include "ir/error.h"

namespace commfit {

void apply_file_defaults(const MatrixFile& in, const std::string& path, const CommandLineMachine& cli, PlanOptions& o) {
  if (in.cost.is_object()) {
    if (in.cost.contains("tau_s") && !cli.tau_given) o.cost.tau_s = in.cost["tau_s"].get<double>();
    if (in.cost.contains("bandwidth_Bps") && !cli.bandwidth_given) o.cost.bandwidth_Bps = in.cost["bandwidth_Bps"].get<double>();
  }
  if (!cli.topology.empty()) {
    o.topology = Topology::parse(cli.topology);
  } else if (!in.topology.is_null()) {
    try {
      o.topology = Topology::from_json(in.topology);
    } catch (const UsageError& e) {
      throw InputError(path, "/topology", e.what());
    }
  }
}

}  // namespace commfit
