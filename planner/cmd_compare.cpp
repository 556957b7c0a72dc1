// commfit compare MATRIX: plan every candidate strategy and print the comparison table that
// --strategy auto chooses from, without writing a plan.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/candidates.h"
#include "planner/commands.h"
#include "planner/file_defaults.h"
#include "planner/limits.h"
#include "planner/network_options.h"
#include "planner/plan_option.h"
#include "planner/units.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>

namespace commfit {
namespace {

struct CompareCommand {
  std::string matrix;
  std::optional<MatrixFormat> input_format;
  std::string node_map;
  std::shared_ptr<NetworkFlags> network;
  PlanOptions plan;
  std::optional<std::uint64_t> max_memory;
  std::optional<int> threads;   // default: planner/limits.h usable_cpus()
  bool json = false;
};

int run_compare(const CompareCommand& c) {
  PlanOptions o = c.plan;
  o.threads = threads_or_default(c.threads);
  const MatrixFile in = read_matrix(c.matrix, c.input_format);
  apply_file_defaults(in, c.matrix, command_line_machine(*c.network->app, c.node_map), o);
  apply_network_flags(*c.network, o);
  PlanOptions every = o;   // the estimate of auto, which plans every candidate (planner/limits.h)
  every.strategy = "auto";
  check_plan_memory(in.matrix, every, c.matrix, c.max_memory);
  const TrafficStats s = traffic_stats(in.matrix);
  const ExchangeBound bound = exchange_bound(in.matrix, o.cost, o.topology);
  const Comparison cmp = compare_candidates(in.matrix, o, false);
  if (c.json) {
    // schemas/compare.schema.json: deterministic (no planning times), for scripts.
    nlohmann::ordered_json j;
    j["format"] = "commfit-compare";
    j["version"] = 1;
    j["matrix"] = {{"file", c.matrix}, {"fingerprint", matrix_fingerprint(in.matrix)}, {"ranks", in.matrix.ranks},
                   {"messages", s.messages}, {"h", s.h}, {"t", s.t}};
    j["network"] = to_string(o.cost.network.model);
    j["tau_s"] = o.cost.tau_s;
    j["bandwidth_Bps"] = o.cost.bandwidth_Bps;
    if (o.topology.kind() != Topology::Kind::full || o.topology.ranks_per_node() > 1) j["topology"] = o.topology.spec();
    j["lower_bound_s"] = bound.direct_s;
    j["candidates"] = candidates_json(candidate_records(cmp));
    if (cmp.chosen) j["chosen"] = cmp.rows[*cmp.chosen].name;
    std::puts(j.dump(1).c_str());
    return 0;
  }
  std::printf("%s: %d ranks, %lld messages, h = %lld, t = %llu B, bound = %.4g s (%s; relaying %.4g s, %s) (network %s, tau %.3g s, bandwidth %.3g B/s)\n",
              c.matrix.c_str(), in.matrix.ranks, static_cast<long long>(s.messages), static_cast<long long>(s.h),
              static_cast<unsigned long long>(s.t), bound.direct_s, bound.binding(false), bound.relay_s, bound.binding(true),
              to_string(o.cost.network.model), o.cost.tau_s, o.cost.bandwidth_Bps);
  std::fputs(format_comparison(cmp).c_str(), stdout);
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<CompareCommand>();
  CLI::App* sub = app.add_subcommand("compare", "Plan every candidate strategy and print the table --strategy auto chooses from");
  add_matrix_argument(sub, c->matrix, c->input_format, "Matrix file");
  constexpr const char* kMachineKeys[] = {"topology"};
  add_plan_options(sub, c->plan, kMachineKeys);
  add_node_map_option(sub, c->node_map);
  constexpr const char* kModelKeys[] = {"seed", "tau", "bandwidth"};
  add_plan_options(sub, c->plan, kModelKeys);
  c->network = add_network_options(sub, c->plan);
  sub->add_option("--max-memory", c->max_memory, "Refuse matrices whose plans would need more than BYTES (default: physical memory, or the cgroup's or Slurm's limit when lower)")->transform(quantity_transform(Quantity::bytes, true));
  add_threads_option(sub, c->threads);
  sub->add_flag("--json", c->json, "Print the comparison as JSON (schemas/compare.schema.json), without planning times");
  sub->footer(
      "The table: a first line with the matrix's ranks, messages, h (the most messages one rank sends\n"
      "or receives), t (the most bytes one rank sends or receives) and the bound, a time no plan that\n"
      "delivers every byte directly beats on the network model, with the term that sets it (posting,\n"
      "port, link, ib-node, ib-flows or latency), then the bound of every plan, relaying ones included\n"
      "(docs/FORMAT.md section 5.2); then one row per candidate:\n"
      "  candidate      the strategy and its variant (direct/optimal, bounded/8, node/2, ...)\n"
      "  phases         the plan's phases (1 for async and throttled, which post without phases)\n"
      "  max message B  the largest piece the plan sends, in bytes\n"
      "  estimate s     the plan's time simulated on the network model (--network), in seconds:\n"
      "                 what auto minimises\n"
      "  est/bound      estimate / the bound of its kind (the first bound above for plans that send\n"
      "                 every byte directly; the relaying one for two-stage and node plans);\n"
      "                 1.000 meets the bound\n"
      "  loose s        the loosely synchronous estimate: the critical path with no barrier between\n"
      "                 phases (a rank starts phase k when its own messages of phase k - 1 are done);\n"
      "                 reported, never used to choose\n"
      "  plan s         the wall time spent planning this candidate\n"
      "A * marks the candidate auto chooses; a ~ after the estimate marks an analytic estimate (the\n"
      "plan is beyond the simulation's limits; chosen only if no candidate was simulated); \"skipped:\"\n"
      "says why a candidate was not planned.");
  sub->callback([c, &run] { run = [c] { return run_compare(*c); }; });
}

}  // namespace commfit
