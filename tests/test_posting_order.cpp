// posting order (passes/posting_order.h): the coloured order on seeded random and adversarial
// patterns (each sender's peers once each, a receiver's messages at distinct colours, Δ colours,
// positions equal to colours on regular patterns, determinism); the plan's posting order through
// the format check, both plan forms and the hash; the refinements by routes and over links; and the
// network model posting in it.
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/cost_model.h"
#include "ir/network_sim.h"
#include "ir/random.h"
#include "passes/decompose_optimal.h"
#include "passes/posting_order.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace commfit;

namespace {

// A circulant: every rank sends `bytes` to the next d ranks.
CommMatrix circulant(Rank n, int d, Bytes bytes) {
  std::vector<Message> msgs;
  for (Rank i = 0; i < n; ++i)
    for (int k = 1; k <= d; ++k) msgs.push_back({i, static_cast<Rank>((i + k) % n), bytes});
  return make_matrix(n, std::move(msgs));
}

// Adversarial shapes: one hot receiver, one sender to all, two cliques, a sparse random pattern.
std::vector<std::pair<std::string, CommMatrix>> irregular_cases() {
  std::vector<std::pair<std::string, CommMatrix>> out;
  out.push_back({"hot receiver", gen_hot_receiver(48, 5, 4096, 0.1, 3)});
  std::vector<Message> star, cliques;
  for (Rank j = 1; j < 33; ++j) star.push_back({0, j, 100});
  for (Rank i = 0; i < 16; ++i)
    for (Rank j = 0; j < 16; ++j)
      if (i != j) cliques.push_back({i, j, 1 + Bytes(i)}), cliques.push_back({Rank(16 + i), Rank(16 + j), 7});
  out.push_back({"star", make_matrix(33, std::move(star))});
  out.push_back({"two cliques", make_matrix(32, std::move(cliques))});
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    out.push_back({"random sparse " + std::to_string(seed), gen_random_sparse(40, 0.05 * double(seed), 1 << 12, seed)});
  out.push_back({"empty", make_matrix(4, {})});
  out.push_back({"self only", make_matrix(3, {{1, 1, 8}})});
  return out;
}

// Checks that `peers` lists every network message of m once, by its sender; returns each message's
// position in its sender's order.
std::map<std::pair<Rank, Rank>, int> check_messages(const CommMatrix& m, const std::vector<std::vector<Rank>>& order) {
  std::map<std::pair<Rank, Rank>, int> position;
  REQUIRE(order.size() == static_cast<std::size_t>(m.ranks));
  std::vector<int> out(static_cast<std::size_t>(m.ranks), 0);
  m.for_each([&](Rank i, Rank j, Bytes) {
    if (i != j) ++out[i];
  });
  for (Rank i = 0; i < m.ranks; ++i) {
    const auto& peers = order[static_cast<std::size_t>(i)];
    CHECK(peers.size() == static_cast<std::size_t>(out[i]));   // every message once ...
    for (std::size_t k = 0; k < peers.size(); ++k) {
      CHECK(m.at(i, peers[k]) > 0);                                 // ... and only messages
      CHECK(peers[k] != i);
      CHECK(position.emplace(std::pair{i, peers[k]}, static_cast<int>(k)).second);
    }
  }
  return position;
}

// Checks what the colouring pass guarantees on m; returns each message's position in its sender's
// order.
std::map<std::pair<Rank, Rank>, int> check_order(const CommMatrix& m, const PostingOrder& order) {
  const std::map<std::pair<Rank, Rank>, int> position = check_messages(m, order.peers);
  std::vector<int> out(static_cast<std::size_t>(m.ranks), 0), in(static_cast<std::size_t>(m.ranks), 0);
  m.for_each([&](Rank i, Rank j, Bytes) {
    if (i != j) ++out[i], ++in[j];
  });
  int delta = 0;
  for (Rank r = 0; r < m.ranks; ++r) delta = std::max({delta, out[r], in[r]});
  CHECK(order.colours == delta);
  // The sender's order is ascending in colour, and a receiver's colours are distinct and < Δ.
  const Schedule coloured = decompose_optimal(m);
  std::map<std::pair<Rank, Rank>, Phase> colour;
  for (const Transfer& t : coloured.transfers) colour[{t.from, t.to}] = t.phase;
  std::map<Rank, std::set<Phase>> colours_in;
  for (Rank i = 0; i < m.ranks; ++i) {
    const auto& peers = order.peers[static_cast<std::size_t>(i)];
    for (std::size_t k = 0; k < peers.size(); ++k) {
      const Phase c = colour.at({i, peers[k]});
      CHECK(c < static_cast<Phase>(delta));
      CHECK(static_cast<Phase>(k) <= c);   // a position is at most its colour
      if (k > 0) CHECK(colour.at({i, peers[k - 1]}) < c);
      CHECK(colours_in[peers[k]].insert(c).second);
    }
  }
  return position;
}

// On a regular pattern a position is a colour: every receiver's messages at distinct positions.
void check_regular(const CommMatrix& m, int d) {
  const PostingOrder order = coloured_posting_order(m);
  CHECK(order.colours == d);
  const auto position = check_order(m, order);
  std::map<Rank, std::set<int>> at;
  for (const auto& [pair, k] : position) {
    CHECK(k < d);
    CHECK(at[pair.second].insert(k).second);
  }
}

bool same_with_order(const RankSchedule& a, const RankSchedule& b) {
  return a.rank == b.rank && a.ranks == b.ranks && a.phases == b.phases && a.matrix_fingerprint == b.matrix_fingerprint &&
         a.staging_bytes == b.staging_bytes && a.max_outstanding == b.max_outstanding && a.sends == b.sends && a.recvs == b.recvs &&
         a.steps == b.steps && a.send_order == b.send_order;
}

}  // namespace

TEST_CASE("posting_order_regular_patterns_give_every_receiver_one_message_per_slot") {
  for (Rank n : {2, 5, 16, 64, 200})
    for (int d : {1, 2, 4, 7})
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        if (d > n - 1) continue;
        CAPTURE(n);
        CAPTURE(d);
        CAPTURE(seed);
        check_regular(gen_uniform(n, d, 1024, seed), d);
      }
  check_regular(circulant(64, 4, 1024), 4);
  check_regular(circulant(9, 8, 3), 8);   // all to all
}

TEST_CASE("posting_order_irregular_patterns_keep_colour_order") {
  for (const auto& [case_name, m] : irregular_cases()) {
    const std::string& name = case_name;   // a variable a lambda can capture (CAPTURE's)
    CAPTURE(name);
    check_order(m, coloured_posting_order(m));
  }
}

TEST_CASE("posting_order_is_deterministic") {
  for (const auto& [case_name, m] : irregular_cases()) {
    const std::string& name = case_name;   // a variable a lambda can capture (CAPTURE's)
    CAPTURE(name);
    CHECK(coloured_posting_order(m).peers == coloured_posting_order(m).peers);
  }
  const CommMatrix u = gen_uniform(256, 4, 1024, 7);
  CHECK(coloured_posting_order(u).peers == coloured_posting_order(u).peers);
}

TEST_CASE("async_plans_carry_the_coloured_order_and_meet_the_posting_bound") {
  // uniform4 at 64 ranks, 1 KiB (docs/PERFORMANCE.md): the model prices the coloured order at the
  // posting bound, 4 us at the default tau; the rotated order of the same plan costs more.
  const CommMatrix m = gen_uniform(64, 4, 1024, 1);
  PlanOptions o;
  o.strategy = "async";
  Plan plan = make_plan(m, o);
  const PostingOrder order = coloured_posting_order(m);
  for (const RankSchedule& rs : plan.ranks) CHECK(rs.send_order == order.peers[static_cast<std::size_t>(rs.rank)]);
  const double bound = network_lower_bound_s(m, o.cost, Topology(), false);
  CHECK(bound == doctest::Approx(4e-6));
  CHECK(plan.manifest.cost.estimate_s == doctest::Approx(bound).epsilon(1e-9));
  for (RankSchedule& rs : plan.ranks) rs.send_order.clear();
  const double rotated = simulate_plan(plan, o.cost.tau_s, o.cost.bandwidth_Bps, o.cost.network, Topology()).seconds;
  CHECK(rotated > bound * 1.05);
}

TEST_CASE("posting_order_estimates_stay_above_the_bound") {
  for (const auto& [case_name, m] : irregular_cases()) {
    const std::string& name = case_name;   // a variable a lambda can capture (CAPTURE's)
    CAPTURE(name);
    PlanOptions o;
    o.strategy = "async";
    const Plan plan = make_plan(m, o);
    CHECK(plan.manifest.cost.estimate_s >= plan.manifest.cost.lower_bound_s * (1 - 1e-12));
  }
}

namespace {

// SimGrid's per-link latency, window and RTT weighting on `spec` (bench/smpi's PLAN_COST).
PlanOptions per_link(const char* spec, Network model) {
  PlanOptions o;
  o.strategy = "async";
  o.topology = Topology::parse(spec);
  o.cost.tau_s = 2e-6;
  o.cost.bandwidth_Bps = 1.25e10;
  o.cost.network.model = model;
  o.cost.network.link_latency_s = 2.5e-7;
  o.cost.network.rtt_weight_bytes = 8775;
  if (model == Network::ib) o.cost.network.window_bytes = 25000;
  return o;
}

// Every route 1 us, o = 0.5 us, 10 GB/s, eager below 64 KiB.
RouteTiming one_microsecond_routes() {
  RouteTiming t;
  t.latency_s = [](Rank, Rank) { return 1e-6; };
  t.overhead_s = 0.5e-6;
  t.bandwidth_Bps = 1e10;
  t.eager_limit = 65536;
  return t;
}

}  // namespace

TEST_CASE("posting_order_by_routes_posts_the_long_route_first") {
  // A ring of 8, 1 us per link: rank 0 sends to 1 (one link) and 4 (four). Coloured, 1 comes
  // first (colour 0); by routes 4 goes first, and nothing of the colouring's guarantee is lost.
  const CommMatrix m = make_matrix(8, {{0, 1, 100}, {0, 4, 100}, {2, 1, 100}, {3, 4, 100}});
  PostingOrder order = coloured_posting_order(m);
  order.peers[0] = {1, 4};
  RouteTiming t;
  t.latency_s = [](Rank i, Rank j) {
    const int d = std::abs(static_cast<int>(i) - static_cast<int>(j)) % 8;
    return 1e-6 * std::min(d, 8 - d);
  };
  t.overhead_s = 0.5e-6;
  t.bandwidth_Bps = 1e10;
  t.eager_limit = 65536;
  const PostingOrder refined = refine_by_routes(m, order, t);
  CHECK(refined.peers[0] == std::vector<Rank>{4, 1});
  check_messages(m, refined.peers);
  CHECK(refine_by_routes(m, order, t).peers == refined.peers);   // deterministic
}

TEST_CASE("posting_order_spread_over_links_evens_a_shared_link_within_the_receivers_times") {
  // Senders 0-3 each send to 8 + s over one shared link (link 0) and to 12 + s over a link of its
  // own, the shared one first: link 0 holds 4 messages at position 0 and none at 1. Spread, senders
  // 0 and 1 post their private message first (2 and 2: a third swap would unbalance it again), and
  // no receiver ends later in the model than the latest one did.
  std::vector<Message> msgs;
  for (Rank s = 0; s < 4; ++s) msgs.push_back({s, static_cast<Rank>(8 + s), 1024}), msgs.push_back({s, static_cast<Rank>(12 + s), 1024});
  const CommMatrix m = make_matrix(16, std::move(msgs));
  PostingOrder order;
  order.colours = 2;
  order.peers.resize(16);
  for (Rank s = 0; s < 4; ++s) order.peers[static_cast<std::size_t>(s)] = {static_cast<Rank>(8 + s), static_cast<Rank>(12 + s)};
  const RouteTiming t = one_microsecond_routes();
  LinkRoutes routes;
  routes.link_count = 17;
  routes.route = [](Rank i, Rank j, std::vector<Link>& links) {
    links.clear();
    if (i != j) links.push_back(Link{j < 12 ? 0 : 1 + j});
  };
  routes.link_width = [](Link) { return 1.0; };
  const PostingOrder spread = spread_over_links(m, order, t, routes);
  CHECK(spread.peers[0] == std::vector<Rank>{12, 8});
  CHECK(spread.peers[1] == std::vector<Rank>{13, 9});
  CHECK(spread.peers[2] == std::vector<Rank>{10, 14});
  CHECK(spread.peers[3] == std::vector<Rank>{11, 15});
  check_messages(m, spread.peers);
  CHECK(spread_over_links(m, order, t, routes).peers == spread.peers);   // deterministic
  // With receivers that would end later (each also receiving from the next sender at position
  // 1), nothing moves.
  std::vector<Message> ring;
  for (Rank s = 0; s < 4; ++s) ring.push_back({s, static_cast<Rank>(8 + s), 1024}), ring.push_back({s, static_cast<Rank>(8 + (s + 1) % 4), 1024});
  const CommMatrix r = make_matrix(16, std::move(ring));
  PostingOrder tight;
  tight.colours = 2;
  tight.peers.resize(16);
  for (Rank s = 0; s < 4; ++s) tight.peers[static_cast<std::size_t>(s)] = {static_cast<Rank>(8 + s), static_cast<Rank>(8 + (s + 1) % 4)};
  routes.route = [](Rank i, Rank j, std::vector<Link>& links) {
    links.clear();
    if (j == 8 + i) links.push_back(Link{0});
    else links.push_back(Link{1 + i});
  };
  CHECK(spread_over_links(r, tight, t, routes).peers == tight.peers);
}

TEST_CASE("posting_order_spread_over_links_swaps_two_positions_over_a_component") {
  // Two 2 x 2 blocks (senders 0, 1 to receivers 4, 5; senders 2, 3 to 6, 7), each receiver one
  // message per position; 0 -> 4 and 2 -> 6 share link 0 at position 0. A swap of two of one
  // sender's messages would give a receiver both its messages at position 1 (refused: it would
  // end later); swapping positions 0 and 1 over the first block keeps every receiver's one per
  // position and puts 0 -> 4 at position 1.
  const CommMatrix m = make_matrix(8, {{0, 4, 1024}, {0, 5, 1024}, {1, 4, 1024}, {1, 5, 1024},
                                       {2, 6, 1024}, {2, 7, 1024}, {3, 6, 1024}, {3, 7, 1024}});
  PostingOrder order;
  order.colours = 2;
  order.peers = {{4, 5}, {5, 4}, {6, 7}, {7, 6}, {}, {}, {}, {}};
  const RouteTiming t = one_microsecond_routes();
  LinkRoutes routes;
  routes.link_count = 1 + 64;
  routes.route = [](Rank i, Rank j, std::vector<Link>& links) {
    links.clear();
    if ((i == 0 && j == 4) || (i == 2 && j == 6)) links.push_back(Link{0});
    else links.push_back(Link{1 + 8 * i + j});
  };
  routes.link_width = [](Link) { return 1.0; };
  const PostingOrder spread = spread_over_links(m, order, t, routes);
  CHECK(spread.peers == std::vector<std::vector<Rank>>{{5, 4}, {4, 5}, {6, 7}, {7, 6}, {}, {}, {}, {}});
  check_messages(m, spread.peers);
}

TEST_CASE("posting_order_busiest_links_first") {
  // Ranks 0-3 each send to 4 + r over link 0 (4 messages) and to 8 + r over a link of their own,
  // the private one first: link 0 sets the time, so its messages go first; equal keys keep the
  // order given (rank 4's two private links).
  std::vector<Message> msgs;
  for (Rank s = 0; s < 4; ++s) msgs.push_back({s, static_cast<Rank>(4 + s), 100}), msgs.push_back({s, static_cast<Rank>(8 + s), 100});
  msgs.push_back({4, 9, 100}), msgs.push_back({4, 10, 100});
  const CommMatrix m = make_matrix(12, std::move(msgs));
  PostingOrder order;
  order.peers.resize(12);
  for (Rank s = 0; s < 4; ++s) order.peers[static_cast<std::size_t>(s)] = {static_cast<Rank>(8 + s), static_cast<Rank>(4 + s)};
  order.peers[4] = {10, 9};
  LinkRoutes routes;
  routes.link_count = 1 + 12 * 12;
  routes.route = [](Rank i, Rank j, std::vector<Link>& links) {
    links.clear();
    links.push_back(j == i + 4 && i < 4 ? Link{0} : Link{1 + 12 * i + j});
  };
  routes.link_width = [](Link) { return 1.0; };
  const PostingOrder sorted = busiest_links_first(m, order, routes);
  for (Rank s = 0; s < 4; ++s) CHECK(sorted.peers[static_cast<std::size_t>(s)] == std::vector<Rank>{static_cast<Rank>(4 + s), static_cast<Rank>(8 + s)});
  CHECK(sorted.peers[4] == std::vector<Rank>{10, 9});
  check_messages(m, sorted.peers);
}

TEST_CASE("async_plans_on_routes_of_different_lengths_post_by_route_and_stay_above_the_bound") {
  // uniform4 at 256 ranks, 1 KiB, on the torus, the dragonfly and the tapered fat tree of
  // bench/smpi under both models: the plan's order is the colouring refined by routes or spread
  // over the links only where that prices lower; never above the coloured order's estimate, never
  // below the bound; on the torus and the tapered tree it prices at least 3 % lower.
  const CommMatrix m = gen_uniform(256, 4, 1024, 20261122);
  for (const char* spec : {"torus:8x8x4", "dragonfly:4,8;4,2;4,2;4", "fattree:2;16,16;1,4;1,1"})
    for (Network model : {Network::flow, Network::ib}) {
      CAPTURE(spec);
      CAPTURE(to_string(model));
      const PlanOptions o = per_link(spec, model);
      Plan plan = make_plan(m, o);
      std::vector<std::vector<Rank>> peers;
      for (const RankSchedule& rs : plan.ranks) peers.push_back(rs.send_order);
      check_messages(m, peers);
      const double estimate = plan.manifest.cost.estimate_s;
      CHECK(estimate >= plan.manifest.cost.lower_bound_s * (1 - 1e-12));
      const PostingOrder coloured = coloured_posting_order(m);
      for (RankSchedule& rs : plan.ranks) rs.send_order = coloured.peers[static_cast<std::size_t>(rs.rank)];
      const double by_colour = simulate_plan(plan, o.cost.tau_s, o.cost.bandwidth_Bps, o.cost.network, o.topology).seconds;
      CHECK(estimate <= by_colour);
      if (std::string(spec).starts_with("torus")) CHECK(estimate < 0.97 * by_colour);
      if (std::string(spec).starts_with("fattree")) CHECK(estimate < 0.97 * by_colour);
    }
}

TEST_CASE("send_order_format_checks") {
  RankSchedule rs;
  rs.rank = 0;
  rs.ranks = 4;
  rs.phases = 1;
  rs.sends = {{1, 8}, {2, 8}};
  rs.steps = {{0, Op::send, Buffer::send, 1, 0, 1, 0, 8}, {0, Op::send, Buffer::send, 2, 0, 2, 0, 8}};
  auto first = [&](std::vector<Rank> order) {
    rs.send_order = std::move(order);
    const auto problems = check_rank_schedule(rs, kFormatOnly);
    return problems.empty() ? std::string() : problems[0].place + ": " + problems[0].what;
  };
  CHECK(first({}) == "");
  CHECK(first({2, 1}) == "");
  CHECK(first({1, 2}) == "");
  CHECK(first({2}) == "/send_order: send steps address peer 1, which the posting order leaves out");
  CHECK(first({2, 1, 3}) == "/send_order: peer 3 is listed but no send step addresses it");
  CHECK(first({2, 2, 1}) == "/send_order: peer 2 is listed twice");
  CHECK(first({2, 0}) == "/send_order/1: the posting order names this rank");
  CHECK(first({2, 4}) == "/send_order/1: peer 4 is out of range (ranks = 4)");
}

TEST_CASE("send_order_round_trips_through_both_plan_forms_and_the_hash") {
  const CommMatrix m = gen_uniform(12, 3, 100, 5);
  PlanOptions o;
  o.strategy = "async";
  const Plan plan = make_plan(m, o);
  // The hash covers the order: another order, another hash.
  RankSchedule swapped = plan.ranks[0];
  REQUIRE(swapped.send_order.size() == 3);
  std::swap(swapped.send_order[0], swapped.send_order[1]);
  CHECK(rank_schedule_hash(swapped) != rank_schedule_hash(plan.ranks[0]));
  // A rank file stripped of its order is caught too.
  RankSchedule plain = plan.ranks[0];
  plain.send_order.clear();
  CHECK(rank_schedule_hash(plain) != rank_schedule_hash(plan.ranks[0]));
  const std::string text = rank_schedule_json(plan.ranks[0]);
  CHECK(text.find("\"send_order\": [") != std::string::npos);
  CHECK(same_with_order(parse_rank_schedule(text, "r.json"), plan.ranks[0]));
  CHECK(rank_schedule_json(plain).find("send_order") == std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / ("commfit-posting-order-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_plan_dir(plan, dir / "p.plan");
  write_plan_binary(plan, dir / "p.cfp");
  const Plan from_dir = read_plan_dir(dir / "p.plan"), from_binary = read_plan_binary(dir / "p.cfp");
  for (Rank r = 0; r < m.ranks; ++r) {
    CHECK(same_with_order(from_dir.ranks[r], plan.ranks[r]));
    CHECK(same_with_order(from_binary.ranks[r], plan.ranks[r]));
    CHECK(same_with_order(read_rank_schedule_binary(dir / "p.cfp", r), plan.ranks[r]));
  }
  std::filesystem::remove_all(dir);
}
