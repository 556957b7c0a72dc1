#include "ir/cost_model.h"

#include "ir/error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>

namespace commfit {

double lower_bound_s(const TrafficStats& s, const CostOptions& c) { return lower_bound_s(s.h, s.t, c); }

double lower_bound_s(std::int64_t h, Bytes t, const CostOptions& c) {
  return static_cast<double>(h) * c.tau_s + static_cast<double>(t) / c.bandwidth_Bps;
}

double phase_seconds(Bytes largest, const CostOptions& c) { return c.tau_s + static_cast<double>(largest) / c.bandwidth_Bps; }

double port_seconds(std::int64_t messages, Bytes bytes, const CostOptions& c) {
  return static_cast<double>(messages) * c.tau_s + static_cast<double>(bytes) / c.bandwidth_Bps;
}

double synchronous_cost_s(const std::vector<Bytes>& largest, const CostOptions& c) {
  double total = 0;
  for (Bytes b : largest)
    if (b > 0) total += phase_seconds(b, c);
  return total;
}

double schedule_estimate_s(const Schedule& s, const CostOptions& c) { return synchronous_cost_s(phase_max_piece(s), c); }

std::vector<Bytes> phase_max_message(const Plan& plan) { return PlanTraffic(plan, false).phase_max(); }

double lower_bound_s(const CommMatrix& m, const TrafficStats& s, const CostOptions& c, const Topology& topo) {
  Bytes busiest = 0;
  for (Bytes b : link_loads(m, topo)) busiest = std::max(busiest, b);
  return std::max(lower_bound_s(s, c), static_cast<double>(busiest) / c.bandwidth_Bps);
}

std::vector<Bytes> link_loads(const CommMatrix& m, const Topology& topo) {
  if (topo.kind() == Topology::Kind::full) return {};
  std::vector<Bytes> load(static_cast<std::size_t>(topo.link_count()), 0);
  std::vector<Link> links;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    topo.route(i, j, links);
    for (Link l : links) load[l.index()] += b;
  });
  return load;
}

namespace {

using Msg = PlanMessage;

// The messages of a plan (ir/network_sim.h), in phase order.
std::vector<Msg> messages_by_phase(const PlanTraffic& plan) {
  std::vector<Msg> msgs = plan.messages();
  std::stable_sort(msgs.begin(), msgs.end(), [](const Msg& a, const Msg& b) { return a.phase < b.phase; });
  return msgs;
}

// Per message (in messages_by_phase order), the bytes on the most loaded link of its route in its
// phase; per phase, the most loaded link. Both empty for the full crossbar.
struct LinkShare {
  std::vector<Bytes> message, phase;
};

LinkShare link_share(const PlanTraffic& plan, const std::vector<Msg>& msgs, const Topology& topo) {
  LinkShare out;
  if (topo.kind() == Topology::Kind::full) return out;
  out.phase.assign(plan.phases(), 0);
  out.message.assign(msgs.size(), 0);
  std::vector<Bytes> load(static_cast<std::size_t>(topo.link_count()), 0);
  std::vector<Link> links, touched;
  for (std::size_t k = 0; k < msgs.size();) {
    const Phase phase = msgs[k].phase;
    const std::size_t begin = k;
    for (; k < msgs.size() && msgs[k].phase == phase; ++k) {
      topo.route(msgs[k].from, msgs[k].to, links);
      for (Link l : links) {
        if (load[l.index()] == 0) touched.push_back(l);
        load[l.index()] += msgs[k].bytes;
        out.phase[phase] = std::max(out.phase[phase], load[l.index()]);
      }
    }
    for (std::size_t i = begin; i < k; ++i) {
      topo.route(msgs[i].from, msgs[i].to, links);
      for (Link l : links) out.message[i] = std::max(out.message[i], load[l.index()]);
    }
    for (Link l : touched) load[l.index()] = 0;
    touched.clear();
  }
  return out;
}

}  // namespace

double synchronous_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo) {
  return synchronous_estimate_s(PlanTraffic(plan), c, topo);
}

SynchronousPhases synchronous_phases(const PlanTraffic& plan, const CostOptions& c, const Topology& topo) {
  SynchronousPhases out;
  out.largest = plan.phase_max();
  if (topo.kind() != Topology::Kind::full) out.busiest_link = link_share(plan, messages_by_phase(plan), topo).phase;
  out.seconds.assign(out.largest.size(), 0.0);
  for (std::size_t k = 0; k < out.largest.size(); ++k)
    if (out.largest[k] > 0) out.seconds[k] = phase_seconds(std::max(out.largest[k], out.busiest_link.empty() ? 0 : out.busiest_link[k]), c);
  return out;
}

double synchronous_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo) {
  double total = 0;
  for (double s : synchronous_phases(plan, c, topo).seconds) total += s;
  return total;
}

double loose_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo) { return loose_estimate_s(PlanTraffic(plan), c, topo); }

double loose_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo) {
  commfit_assert(!plan.messages_dropped(), "loose_estimate_s", "the plan's messages were not kept");
  const std::vector<Msg> msgs = messages_by_phase(plan);
  const LinkShare link = link_share(plan, msgs, topo);
  std::vector<double> ready(static_cast<std::size_t>(plan.ranks()), 0.0), finish(static_cast<std::size_t>(plan.ranks()), 0.0);
  for (std::size_t k = 0; k < msgs.size();) {
    // Every message of the phase starts from its ends' finish times of the phases before.
    const std::size_t begin = k;
    for (; k < msgs.size() && msgs[k].phase == msgs[begin].phase; ++k) {
      const Msg& m = msgs[k];
      const Bytes b = link.message.empty() ? m.bytes : std::max(m.bytes, link.message[k]);
      const double end = std::max(ready[m.from], ready[m.to]) + c.tau_s + static_cast<double>(b) / c.bandwidth_Bps;
      finish[m.from] = std::max(finish[m.from], end);
      finish[m.to] = std::max(finish[m.to], end);
    }
    for (std::size_t i = begin; i < k; ++i) {
      ready[msgs[i].from] = finish[msgs[i].from];
      ready[msgs[i].to] = finish[msgs[i].to];
    }
  }
  return ready.empty() ? 0.0 : *std::max_element(ready.begin(), ready.end());
}

double async_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo) { return async_estimate_s(PlanTraffic(plan), c, topo); }

double async_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo) {
  double worst = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(plan.ranks()); ++r) worst = std::max(worst, port_seconds(plan.runs_out()[r], plan.bytes_out()[r], c));
  for (std::size_t r = 0; r < static_cast<std::size_t>(plan.ranks()); ++r) worst = std::max(worst, port_seconds(plan.runs_in()[r], plan.bytes_in()[r], c));
  if (topo.kind() != Topology::Kind::full) {
    // All phases at once: a link carries everything routed over it.
    commfit_assert(!plan.messages_dropped(), "async_estimate_s", "the plan's messages were not kept");
    Bytes busiest = 0;
    std::vector<Bytes> load(static_cast<std::size_t>(topo.link_count()), 0);
    std::vector<Link> links;
    for (const Msg& m : plan.messages()) {
      topo.route(m.from, m.to, links);
      for (Link l : links) busiest = std::max(busiest, load[l.index()] += m.bytes);
    }
    if (busiest > 0) worst = std::max(worst, c.tau_s + static_cast<double>(busiest) / c.bandwidth_Bps);
  }
  return worst;
}

namespace {

// The most links a node sends (or receives) on at once: its links of the topology.
std::int64_t node_links(const Topology& topo) {
  switch (topo.kind()) {
    case Topology::Kind::full: return 1;
    case Topology::Kind::hypercube: return std::max<std::int64_t>(1, topo.dims().front());
    case Topology::Kind::mesh:
    case Topology::Kind::torus: return std::max<std::int64_t>(1, 2 * static_cast<std::int64_t>(topo.dims().size()));
    case Topology::Kind::fattree: return std::max<std::int64_t>(1, topo.fattree_parallel().front());
    case Topology::Kind::dragonfly: return 1;   // one local link to its router
  }
  return 1;
}

// The posting term with each message's own route latency (per-link latencies: a route of n links
// takes n times the link's; 0 links: inside the node, the intra-node latency), from counts of
// messages by route length. A rank posts its sends one after another, o each, so its k-th send
// (from 0) leaves no earlier than (k + 1) o; it arrives a route latency later, and an eager one
// still costs its receiver o: the sender's last arrival is least when it posts its messages by
// that tail, longest first (Jackson's rule), which gives the sender's term. A receiver processes
// its eager messages one after another, o each, none before o + its route latency: with their
// earliest arrivals sorted a_0 <= a_1 <= ..., it is done no earlier than a_j + (e - j) o for
// every j.
class RouteCounts {
 public:
  explicit RouteCounts(std::size_t ranks) : out_(ranks), in_(ranks) {}
  void add(Rank from, Rank to, std::size_t links, bool eager) {
    bump(out_[static_cast<std::size_t>(from)], 2 * links + (eager ? 1 : 0));
    if (eager) bump(in_[static_cast<std::size_t>(to)], links);
  }
  double cpu_s(double o, double intra_latency, double link_latency) const {
    auto latency = [&](std::size_t links) { return links == 0 ? intra_latency : link_latency * static_cast<double>(links); };
    double worst = 0;
    std::vector<std::pair<double, std::int64_t>> tails;   // (tail, messages), longest first
    for (const std::vector<std::int64_t>& counts : out_) {
      tails.clear();
      for (std::size_t k = 0; k < counts.size(); ++k)
        if (counts[k] > 0) tails.emplace_back(latency(k / 2) + (k % 2 ? o : 0.0), counts[k]);
      std::sort(tails.begin(), tails.end(), std::greater<>());
      std::int64_t posted = 0;
      for (const auto& [tail, n] : tails) worst = std::max(worst, static_cast<double>(posted += n) * o + tail);
    }
    for (const std::vector<std::int64_t>& counts : in_) {
      std::int64_t left = 0;   // eager messages in, then those not yet processed
      for (std::int64_t n : counts) left += n;
      for (std::size_t links = 0; links < counts.size(); ++links)
        if (counts[links] > 0) {
          worst = std::max(worst, o + latency(links) + static_cast<double>(left) * o);
          left -= counts[links];
        }
    }
    return worst;
  }

 private:
  static void bump(std::vector<std::int64_t>& counts, std::size_t k) {
    if (counts.size() <= k) counts.resize(k + 1, 0);
    ++counts[k];
  }
  std::vector<std::vector<std::int64_t>> out_, in_;
};

}  // namespace

namespace {

// What a port or link carries in a direct plan: the fewest links of its messages' routes, and
// whether every one of them is eager.
struct Carried {
  std::size_t fewest_links = std::numeric_limits<std::size_t>::max();
  bool all_eager = true;
  void add(std::size_t links, bool eager) { fewest_links = std::min(fewest_links, links), all_eager = all_eager && eager; }
};

}  // namespace

ExchangeBound exchange_bound(const CommMatrix& m, const CostOptions& c, const Topology& topo) {
  topo.check_ranks(m.ranks);
  ExchangeBound b;
  const double o = sim_overhead_s(c.tau_s, c.network);
  double latency = std::max(0.0, c.tau_s - 2 * o);
  const double intra_latency = std::max(0.0, c.network.intra_latency_s);
  const bool per_link = c.network.link_latency_s >= 0 && topo.kind() != Topology::Kind::full;
  const bool ib = c.network.model == Network::ib;
  // A flow's own bound before the IB penalties: the bandwidth, or the TCP window over its route's
  // round trip when that is less (ir/network_sim.h).
  auto flow_rate = [&](double route_latency) {
    return c.network.window_bytes > 0 && route_latency > 0 ? std::min(c.bandwidth_Bps, c.network.window_bytes / (2 * route_latency))
                                                           : c.bandwidth_Bps;
  };
  // Fan-out per rank; bytes out of and into each node over the network (a node's ranks share its
  // port, its NIC; with one rank per node a node is a rank); under IB, each node's bytes over
  // each flow's own rate, out and in.
  std::vector<std::int64_t> fan_out(static_cast<std::size_t>(m.ranks), 0), eager_in(static_cast<std::size_t>(m.ranks), 0);
  const std::size_t nodes = static_cast<std::size_t>(topo.node_slots(m.ranks));
  std::vector<Bytes> out(nodes, 0), in(nodes, 0);
  std::vector<double> out_time(ib ? nodes : 0, 0.0), in_time(ib ? nodes : 0, 0.0);
  std::vector<Bytes> load(topo.kind() != Topology::Kind::full ? static_cast<std::size_t>(topo.link_count()) : 0, 0);
  // Per link, and per node out and in: the fewest links of the routes of the messages it carries,
  // and whether all of them are eager (the direct terms below).
  std::vector<Carried> link_carried(load.size()), out_carried(nodes), in_carried(nodes);
  std::vector<Link> route;
  std::size_t hops = std::numeric_limits<std::size_t>::max();
  bool any = false, intra = false, inter = false;
  // With per-link latencies, each rank's messages out and eager messages in, counted by route
  // length (0: inside the node) and, out, by eagerness: the routes term below.
  RouteCounts routes(per_link ? static_cast<std::size_t>(m.ranks) : 0);
  m.for_each([&](Rank i, Rank j, Bytes bytes) {
    if (i == j || bytes == 0) return;
    any = true;
    ++fan_out[i];
    const bool eager = bytes < c.network.eager_limit;
    if (eager) ++eager_in[j];   // every message of the pair is eager
    const Node from = topo.node_of(i), to = topo.node_of(j);
    if (from == to) {   // no port, no link: the node's shared memory
      intra = true;
      if (per_link) routes.add(i, j, 0, eager);
      return;
    }
    inter = true;
    out[from.index()] += bytes;
    in[to.index()] += bytes;
    double route_latency = latency;
    std::size_t links = 0;
    if (!load.empty()) {
      topo.route(i, j, route);
      links = route.size();
      hops = std::min(hops, links);
      for (Link l : route) load[l.index()] += bytes, link_carried[l.index()].add(links, eager);
      if (per_link) {
        route_latency = c.network.link_latency_s * static_cast<double>(route.size());
        routes.add(i, j, route.size(), eager);
      }
    }
    out_carried[from.index()].add(links, eager), in_carried[to.index()].add(links, eager);
    if (ib) {
      const double t = static_cast<double>(bytes) / flow_rate(route_latency);
      out_time[from.index()] += t;
      in_time[to.index()] += t;
    }
  });
  if (!any) return b;
  // A rank's CPU: each send it posts and each eager message it receives costs it o, one after
  // another; its last send still waits a latency, and it processes no eager message before the
  // first can have arrived (o + L_0). L_0: the shortest latency of any message.
  auto cpu_s = [&](double first) {
    double worst = 0;
    for (std::size_t r = 0; r < fan_out.size(); ++r) {
      const double sends = static_cast<double>(fan_out[r]) * o;
      if (fan_out[r] > 0) worst = std::max(worst, sends + first);
      if (eager_in[r] > 0) worst = std::max(worst, std::max(sends, o + first) + static_cast<double>(eager_in[r]) * o);
    }
    return worst;
  };
  if (!inter) {
    b.latency_s = intra_latency + o;
    b.relay_s = b.latency_s;
    b.posting_s = cpu_s(intra_latency);
    b.direct_s = std::max(b.relay_s, b.posting_s);
    return b;
  }
  // The first byte of the busiest port or link moves only after a message's latency: the shortest
  // route's with per-link latencies (a relay may use any route: none).
  if (per_link) latency = c.network.link_latency_s * static_cast<double>(hops);
  // A direct plan's port or link carries only its own messages, on their own routes: its first
  // byte moves no sooner than the shortest of their latencies after the first post, and when all
  // of them are eager, the receiver of the last to arrive processes it (o) after it has: the time
  // that adds to o + L and the bytes.
  auto beyond = [&](const Carried& x) {
    const double own = per_link ? c.network.link_latency_s * static_cast<double>(x.fewest_links) : latency;   // only ones that carry bytes
    return std::max(0.0, own - latency) + (x.all_eager ? o : 0.0);
  };
  // The busiest port: a node's bytes leave and arrive through its port on the crossbar, through
  // its own links on a topology (a fat tree's host link; 2 per dimension on a torus or mesh, D on
  // a hypercube).
  const double port_rate = c.bandwidth_Bps * (topo.kind() != Topology::Kind::full ? static_cast<double>(node_links(topo)) : 1.0);
  Bytes port = 0;
  for (std::size_t r = 0; r < nodes; ++r) {
    port = std::max({port, out[r], in[r]});
    if (out[r] > 0) b.port_direct_s = std::max(b.port_direct_s, static_cast<double>(out[r]) / port_rate + beyond(out_carried[r]));
    if (in[r] > 0) b.port_direct_s = std::max(b.port_direct_s, static_cast<double>(in[r]) / port_rate + beyond(in_carried[r]));
  }
  b.port_s = static_cast<double>(port) / port_rate;
  // The most loaded link on the machine's routes (a link k cables wide carries k times the bytes).
  for (std::size_t l = 0; l < load.size(); ++l)
    if (load[l] > 0) {
      const auto carried = static_cast<Bytes>(std::ceil(static_cast<double>(load[l]) / topo.link_width(Link{static_cast<std::int64_t>(l)})));
      b.link_s = std::max(b.link_s, static_cast<double>(carried) / c.bandwidth_Bps + beyond(link_carried[l]));
    }
  // Under IB a flow's rate is at most its own bound over its penalty, and the penalties of the
  // flows a node has in (out) at one time sum to at least Be (Bs) times their number: so a node
  // takes in at most bandwidth / Be in all, and spends at least Be x (sum over its flows in of
  // bytes / the flow's own rate) receiving them; Bs and the flows out the same way.
  if (ib) {
    const double be = std::min(1.0, c.network.ib.be), bs = std::min(1.0, c.network.ib.bs);
    for (std::size_t r = 0; r < nodes; ++r) {
      b.ib_direct_s = std::max({b.ib_direct_s, be * in_time[r], bs * out_time[r]});
      b.ib_s = std::max({b.ib_s, be * static_cast<double>(in[r]) / c.bandwidth_Bps, bs * static_cast<double>(out[r]) / c.bandwidth_Bps});
    }
  }
  b.latency_s = o + latency;
  b.relay_s = o + (per_link ? 0.0 : latency) + std::max(b.port_s, b.ib_s);
  b.posting_s = std::max(cpu_s(intra ? std::min(latency, intra_latency) : latency),
                         routes.cpu_s(o, intra_latency, c.network.link_latency_s));
  b.direct_s = std::max(b.posting_s, b.latency_s + std::max({b.port_direct_s, b.link_s, b.ib_s, b.ib_direct_s}));
  return b;
}

const char* ExchangeBound::binding(bool relay) const {
  struct Term {
    const char* name;
    double s;
  };
  const Term terms[] = {{"port", relay ? port_s : port_direct_s}, {"link", relay ? 0.0 : link_s}, {"ib-node", ib_s}, {"ib-flows", relay ? 0.0 : ib_direct_s}};
  const Term* top = std::max_element(std::begin(terms), std::end(terms), [](const Term& x, const Term& y) { return x.s < y.s; });
  if (!relay && posting_s > latency_s + top->s) return "posting";
  return top->s > 0 ? top->name : "latency";
}

double network_lower_bound_s(const CommMatrix& m, const CostOptions& c, const Topology& topo, bool relay) {
  return exchange_bound(m, c, topo).of(relay);
}

bool plan_relays(const Plan& plan, const CommMatrix& m) { return plan_relays(PlanTraffic(plan, false), m); }

bool plan_relays(const PlanTraffic& plan, const CommMatrix& m) {
  Bytes direct = 0;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) direct += b;
  });
  return plan.sent_bytes() > direct;
}

double plan_estimate_s(const Plan& plan, const CommMatrix& m, const CostOptions& c, const Topology& topo, bool* simulated) {
  return plan_estimate_s(PlanTraffic(plan, topo.kind() != Topology::Kind::full), m, c, topo, simulated);
}

double plan_estimate_s(const PlanTraffic& plan, const CommMatrix& m, const CostOptions& c, const Topology& topo, bool* simulated) {
  const SimResult sim = simulate_plan(plan, c.tau_s, c.bandwidth_Bps, c.network, topo);
  if (simulated) *simulated = sim.simulated;
  if (sim.simulated) return sim.seconds;
  const double analytic = plan.phases() <= 1 ? async_estimate_s(plan, c, topo) : synchronous_estimate_s(plan, c, topo);
  return std::max(analytic, network_lower_bound_s(m, c, topo, plan_relays(plan, m)));
}

}  // namespace commfit
