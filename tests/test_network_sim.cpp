// The network model (ir/network_sim.h): hand-computed times of small plans under both models,
// the bound of ir/cost_model.h never above any plan's estimate (every strategy and candidate,
// with and without a topology, both models), determinism, and bounded-concurrency plans offered
// to auto (their grouping: test_group_phases.cpp).
#include "ir/cost_model.h"
#include "ir/error.h"
#include "ir/network_sim.h"
#include "passes/lower.h"
#include "planner/candidates.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>

using namespace commfit;

namespace {

// One phase, every message of m posted at once.
Plan one_phase(const CommMatrix& m) {
  Schedule s;
  s.ranks = m.ranks;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) s.transfers.push_back({0, i, j, {i, j, 0, b}});
  });
  s.phases = 1;
  canonicalize(s);
  return lower(s, m);
}

// tau = 4 us, o = 1 us, latency 2 us, 1 GB/s: round numbers.
constexpr double kTau = 4e-6, kBw = 1e9;

double sim(const Plan& plan, Network model, Bytes eager = 65536) {
  NetworkOptions n;
  n.model = model;
  n.eager_limit = eager;
  const SimResult r = simulate_plan(plan, kTau, kBw, n, Topology());
  REQUIRE(r.simulated);
  return r.seconds;
}

}  // namespace

TEST_CASE("network_sim_prices_single_messages_by_posting_latency_bandwidth_and_receive") {
  // Eager (1000 B): post 1 us, latency 2 us, 1 us of bytes, receive 1 us.
  CHECK(sim(one_phase(make_matrix(2, {{0, 1, 1000}})), Network::flow) == doctest::Approx(5e-6));
  // Rendezvous (100000 B >= eager limit): no receive overhead; 100 us of bytes.
  CHECK(sim(one_phase(make_matrix(2, {{0, 1, 100000}})), Network::flow) == doctest::Approx(103e-6));
  {
    // A handshake of 5 us before a rendezvous message's bytes move; an eager one does not wait it.
    NetworkOptions n;
    n.rendezvous_s = 5e-6;
    CHECK(simulate_plan(one_phase(make_matrix(2, {{0, 1, 100000}})), kTau, kBw, n, Topology()).seconds == doctest::Approx(108e-6));
    CHECK(simulate_plan(one_phase(make_matrix(2, {{0, 1, 1000}})), kTau, kBw, n, Topology()).seconds == doctest::Approx(5e-6));
  }
  // Two senders into one receiver share its port: 2000 B at 1 GB/s after post + latency.
  CHECK(sim(one_phase(make_matrix(3, {{0, 2, 100000}, {1, 2, 100000}})), Network::flow) == doctest::Approx(203e-6));
  // One sender, two messages: the second posts 1 us later; the port is shared while both move.
  // t = 3 us: first starts alone; t = 4 us: second joins, each at 0.5 GB/s; first has 99000 B
  // left -> finishes at 4 + 99 + ... : total bytes 200000 through one port from t = 3 us: 203 us.
  CHECK(sim(one_phase(make_matrix(3, {{0, 1, 100000}, {0, 2, 100000}})), Network::flow) == doctest::Approx(203e-6));
}

TEST_CASE("network_sim_ib_penalises_a_receiver_with_several_senders_as_simgrid_does") {
  // Three senders into one receiver (rendezvous, 100000 B each). SimGrid network_ib: each flow's
  // bound is bandwidth / (1 x Be x 3) = 1/2.895 GB/s (its sender has one flow: no out penalty),
  // and 3 such flows sum to 1.036 GB/s > the port: the port decides, as under the flow model.
  const Plan three = one_phase(make_matrix(4, {{1, 0, 100000}, {2, 0, 100000}, {3, 0, 100000}}));
  CHECK(sim(three, Network::ib) == doctest::Approx(sim(three, Network::flow)));
  CHECK(sim(three, Network::flow) == doctest::Approx(303e-6));
  // A sender with 3 flows, one of them into a receiver with 3 flows in (> 2): every flow of that
  // sender is bound by bandwidth / (3 Bs ys); with SimGrid's factors the sender's port runs at
  // 1 / (0.925 x 1.35) = 0.80 of the bandwidth. Under the flow model it runs at full speed.
  const CommMatrix hot = make_matrix(6, {{0, 1, 100000}, {0, 2, 100000}, {0, 3, 100000}, {4, 3, 1}, {5, 3, 1}});
  NetworkOptions ib;
  ib.model = Network::ib;
  const double flow_s = sim(one_phase(hot), Network::flow), ib_s = sim(one_phase(hot), Network::ib);
  CHECK(ib_s > flow_s * 1.1);
  // A receiver with one flow in and senders with one flow out: no penalty at all.
  const Plan pair = one_phase(make_matrix(2, {{0, 1, 100000}}));
  CHECK(sim(pair, Network::ib) == sim(pair, Network::flow));
}

TEST_CASE("network_sim_ranks_of_a_node_share_its_nic_and_talk_through_its_memory") {
  // full+node2: ranks 0, 1 on node 0, ranks 2, 3 on node 1, ... Shared memory: 2 GB/s, 0.5 us.
  NetworkOptions n;
  n.intra_bandwidth_Bps = 2e9;
  n.intra_latency_s = 0.5e-6;
  const Topology pairs = Topology::parse("full+node2");
  auto time = [&](const CommMatrix& m, const Topology& topo, Network model = Network::flow) {
    NetworkOptions net = n;
    net.model = model;
    const SimResult r = simulate_plan(one_phase(m), kTau, kBw, net, topo);
    REQUIRE(r.simulated);
    return r.seconds;
  };
  // Inside a node (rendezvous): post 1 us, 0.5 us, 100000 B at 2 GB/s = 50 us; no port.
  CHECK(time(make_matrix(4, {{0, 1, 100000}}), pairs) == doctest::Approx(51.5e-6));
  // Eager inside a node: post 1 us, 0.5 us, 0.5 us of bytes, receive 1 us.
  CHECK(time(make_matrix(4, {{0, 1, 1000}}), pairs) == doctest::Approx(3e-6));
  // Two ranks of node 0 send to two of node 1: one NIC each way, 200000 B at 1 GB/s.
  const CommMatrix across = make_matrix(4, {{0, 2, 100000}, {1, 3, 100000}});
  CHECK(time(across, pairs) == doctest::Approx(203e-6));
  CHECK(time(across, Topology()) == doctest::Approx(103e-6));   // a NIC per rank
  // A node's own traffic does not load its NIC: 0 -> 1 beside 0 -> 2 leaves 0 -> 2 alone on it.
  CHECK(time(make_matrix(4, {{0, 1, 100000}, {0, 2, 100000}}), pairs) == doctest::Approx(104e-6));
  // IB penalties count a node's flows, and not those inside it (SimGrid's IB nodes are hosts; it
  // disregards local communications): rank 0's three local flows leave its flow to rank 4 alone.
  const CommMatrix fan = make_matrix(8, {{0, 1, 100000}, {0, 2, 100000}, {0, 3, 100000}, {0, 4, 100000}});
  const Topology quads = Topology::parse("full+node4");
  // 0 -> 4 is posted last, at 4 us: 4 + 2 + 100 us, unpenalised (counted per rank, 4 flows out
  // would bound it at 1 / (4 x 0.925) GB/s).
  CHECK(time(fan, quads, Network::ib) == doctest::Approx(106e-6));
  CHECK(time(fan, quads, Network::flow) == doctest::Approx(106e-6));
  // The bound counts a node's bytes through its NIC and the shortest latency.
  const CostOptions c{.tau_s = kTau, .bandwidth_Bps = kBw, .network = n};
  CHECK(network_lower_bound_s(across, c, pairs, false) == doctest::Approx(203e-6));
  CHECK(network_lower_bound_s(make_matrix(4, {{0, 1, 100000}}), c, pairs, false) == doctest::Approx(1.5e-6));
  CHECK(network_lower_bound_s(fan, c, quads, false) <= time(fan, quads));
}

TEST_CASE("network_sim_ranks_of_an_oversubscribed_node_share_its_cores") {
  // Four ranks on one node, a ring of 100000 B (rendezvous) inside it: four messages at once.
  NetworkOptions n;
  n.intra_bandwidth_Bps = 2e9;
  n.intra_latency_s = 0.5e-6;
  const Topology quad = Topology::parse("full+node4");
  const CommMatrix ring = make_matrix(4, {{0, 1, 100000}, {1, 2, 100000}, {2, 3, 100000}, {3, 0, 100000}});
  auto time = [&](std::uint32_t cores, const CommMatrix& m, const Topology& topo) {
    NetworkOptions net = n;
    net.cores_per_node = cores;
    const SimResult r = simulate_plan(one_phase(m), kTau, kBw, net, topo);
    REQUIRE(r.simulated);
    return r.seconds;
  };
  // Cores unknown, or as many as ranks: each message alone at 2 GB/s (post 1 us, 0.5 us, 50 us).
  CHECK(time(0, ring, quad) == doctest::Approx(51.5e-6));
  CHECK(time(4, ring, quad) == doctest::Approx(51.5e-6));
  // Two cores: the four share 2 x 2 GB/s, 1 GB/s each: 100 us of bytes.
  CHECK(time(2, ring, quad) == doctest::Approx(101.5e-6));
  // Three: 1.5 GB/s each.
  CHECK(time(3, ring, quad) == doctest::Approx(1.5e-6 + 100000 / 1.5e9));
  // One message alone on an oversubscribed node is not slowed (one core moves it).
  CHECK(time(2, make_matrix(4, {{0, 1, 100000}}), quad) == doctest::Approx(51.5e-6));
  // Only the oversubscribed node: full+node2 holds two ranks a node, two cores each: no sharing;
  // with one core a node, the two messages inside node 0 (0 -> 1, 1 -> 0) share 2 GB/s.
  const Topology pairs = Topology::parse("full+node2");
  const CommMatrix swap = make_matrix(4, {{0, 1, 100000}, {1, 0, 100000}});
  CHECK(time(2, swap, pairs) == doctest::Approx(51.5e-6));
  CHECK(time(1, swap, pairs) == doctest::Approx(101.5e-6));
  // Without +nodeN a rank is a node: nothing is shared.
  CHECK(time(1, ring, Topology()) == doctest::Approx(time(0, ring, Topology())));
  // The bound stays below.
  const CostOptions c{.tau_s = kTau, .bandwidth_Bps = kBw, .network = NetworkOptions{.intra_bandwidth_Bps = 2e9, .cores_per_node = 2}};
  CHECK(network_lower_bound_s(ring, c, quad, false) <= time(2, ring, quad));
}

TEST_CASE("the_bound_under_ib_is_a_nodes_flows_at_bandwidth_over_be") {
  // An incast: 8 senders of 100 kB each into rank 0. Under flow its port takes 800 kB at 1 GB/s;
  // under ib, 8 flows in are each penalised 8 Be, so they share bandwidth / Be at most: the
  // ib-node term is Be x 800 us (below the port's 800 us as Be < 1). With a window of 2000 B over
  // the 2 us latency every flow's own bound is 0.5 GB/s: ib-flows, Be x 1600 us, sets the bound.
  std::vector<Message> in;
  for (Rank r = 1; r <= 8; ++r) in.push_back({r, 0, 100000});
  const CommMatrix incast = make_matrix(9, in);
  NetworkOptions n;
  CostOptions c{.tau_s = kTau, .bandwidth_Bps = kBw, .network = n};
  const ExchangeBound flow = exchange_bound(incast, c, Topology());
  CHECK(std::string(flow.binding(false)) == "port");
  CHECK(flow.port_s == doctest::Approx(800e-6));
  CHECK(flow.ib_s == 0);
  c.network.model = Network::ib;
  const ExchangeBound ib = exchange_bound(incast, c, Topology());
  CHECK(ib.ib_s == doctest::Approx(c.network.ib.be * 800e-6));
  CHECK(std::string(ib.binding(true)) == "port");   // Be < 1: the port still sets it
  c.network.window_bytes = 2000;
  const ExchangeBound windowed = exchange_bound(incast, c, Topology());
  const double o = sim_overhead_s(kTau, n);
  CHECK(windowed.ib_direct_s == doctest::Approx(c.network.ib.be * 1600e-6));
  CHECK(std::string(windowed.binding(false)) == "ib-flows");
  CHECK(windowed.direct_s == doctest::Approx(o + (kTau - 2 * o) + c.network.ib.be * 1600e-6));
  CHECK(windowed.relay_s <= windowed.direct_s);
  // The simulated incast (every flow at once) is not below its bound, and within 10 % of it.
  const SimResult r = simulate_plan(one_phase(incast), kTau, kBw, c.network, Topology());
  REQUIRE(r.simulated);
  CHECK(r.seconds >= windowed.direct_s * (1 - 1e-9));
  CHECK(r.seconds <= 1.1 * windowed.direct_s);
}

TEST_CASE("network_sim_per_link_latency_and_window_bound") {
  // torus:4 (a ring of 4): 0 -> 1 is one link, 0 -> 2 two. 1 us per link; a window of 2000 B
  // bounds a flow at 2000 / (2 x latency): 1 GB/s over one link (the bandwidth), 0.5 GB/s over two.
  const Topology ring = Topology::parse("torus:4");
  NetworkOptions n;
  n.link_latency_s = 1e-6;
  n.window_bytes = 2000;
  auto time = [&](const CommMatrix& m) {
    const SimResult r = simulate_plan(one_phase(m), kTau, kBw, n, ring);
    REQUIRE(r.simulated);
    return r.seconds;
  };
  // Post 1 us, latency 1 us, 100 us of bytes (rendezvous: no receive overhead).
  CHECK(time(make_matrix(4, {{0, 1, 100000}})) == doctest::Approx(102e-6));
  // Post 1 us, latency 2 us, 200 us of bytes at the window's 0.5 GB/s.
  CHECK(time(make_matrix(4, {{0, 2, 100000}})) == doctest::Approx(203e-6));
  // The bound uses the shortest route's latency; never above the simulation.
  CostOptions c{.tau_s = kTau, .bandwidth_Bps = kBw, .network = n};
  const CommMatrix m = make_matrix(4, {{0, 1, 100000}, {0, 2, 100000}, {3, 2, 5000}});
  CHECK(network_lower_bound_s(m, c, ring, false) <= time(m));
}

TEST_CASE("the_posting_bound_counts_each_messages_own_route") {
  // A ring of 8, 1 us per link: 1 -> 2 is one link, 4 -> 0 four. Eager messages: each leaves
  // when posted (o) and costs its receiver o. The shortest route (1 us) no longer stands for the
  // long one: 4 -> 0 arrives no earlier than o + 4 us and is processed by o + 4 us + o.
  const Topology ring = Topology::parse("torus:8");
  NetworkOptions n;
  n.link_latency_s = 1e-6;
  const CostOptions c{.tau_s = kTau, .bandwidth_Bps = kBw, .network = n};
  const double o = sim_overhead_s(kTau, n);
  const CommMatrix m = make_matrix(8, {{1, 2, 100}, {4, 0, 100}});   // 0.1 us of bytes each
  const ExchangeBound b = exchange_bound(m, c, ring);
  CHECK(b.posting_s == doctest::Approx(o + 4e-6 + o));
  // The direct bound's link term adds the bytes: the links of 4 -> 0 carry that message alone,
  // whose bytes move after its own 4 us (3 beyond the shortest route's) and which, eager, its
  // receiver processes after it has arrived.
  CHECK(std::string(b.binding(false)) == "link");
  CHECK(b.link_s == doctest::Approx(0.1e-6 + 3e-6 + o));
  CHECK(b.direct_s == doctest::Approx(o + 4e-6 + 0.1e-6 + o));
  // A sender's messages, longest route first: 0 sends to 4 (four links), 3 (three) and 1 (one).
  // Its k-th send leaves at (k + 1) o: 4 -> arrives at o + 4 us, 3 at 2 o + 3 us, 1 at 3 o + 1 us.
  const CommMatrix fan = make_matrix(8, {{0, 4, 100000}, {0, 3, 100000}, {0, 1, 100000}});   // rendezvous
  CHECK(exchange_bound(fan, c, ring).posting_s == doctest::Approx(std::max({o + 4e-6, 2 * o + 3e-6, 3 * o + 1e-6})));
  // Both are bounds: the simulated one-phase plans are not below them (the eager one within 10 %).
  const SimResult eager = simulate_plan(one_phase(m), kTau, kBw, n, ring), large = simulate_plan(one_phase(fan), kTau, kBw, n, ring);
  REQUIRE(eager.simulated);
  REQUIRE(large.simulated);
  CHECK(eager.seconds >= b.direct_s * (1 - 1e-9));
  CHECK(eager.seconds <= 1.1 * b.direct_s);
  CHECK(large.seconds >= exchange_bound(fan, c, ring).direct_s * (1 - 1e-9));
}

TEST_CASE("network_sim_rtt_weighting_gives_flows_on_shorter_routes_more_of_a_shared_link") {
  // A ring of 8: 1 -> 2 crosses link 1->2, 0 -> 2 crosses 0->1 and 1->2. Both start at 3 us
  // (post 1 us, latency 2 us) with 100000 B. Then rank 1 sends 100000 B to rank 7 (links 1->0
  // and 0->7, free; rank 7 waits from the start) once its send to 2 is done. With weight-S 2000 B (2 us per 1 GB/s link) the penalties
  // are 2 + 2 = 4 us and 2 + 4 = 6 us: on link 1->2 the short flow gets 0.6 GB/s, the long one
  // 0.4. The short flow ends at 3 + 166.67 us; rank 1's next message then takes 1 + 2 + 100 us:
  // 272.67 us. With equal shares both end at 203 us and the plan at 306 us.
  const CommMatrix m = make_matrix(8, {{1, 2, 100000}, {0, 2, 100000}, {1, 7, 100000}});
  Schedule s;
  s.ranks = 8;
  s.phases = 2;
  s.transfers = {{0, 1, 2, {1, 2, 0, 100000}}, {0, 0, 2, {0, 2, 0, 100000}}, {1, 1, 7, {1, 7, 0, 100000}}};
  const Plan plan = lower(s, m);
  const Topology ring = Topology::parse("torus:8");
  NetworkOptions n;
  auto time = [&] {
    const SimResult r = simulate_plan(plan, kTau, kBw, n, ring);
    REQUIRE(r.simulated);
    return r.seconds;
  };
  CHECK(time() == doctest::Approx(306e-6));
  n.rtt_weight_bytes = 2000;
  CHECK(time() == doctest::Approx(272.6667e-6));
  // Without a topology every route is alike: weighting changes nothing, bit for bit.
  const Topology crossbar;
  NetworkOptions equal;
  CHECK(simulate_plan(plan, kTau, kBw, n, crossbar).seconds == simulate_plan(plan, kTau, kBw, equal, crossbar).seconds);
}

TEST_CASE("plan_messages_coalesce_as_the_executor_up_to_its_limit") {
  // Rank 1 forwards two pieces to rank 3 in phase 1: one message while they total at most
  // kCoalesceBytes (the executor packs them), else one message per piece (it sends them apart).
  for (const Bytes b : {Bytes{20000}, Bytes{32768}, Bytes{40000}}) {
    CAPTURE(b);
    const CommMatrix m = make_matrix(4, {{0, 3, b}, {2, 3, b}});
    Schedule s;
    s.ranks = 4;
    s.phases = 2;
    s.transfers = {{0, 0, 1, {0, 3, 0, b}}, {0, 2, 1, {2, 3, 0, b}}, {1, 1, 3, {0, 3, 0, b}}, {1, 1, 3, {2, 3, 0, b}}};
    canonicalize(s);
    std::vector<Bytes> forwarded;
    for (const PlanMessage& msg : plan_messages(lower(s, m)))
      if (msg.from == 1) forwarded.push_back(msg.bytes);
    if (2 * b <= kCoalesceBytes) CHECK(forwarded == std::vector<Bytes>{2 * b});
    else CHECK(forwarded == std::vector<Bytes>{b, b});
  }
  // More pieces than one message holds: packed in order into messages below kCoalesceBytes, a
  // piece too large alone, after them. Rank 1 forwards 30000, 30000, 30000, 70000 and 1000 B to
  // rank 5.
  const std::vector<Bytes> sizes{30000, 30000, 30000, 70000, 1000};
  std::vector<Message> entries;
  Schedule s;
  s.ranks = 7;
  s.phases = 2;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const Rank src = i == 0 ? 0 : static_cast<Rank>(i + 1);   // sources 0, 2, 3, 4, 6
    const Rank from = i < 4 ? src : 6;
    entries.push_back({from, 5, sizes[i]});
    s.transfers.push_back({0, from, 1, {from, 5, 0, sizes[i]}});
    s.transfers.push_back({1, 1, 5, {from, 5, 0, sizes[i]}});
  }
  canonicalize(s);
  std::vector<Bytes> forwarded;
  for (const PlanMessage& msg : plan_messages(lower(s, make_matrix(7, entries))))
    if (msg.from == 1) forwarded.push_back(msg.bytes);
  CHECK(forwarded == std::vector<Bytes>{60000, 31000, 70000});
}

TEST_CASE("coalesce_pieces_packs_in_order_below_the_limit_and_sends_large_pieces_last") {
  // Returns each piece's message and checks the count returned.
  auto pack = [](std::vector<Bytes> bytes, Bytes limit) {
    std::vector<std::uint32_t> message(bytes.size(), 99);
    const std::size_t n = coalesce_pieces(bytes, limit, message);
    for (std::uint32_t m : message) CHECK(m < n);
    return message;
  };
  using M = std::vector<std::uint32_t>;
  CHECK(pack({30000, 30000, 30000, 70000, 1000}, 65536) == M{0, 0, 1, 2, 1});
  CHECK(pack({30000, 35536}, 65536) == M{0, 0});                 // exactly the limit: one message
  CHECK(pack({30000, 35537}, 65536) == M{0, 1});                 // one byte more: below the limit each
  CHECK(pack({65536, 1}, 65536) == M{1, 0});                     // a piece of the limit goes after the small ones
  CHECK(pack({100000}, 65536) == M{0});                          // one piece: one message, whatever its size
  CHECK(pack({0, 0, 0}, 65536) == M{0, 0, 0});                   // empty pieces still travel, in one message
  CHECK(pack({}, 65536).empty());
  CHECK(pack({600, 500, 400, 300}, 1000) == M{0, 1, 1, 2});      // greedy, in order: 600 | 500 + 400 | 300
}

TEST_CASE("network_sim_runs_phases_loosely_as_the_executor") {
  // Phase 0: 0 -> 1 (100000 B); phase 1: 1 -> 2 (1000 B, eager). Rank 1 starts phase 1 when its
  // receive of phase 0 is done (103 us), then 5 us: 108 us. Rank 2 is idle in phase 0.
  const CommMatrix m = make_matrix(3, {{0, 1, 100000}, {1, 2, 1000}});
  Schedule s;
  s.ranks = 3;
  s.phases = 2;
  s.transfers = {{0, 0, 1, {0, 1, 0, 100000}}, {1, 1, 2, {1, 2, 0, 1000}}};
  CHECK(sim(lower(s, m), Network::flow) == doctest::Approx(108e-6));
}

TEST_CASE("network_sim_replays_a_request_window_as_the_executor") {
  // Four senders into rank 0, 100000 B each (rendezvous), a window of 2 on every rank. Rank 0
  // posts its receives in pair order, from 1 and 2 first: those two share its port from 3 us
  // (post 1 us + latency 2 us) and arrive at 203 us; then it posts the receives from 3 and 4,
  // whose senders have waited since 1 us: latency, 200 us of bytes, 405 us. Without the window
  // all four share the port from 3 us: 403 us.
  const CommMatrix hot = make_matrix(5, {{1, 0, 100000}, {2, 0, 100000}, {3, 0, 100000}, {4, 0, 100000}});
  Plan plan = one_phase(hot);
  CHECK(sim(plan, Network::flow) == doctest::Approx(403e-6));
  for (RankSchedule& rs : plan.ranks) rs.max_outstanding = 2;
  CHECK(sim(plan, Network::flow) == doctest::Approx(405e-6));
  // Eager sends are done once posted: they hold no slot. One sender, four 1000 B messages: posted
  // at 1, 2, 3 and 4 us, each 2 us of latency, 1 us of bytes and 1 us at its receiver: 8 us, with
  // or without a window of 2.
  Plan fan = one_phase(make_matrix(5, {{0, 1, 1000}, {0, 2, 1000}, {0, 3, 1000}, {0, 4, 1000}}));
  CHECK(sim(fan, Network::flow) == doctest::Approx(8e-6));
  for (RankSchedule& rs : fan.ranks) rs.max_outstanding = 2;
  CHECK(sim(fan, Network::flow) == doctest::Approx(8e-6));
  // Completions are reaped one at a time, as the executor's MPI_Waitany loop does, and an eager
  // receive's overhead is paid when it is reaped. Rank 0 (window 2) receives 1000 B from 1 and
  // from 2, then sends 1000 B to 3. Both arrive at 5 us (posted at 1, latency 2, sharing its port
  // for 2 us). It reaps the first (6 us), posts the send (7 us), reaps the second (8 us); the
  // send's bytes arrive at 10 us and rank 3 completes it at 11 us. Charging both overheads on
  // arrival would post the send at 8 us and end at 12.
  Plan reap = one_phase(make_matrix(4, {{1, 0, 1000}, {2, 0, 1000}, {0, 3, 1000}}));
  for (RankSchedule& rs : reap.ranks) rs.max_outstanding = 2;
  CHECK(sim(reap, Network::flow) == doctest::Approx(11e-6));
}

TEST_CASE("throttled_plans_carry_their_window_and_are_offered_to_auto_one_per_k") {
  const CommMatrix m = gen_hot_receiver(16, 0, 100000, 0.3, 3);
  int throttled = 0;
  for (const CandidateRow& r : candidates_for(m, {})) throttled += r.options.strategy == "throttled";
  CHECK(throttled == 4);
  // Under the ib model a hot receiver taken a few senders at a time is cheaper than AC; the plan's
  // estimate is the simulation of that window, never below the bound.
  PlanOptions o;
  o.cost.network.model = Network::ib;
  o.strategy = "async";
  const Plan ac = make_plan(m, o);
  o.strategy = "throttled";
  o.max_outstanding = 4;
  const Plan windowed = make_plan(m, o);
  for (const RankSchedule& rs : windowed.ranks) CHECK(rs.max_outstanding == 4);
  CHECK(windowed.manifest.phases == 1);
  CHECK(windowed.manifest.cost.estimate_s >= windowed.manifest.cost.lower_bound_s);
  CHECK(windowed.manifest.cost.estimate_s != ac.manifest.cost.estimate_s);
}

TEST_CASE("auto_prefers_a_simulated_estimate_to_an_analytic_one") {
  CandidateRow sim, analytic;
  sim.estimate_s = 3e-3;
  sim.phases = 60;
  analytic.estimate_s = 1e-3;   // no contention in it: often far below what the plan costs
  analytic.phases = 1;
  analytic.simulated = false;
  CHECK(candidate_cheaper(sim, analytic));
  CHECK_FALSE(candidate_cheaper(analytic, sim));
  analytic.simulated = true;
  CHECK(candidate_cheaper(analytic, sim));
  sim.estimate_s = 1e-3 * (1 + 1e-12);   // equal up to rounding: fewer phases
  CHECK(candidate_cheaper(analytic, sim));
  CHECK_FALSE(candidate_cheaper(sim, analytic));
}

TEST_CASE("every_estimate_is_at_least_the_network_bound_and_deterministic") {
  std::vector<CommMatrix> ms;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {   // 48 s sanitized with 3 seeds on a busy machine
    ms.push_back(gen_random_sparse(24, 0.3, 200000, seed, false));
    ms.push_back(gen_hot_receiver(24, static_cast<Rank>(seed), 100000, 0.2, seed));
    ms.push_back(gen_uniform(16, 4, 1024 * seed, seed));
    // With memory limits auto's candidates are the memory plans (parking, relaxation).
    CommMatrix limited = gen_random_sparse(16, 0.4, 4000, seed, false);
    limited.memory.assign(16, 1 << 14);
    ms.push_back(limited);
  }
  // The dragonfly's green and black links are 2 cables wide: its bound and its simulation must
  // both count a link's width.
  // With several ranks per node: a NIC per node, shared memory inside it, node plans.
  for (const char* topology : {"full", "torus:4x2x2", "torus:4x2x2 per link", "dragonfly:2,1;2,2;2,2;2 per link", "full+node4",
                               "torus:2x2+node4 per link"}) {
    for (Network model : {Network::flow, Network::ib}) {
      for (const CommMatrix& m : ms) {
        const std::string spec = std::string(topology).substr(0, std::string(topology).find(' '));
        if (spec != "full" && spec != "full+node4" && m.ranks != 16) continue;
        PlanOptions o;
        o.topology = Topology::parse(spec);
        o.cost.network.model = model;
        if (spec != topology) {   // SimGrid's per-link latency, TCP window and RTT-weighted sharing
          o.cost.network.link_latency_s = 2.5e-7;
          o.cost.network.window_bytes = 25000;
          o.cost.network.rtt_weight_bytes = 8775;
        }
        const Comparison c = compare_candidates(m, o, false);
        int planned = 0;
        for (const CandidateRow& r : c.rows) {
          if (!r.skipped.empty()) continue;
          CAPTURE(r.name);
          CAPTURE(topology);
          CAPTURE(to_string(model));
          // The row's own bound (relaying plans: the weaker one), never above its estimate.
          CHECK(r.lower_bound_s > 0);
          CHECK(r.estimate_s >= r.lower_bound_s * (1 - 1e-9));
          ++planned;
        }
        CHECK(planned >= 1);
        // Same plan, same options: the same estimate, bit for bit.
        PlanOptions a = o;
        a.strategy = "async";
        CHECK(make_plan(m, a).manifest.cost.estimate_s == make_plan(m, a).manifest.cost.estimate_s);
      }
    }
  }
}

TEST_CASE("an_estimate_beyond_the_work_limit_is_analytic_and_above_the_bound") {
  const CommMatrix m = gen_random_sparse(32, 0.5, 100000, 5, false);
  PlanOptions o;
  o.strategy = "async";
  const Plan plan = make_plan(m, o);
  const SimResult cut = simulate_plan(plan, o.cost.tau_s, o.cost.bandwidth_Bps, o.cost.network, o.topology, 10);
  CHECK(!cut.simulated);
  CHECK(plan_estimate_s(plan, m, o.cost, o.topology) >= network_lower_bound_s(m, o.cost, o.topology, false) * (1 - 1e-9));
}

TEST_CASE("bounded_plans_are_offered_to_auto_one_per_k") {
  const CommMatrix m = gen_hot_receiver(16, 0, 100000, 0.3, 3);
  const auto rows = candidates_for(m, {});
  int bounded = 0;
  for (const CandidateRow& r : rows) bounded += r.options.strategy == "bounded";
  CHECK(bounded == 5);
}

TEST_CASE("network_options_that_are_not_numbers_are_refused") {
  const CommMatrix m = make_matrix(2, {{0, 1, 100}});
  PlanOptions o;
  o.cost.network.link_latency_s = std::nan("");
  CHECK_THROWS_AS(make_plan(m, o), UsageError);
  o.cost.network.link_latency_s = -1;
  o.cost.network.window_bytes = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(make_plan(m, o), UsageError);
  o.cost.network.window_bytes = 0;
  o.cost.network.overhead_s = std::nan("");
  CHECK_THROWS_AS(make_plan(m, o), UsageError);
}
