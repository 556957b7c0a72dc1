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

void add_matrix_argument(CLI::App* sub, std::string& path, std::optional<MatrixFormat>& format, const std::string& what) {
  sub->add_option("MATRIX", path, what + ", commfit JSON or Matrix Market (told apart by content), - for standard input")->required();
  sub->add_option_function<std::string>(
         "--input-format", [&format](const std::string& v) { format = v == "mtx" ? MatrixFormat::matrix_market : MatrixFormat::json; },
         "Read MATRIX as json or mtx (Matrix Market) whatever its content")
      ->check(CLI::IsMember({"json", "mtx"}));
}

void add_threads_option(CLI::App* sub, std::optional<int>& threads) {
  sub->add_option("--threads", threads,
                  "Candidates of --strategy auto planned at once, with the same result (default: the CPUs this process may use, by its "
                  "affinity and cgroup CPU quota)");
}

}  // namespace commfit
