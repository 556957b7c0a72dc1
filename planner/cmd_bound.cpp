// commfit bound MATRIX: the time no plan beats on the machine (ir/cost_model.h exchange_bound,
// docs/FORMAT.md section 5.2), from the matrix and the machine alone, without planning.
#include "ir/cost_model.h"
#include "ir/matrix_io.h"
#include "planner/candidates.h"
#include "planner/commands.h"
#include "planner/file_defaults.h"
#include "planner/network_options.h"
#include "planner/plan_option.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>

namespace commfit {
namespace {

struct BoundCommand {
  std::string matrix;
  std::optional<MatrixFormat> input_format;
  std::string node_map;
  std::shared_ptr<NetworkFlags> network;
  PlanOptions plan;
  bool json = false;
};

int run_bound(const BoundCommand& c) {
  PlanOptions o = c.plan;
  const MatrixFile in = read_matrix(c.matrix, c.input_format);
  apply_file_defaults(in, c.matrix, command_line_machine(*c.network->app, c.node_map), o);
  apply_network_flags(*c.network, o);
  const ExchangeBound b = exchange_bound(in.matrix, o.cost, o.topology);
  const std::string topology = o.topology.kind() != Topology::Kind::full || o.topology.ranks_per_node() > 1 ? o.topology.spec() : "";
  if (c.json) {
    // schemas/bound.schema.json.
    nlohmann::ordered_json j;
    j["format"] = "commfit-bound";
    j["version"] = 1;
    j["matrix"] = {{"file", c.matrix}, {"fingerprint", matrix_fingerprint(in.matrix)}, {"ranks", in.matrix.ranks}};
    j["network"] = to_string(o.cost.network.model);
    j["tau_s"] = o.cost.tau_s;
    j["bandwidth_Bps"] = o.cost.bandwidth_Bps;
    if (!topology.empty()) j["topology"] = topology;
    j["bound"] = bound_json(b);
    std::puts(j.dump(1).c_str());
    return 0;
  }
  std::printf("%s: %d ranks on %s (network %s, tau %.3g s, bandwidth %.3g B/s)\n", c.matrix.c_str(), in.matrix.ranks,
              topology.empty() ? "the crossbar" : topology.c_str(), to_string(o.cost.network.model), o.cost.tau_s, o.cost.bandwidth_Bps);
  std::printf("  direct    %.4g s, set by %s: plans that send every byte to its destination\n", b.direct_s, b.binding(false));
  std::printf("  relaying  %.4g s, set by %s: every plan, two-stage and node plans included\n", b.relay_s, b.binding(true));
  std::printf("  terms     latency %.4g s, posting %.4g s, port %.4g s (direct %.4g s), link %.4g s, ib-node %.4g s, ib-flows %.4g s\n",
              b.latency_s, b.posting_s, b.port_s, b.port_direct_s, b.link_s, b.ib_s, b.ib_direct_s);
  return 0;
}

}  // namespace

void add_bound_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<BoundCommand>();
  CLI::App* sub = app.add_subcommand("bound", "Print the time no plan of a matrix beats on the machine, and the term that sets it");
  add_matrix_argument(sub, c->matrix, c->input_format, "Matrix file");
  constexpr const char* kMachineKeys[] = {"topology"};
  add_plan_options(sub, c->plan, kMachineKeys);
  add_node_map_option(sub, c->node_map);
  constexpr const char* kModelKeys[] = {"tau", "bandwidth"};
  add_plan_options(sub, c->plan, kModelKeys);
  c->network = add_network_options(sub, c->plan);
  sub->add_flag("--json", c->json, "Print the bound as JSON (schemas/bound.schema.json)");
  sub->footer(
      "Two bounds, computed from the matrix and the machine alone (docs/FORMAT.md section 5.2):\n"
      "  direct    no plan that sends every byte from its source to its destination on the machine's\n"
      "            routes beats it (direct, async, bounded, throttled; AC and MPI_Alltoallv too)\n"
      "  relaying  no plan at all beats it (two-stage and node plans forward through intermediaries)\n"
      "Each is set by one term: posting (the busiest sender's per-message overheads), port (a node's\n"
      "bytes over its links), link (the busiest link on the machine's routes), ib-node and ib-flows\n"
      "(network ib: a node's flows share at most bandwidth / Be; each flow at most its own rate), or\n"
      "latency. compare, plan's summary and the report divide by the same bound.");
  sub->callback([c, &run] { run = [c] { return run_bound(*c); }; });
}

}  // namespace commfit
