// Strategy "async" (Ranka-Wang §3, AC): one phase in which every rank posts all its receives,
// then all its sends, in the coloured posting order (passes/posting_order.h) that the plan
// carries: each receiver's messages leave their senders at distinct positions, so that no
// receiver waits on messages that are all posted last. No contention rule holds.
#include "ir/cost_model.h"
#include "ir/network_sim.h"
#include "passes/lower.h"
#include "passes/posting_order.h"
#include "planner/strategy_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace commfit {
namespace {

// The simulated time of the one-phase plan posting in `order` (not simulated: infinity).
double simulated_s(Plan& plan, const PostingOrder& order, const PlanOptions& o) {
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) plan.ranks[r].send_order = order.peers[r];
  const SimResult sim = simulate_plan(plan, o.cost.tau_s, o.cost.bandwidth_Bps, o.cost.network, o.topology);
  return sim.simulated ? sim.seconds : std::numeric_limits<double>::infinity();
}

// Where routes differ in latency (per-link latencies on a topology) and every message is eager,
// the coloured order refined by routes, the busiest links' messages first, and, for small
// messages, the colouring and its refinement spread over the links (passes/posting_order.h). The
// network model prices them (the refinements' own model leaves out the links the messages share)
// and the cheapest stands, the colouring on a tie; an order priced at the bound ends the pricing. Elsewhere every route is alike and the colouring stands.
PostingOrder posting_order(const Schedule& s, const CommMatrix& m, const PlanOptions& o) {
  PostingOrder order = coloured_posting_order(m);
  const NetworkOptions& net = o.cost.network;
  if (net.link_latency_s < 0 || o.topology.kind() == Topology::Kind::full || s.transfers.size() > kSimulationMessages) return order;
  // Only where every message is eager: there the posting CPU and the routes' latencies set the
  // time; a rendezvous message's bytes outweigh its position.
  const bool all_eager = std::all_of(s.transfers.begin(), s.transfers.end(), [&](const Transfer& x) { return x.piece.bytes < net.eager_limit; });
  if (!all_eager) return order;
  const Topology& topo = o.topology;
  std::vector<Link> route;
  RouteTiming t;
  t.latency_s = [&](Rank i, Rank j) {
    if (topo.node_of(i) == topo.node_of(j)) return std::max(0.0, net.intra_latency_s);
    topo.route(i, j, route);
    return net.link_latency_s * static_cast<double>(route.size());
  };
  t.overhead_s = sim_overhead_s(o.cost.tau_s, net);
  t.bandwidth_Bps = o.cost.bandwidth_Bps;
  t.window_bytes = net.window_bytes;
  t.eager_limit = static_cast<double>(net.eager_limit);
  LinkRoutes links;
  links.link_count = topo.link_count();
  links.route = [&](Rank i, Rank j, std::vector<Link>& out) { topo.route(i, j, out); };
  links.link_width = [&](Link l) { return topo.link_width(l); };
  std::vector<PostingOrder> candidates{refine_by_routes(m, order, t), busiest_links_first(m, order, links)};
  // Spread over the links only where every message holds a link for less than half the gap
  // between two posts (o): there the messages posted at one position cross the links together and
  // apart from the other positions' (passes/posting_order.h); longer ones overlap the next positions.
  Bytes largest = 0;
  for (const Transfer& x : s.transfers) largest = std::max(largest, x.piece.bytes);
  if (static_cast<double>(largest) / t.bandwidth_Bps < t.overhead_s / 2) {
    candidates.push_back(spread_over_links(m, order, t, links));
    candidates.push_back(spread_over_links(m, candidates[0], t, links));
  }
  // Each order other than the colouring once; none: nothing to price.
  std::vector<const PostingOrder*> others;
  for (const PostingOrder& c : candidates)
    if (c.peers != order.peers && std::none_of(others.begin(), others.end(), [&](const PostingOrder* d) { return d->peers == c.peers; }))
      others.push_back(&c);
  if (others.empty()) return order;
  Plan plan = lower(s, m);
  double best = simulated_s(plan, order, o);
  const double bound = network_lower_bound_s(m, o.cost, topo, false);
  const PostingOrder* chosen = &order;
  for (const PostingOrder* c : others) {
    if (!std::isfinite(best) || best <= bound * (1 + 1e-9)) break;
    if (const double price = simulated_s(plan, *c, o); price < best) best = price, chosen = c;
  }
  return *chosen;
}

StrategyOutput run_async(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  StrategyOutput out;
  out.timing = Timing::async;
  out.schedule = post_all_schedule(m, passes);
  out.send_order = passes.run(Pass::posting_order, [&] { return posting_order(out.schedule, m, o); }).peers;
  return out;
}

}  // namespace

Schedule post_all_schedule(const CommMatrix& m, PassRunner& passes) {
  return passes.run(Pass::post_all, [&] {
    Schedule s;
    s.ranks = m.ranks;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != j) s.transfers.push_back({0, i, j, {i, j, 0, b}});
    });
    s.phases = s.transfers.empty() ? 0 : 1;
    s.copies = local_copies(m);
    canonicalize(s);
    return s;
  });
}

const Strategy& async_strategy() {
  static const Strategy s{
      .entry = {"async", "Ranka-Wang §3 (AC)", "one phase: every receive posted, then every send, no ordering"},
      .options = {},
      .run = run_async,
      .sweep = std::nullopt,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return network_messages(m); },
  };
  return s;
}

}  // namespace commfit
