// Strategy "node" (node-aware aggregation, passes/node_aggregate.h): on a machine with several
// ranks per node (--topology ...+nodeN, or a node map: --node-map FILE, +map:LIST), messages
// between nodes are gathered to one rank of the sending node per receiving node, cross the
// network as one message per node pair, and are scattered on arrival (--steps 3; --steps 2: each
// rank sends to its counterpart on the other node, which scatters, or for half the node pairs
// gathers first, whichever the model prices lower); messages inside a node, and
// messages large enough that their bytes cost more than their start-up, go directly (small ones
// inside a node in a hop's message). Fewer, larger network messages: it pays where per-message
// costs dominate (small messages, high fan-out, many ranks per node).
#include "passes/node_aggregate.h"
#include "ir/error.h"
#include "ir/cost_model.h"
#include "ir/network_sim.h"
#include "passes/lower.h"
#include "planner/strategy_table.h"

#include <algorithm>

namespace commfit {
namespace {

constexpr NamedEntry kSteps[] = {
    {"3", "Bienz-Gropp-Olson three-step", "gather to a node's agent for the remote node, one network message per node pair, scatter"},
    {"2", "Bienz-Gropp-Olson two-step", "each rank to its counterpart on the remote node, which scatters: up to N network messages per node pair"},
};
constexpr OptionEntry kNodeOptions[] = {{StrategyOption::steps, kSteps}};

StrategyOutput run_node(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  const Rank per = o.topology.ranks_per_node();
  if (per < 2)
    throw UsageError("strategy node needs several ranks per node: give the machine as --topology SPEC+nodeN (e.g. full+node16) or "
                     "a --node-map (the topology is " + o.topology.spec() + ")");
  // A message is worth aggregating while the two extra hops of its bytes (2 b / bandwidth) cost less
  // than the start-up it saves (tau): below tau x bandwidth / 2 bytes (10 kB at the defaults).
  const Bytes direct_from = std::max<Bytes>(1, static_cast<Bytes>(o.cost.tau_s * o.cost.bandwidth_Bps / 2));
  // A message inside a node rides with a hop between the same two ranks when its bytes take less
  // time in shared memory than the two overheads one message fewer saves.
  const Bytes ride_below = static_cast<Bytes>(2 * sim_overhead_s(o.cost.tau_s, o.cost.network) * o.cost.network.intra_bandwidth_Bps);
  StrategyOutput out;
  out.options["ranks_per_node"] = per;
  out.options["direct_from"] = direct_from;
  out.options["ride_below"] = ride_below;
  out.options["steps"] = std::to_string(o.steps);   // provenance, as the choice is named
  const NodeSteps steps = o.steps == 2 ? NodeSteps::two : NodeSteps::three;   // check_choices: 3 or 2
  // Aggregation groups: the node, or a part of it (N / 2, N / 4, ... while whole and >= 2 ranks;
  // N is the most ranks on any node, and a group never straddles nodes: NodeGroups). Smaller
  // groups send more, smaller network messages but shorten the scatter inside the node, which can
  // win when the NIC is the bottleneck anyway (MPI Advance's locality-aware alltoall splits a node
  // into groups of 4). The network model prices each (ir/network_sim.h), and the cheapest is
  // kept; ties to the larger.
  // With two steps, each group size both plain and alternating (passes/node_aggregate.h: half the
  // node pairs gathered first, so that the network is busy in both phases); ties to plain.
  Rank chosen = per;
  bool alternated = false;
  out.schedule = passes.run(Pass::node_aggregate, [&] {
    Schedule best;
    double best_s = 0;
    bool first = true;
    for (Rank group = per; group >= 2; group /= 2) {
      for (const bool alternate : {false, true}) {
        if (alternate && steps != NodeSteps::two) continue;
        Schedule s = node_aggregate(m, NodeGroups(o.topology, m.ranks, group), direct_from, steps, ride_below, alternate);
        const double cost = plan_estimate_s(lower(s, m), m, o.cost, o.topology);
        if (first || cost < best_s) {
          best = std::move(s);
          best_s = cost;
          chosen = group;
          alternated = alternate;
          first = false;
        }
      }
      if (group % 2 != 0) break;
    }
    return best;
  });
  out.options["group"] = chosen;
  if (steps == NodeSteps::two) out.options["alternate"] = alternated;
  return out;
}

}  // namespace

const Strategy& node_strategy() {
  static const Strategy s{
      .entry = {"node", "Bienz-Gropp-Olson (node-aware, --steps 3 or 2)", "messages between nodes through agents: one per node pair (3), or one per rank and node (2)"},
      .options = kNodeOptions,
      .run = run_node,
      .sweep = StrategyOption::steps,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      // Up to three hops per message between nodes.
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return 3 * network_messages(m); },
  };
  return s;
}

}  // namespace commfit
