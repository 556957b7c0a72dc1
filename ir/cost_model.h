// The cost model of docs/FORMAT.md §5, from Ranka-Wang §2.2 assumption 1: a phase costs
// tau + mu * (largest message in it); synchronous phases add up. A message is all pieces one rank
// sends to one other rank in one phase (they travel as one MPI transfer). The lower bound is
// LB = h * tau + t * mu (Transportation §2: no schedule beats the busiest rank's message count
// or its byte count). mu = 1 / bandwidth.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/network_sim.h"
#include "ir/plan.h"
#include "ir/schedule.h"
#include "ir/topology.h"

namespace commfit {

struct CostOptions {
  double tau_s = 2e-6;            // per-message start-up time
  double bandwidth_Bps = 1e10;    // 1 / mu
  NetworkOptions network{};       // the simulated network every plan is priced on (ir/network_sim.h)
};

// The price of a plan under the network model (docs/FORMAT.md §5): simulate_plan, or for plans
// beyond its work limit the analytic estimate below (synchronous or async), never less than
// network_lower_bound_s. `simulated` (when given) says which.
double plan_estimate_s(const Plan& plan, const CommMatrix& m, const CostOptions& c, const Topology& topo, bool* simulated = nullptr);
// The same from a plan's traffic, gathered as the plan was made (its messages kept when topo has
// links).
double plan_estimate_s(const PlanTraffic& plan, const CommMatrix& m, const CostOptions& c, const Topology& topo, bool* simulated = nullptr);

// The bound of an exchange on a machine (docs/FORMAT.md §5.2): a time no plan's simulated replay
// beats, computed from the matrix and the machine alone. With L = tau - 2 o the latency of a
// message between nodes, L_0 the shortest latency of any message (intra_latency_s when some
// message stays inside a node), o the overhead of ir/network_sim.h, f_r a rank's fan-out, e_r the
// ranks that send it less than the eager limit (their messages are all eager), and B the
// bandwidth, each term in seconds:
//   posting   max over ranks of f_r o + L_0 and max(f_r o, o + L_0) + e_r o: a rank's CPU posts
//             its sends and processes its eager receives one after another, o each; with per-link
//             latencies also each message's own route latency: a sender's k-th send leaves at
//             (k + 1) o at the earliest (its messages posted longest route first), a receiver's
//             eager messages arrive no earlier than o + their route's latency;
//   port      the most bytes a node sends to or receives from other nodes over the links it has
//             (1 on the crossbar and a fat tree, 2 per dimension on a torus or mesh, D on a
//             hypercube), / B;
//   link      the most bytes a link carries on the machine's routes / B (a link k cables wide: / k);
//   the direct plans' port and link terms add, for each port (out or in) and link, what follows
//             from carrying only its own messages on their own routes: the shortest of their
//             route latencies beyond L (their first byte moves no sooner), and o when all of them
//             are eager (the receiver processes the last to arrive after it has);
//   ib-node   network ib: Be (Bs) x the most bytes a node receives (sends) / B: the penalties of a
//             node's flows in at one time add up to at least Be times their number, and no flow
//             goes faster than B, so a node takes in at most B / Be in all;
//   ib-flows  network ib: Be (Bs) x the largest sum over a node's flows in (out) of bytes / the
//             flow's own rate (B, or the TCP window over its route's round trip when less).
// direct_s bounds the plans that deliver every byte from its source to its destination on the
// machine's routes (direct, async, bounded, throttled, AC, MPI_Alltoallv):
//   max(posting, o + L + max(port, link, ib-node, ib-flows)) with the direct port and link terms,
//   or the posting term alone when no byte crosses nodes.
// relay_s bounds every plan, relaying ones included (two-stage and node aggregation forward
// through intermediaries, which may send fewer messages, take other routes and other flows):
//   o + L + max(port, ib-node) (o + L_0 when no byte crosses nodes).
// With per-link latencies (NetworkOptions::link_latency_s), L is the shortest route's latency
// between nodes (0 for relaying plans).
struct ExchangeBound {
  double latency_s = 0;     // o + L
  double posting_s = 0;
  double port_s = 0, link_s = 0, ib_s = 0, ib_direct_s = 0;   // the terms above, without o + L
  double port_direct_s = 0;                                    // the port term of direct plans
  double direct_s = 0;
  double relay_s = 0;
  double of(bool relay) const { return relay ? relay_s : direct_s; }
  // The term that sets of(relay): "posting", "port", "link", "ib-node", "ib-flows" or "latency".
  const char* binding(bool relay) const;
};
ExchangeBound exchange_bound(const CommMatrix& m, const CostOptions& c, const Topology& topo);
// exchange_bound(m, c, topo).of(relay).
double network_lower_bound_s(const CommMatrix& m, const CostOptions& c, const Topology& topo, bool relay);

// True when the plan forwards bytes through intermediaries (it sends more bytes over the network
// than the matrix holds).
bool plan_relays(const Plan& plan, const CommMatrix& m);
bool plan_relays(const PlanTraffic& plan, const CommMatrix& m);

// h * tau + t / bandwidth.
double lower_bound_s(const TrafficStats& s, const CostOptions& c);
double lower_bound_s(std::int64_t h, Bytes t, const CostOptions& c);

// With a topology (links of the same bandwidth as the ports): also no schedule beats the most
// loaded link under the fixed routing, so LB = max(h tau + t mu, max link bytes * mu).
double lower_bound_s(const CommMatrix& m, const TrafficStats& s, const CostOptions& c, const Topology& topo);

// Bytes each link carries over the whole exchange (index = link id); empty for full.
std::vector<Bytes> link_loads(const CommMatrix& m, const Topology& topo);

// One phase of the synchronous model: tau + largest / bandwidth.
double phase_seconds(Bytes largest, const CostOptions& c);
// One port posting everything at once: messages x tau + bytes / bandwidth.
double port_seconds(std::int64_t messages, Bytes bytes, const CostOptions& c);

// The synchronous model, the one sum every synchronous price below is: over the phases, in
// order, tau + largest[k] / bandwidth, skipping the phases with largest[k] == 0 (no traffic).
double synchronous_cost_s(const std::vector<Bytes>& largest, const CostOptions& c);

// synchronous_cost_s of a schedule's largest pieces (phase_max_piece): synchronous_estimate_s of
// the lowered plan on the full crossbar, computed on the schedule, for passes that price
// candidates before lowering.
double schedule_estimate_s(const Schedule& s, const CostOptions& c);

// Sum over phases with network traffic of tau + (largest message of the phase) / bandwidth.
// With a topology, messages that share a link in a phase share its bandwidth: a phase lasts
// tau + mu * max(largest message, most loaded link of the phase).
double synchronous_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo = Topology());
double synchronous_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo = Topology());
// The same phase by phase: each phase's largest message, with a topology its busiest link (the
// bytes its messages put on the most loaded link; empty on the full crossbar), and its length
// (0 for a phase without network traffic); synchronous_estimate_s is the sum of the lengths.
struct SynchronousPhases {
  std::vector<Bytes> largest, busiest_link;
  std::vector<double> seconds;
};
SynchronousPhases synchronous_phases(const PlanTraffic& plan, const CostOptions& c, const Topology& topo = Topology());

// Loosely synchronous (no barrier between phases; the critical path): every rank runs its
// phases in order and starts phase k when it has finished its own messages of phase k - 1; a
// message u -> v of phase k starts when both u and v have, and lasts tau + mu * b (b: its bytes,
// or with a topology the bytes on the most loaded link of its route in that phase, as in the
// synchronous estimate). Like the synchronous model a rank's messages of one phase overlap, so
// the result is at most synchronous_estimate_s; for a plan with one message per port per phase
// (direct) it is at least the busiest port's messages x tau + bytes x mu.
double loose_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo = Topology());
double loose_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo = Topology());

// Posting everything at once (AC, Ranka-Wang §3): each rank pays tau per message and mu per byte
// through its injection port (sends) and, independently, its ejection port (receives); the
// exchange ends with the busiest port: max over ranks of max(f_r tau + r_r mu, g_r tau + c_r mu).
// Counted from the plan (a message = all pieces to one peer in one phase). It may be below
// h tau + t mu, which takes its two maxima over different ranks.
// With a topology the busiest link counts too: max(ports, max link bytes * mu + tau).
double async_estimate_s(const Plan& plan, const CostOptions& c, const Topology& topo = Topology());
double async_estimate_s(const PlanTraffic& plan, const CostOptions& c, const Topology& topo = Topology());

// Bytes of the largest message (per-pair total) of each phase; 0 for a phase without traffic.
std::vector<Bytes> phase_max_message(const Plan& plan);

}  // namespace commfit
