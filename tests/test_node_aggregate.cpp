// node-aggregate (passes/node_aggregate.h) and strategy node: property tests over seeded random,
// uniform, dense and skewed matrices, with nodes of 1 to 17 ranks, the last node full or partly
// full, and p from 1 to 70. Oracles: the verifier (contention rule none) on the lowered plan, and
// the pass's bounds asserted on the schedule itself:
//   - every network message goes whole, over at most three hops, in phase order, on the route
//     src -> a(A, B) -> b(A, B) -> dst (hops with equal ends skipped), with a on A and b on B the
//     same for all messages from A to B (two steps: a = src, b its counterpart on B; alternating,
//     for A + B odd: a the counterpart of dst on A, b = dst);
//   - three steps: the agents balanced by bytes, as longest processing time first guarantees: no
//     agent carries more than its node's mean plus the node's largest node pair;
//   - between two nodes A != B, exactly one (from, to) pair carries the aggregated bytes (the
//     network phase), exactly those of the messages from A to B below direct_from;
//   - at most three phases; a message inside a node, or of direct_from bytes or more, goes
//     directly, in one hop; one inside a node below ride_below bytes in the phase of a hop between
//     the same two ranks when there is one (scatter first), so that it shares that hop's message,
//     and the others never in such a phase.
#include "ir/cost_model.h"
#include "ir/error.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "passes/node_aggregate.h"
#include "passes/verify.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace commfit;

namespace {

void check_schedule(const CommMatrix& m, const NodeGroups& g, const std::string& what, Bytes direct_from = 0,
                    NodeSteps steps = NodeSteps::three, Bytes ride_below = 0, bool alternate = false) {
  const bool two = steps == NodeSteps::two;
  const std::string form = two ? (alternate ? ", two steps alternating" : ", two steps") : ", three steps";
  INFO(what << ", direct from " << direct_from << form << ", ride below " << ride_below);
  auto node = [&](Rank r) { return g.group_of(r); };
  auto size = [&](Rank n) { return static_cast<Rank>(g.members(n).size()); };
  const Schedule s = node_aggregate(m, g, direct_from, steps, ride_below, alternate);
  auto direct = [&](Bytes b) { return direct_from > 0 && b >= direct_from; };
  CHECK(s.phases <= (two ? 2u : 3u));
  // The lowered plan: delivery, holding, matching, staging (no contention rule).
  const Plan plan = lower(s, m);
  VerifyRules rules;
  rules.contention = Contention::none;
  const auto problems = verify(plan, m, rules);
  CHECK_MESSAGE(problems.empty(), (problems.empty() ? std::string() : problems[0]));
  // Each message's hops, in phase order.
  std::map<std::pair<Rank, Rank>, std::vector<const Transfer*>> hops;
  for (const Transfer& t : s.transfers) {
    CHECK(t.piece.offset == 0);
    CHECK(t.piece.bytes == m.at(t.piece.src, t.piece.dst));   // whole messages only
    hops[{t.piece.src, t.piece.dst}].push_back(&t);
  }
  std::map<std::pair<Rank, Rank>, std::set<std::pair<Rank, Rank>>> node_pairs;   // (A, B) -> (from, to) pairs
  std::map<std::pair<Rank, Rank>, Bytes> crossing, expected;
  std::map<std::pair<Rank, Rank>, std::pair<Rank, Rank>> agents;   // three steps: (A, B) -> (speaker, listener)
  std::map<Rank, Bytes> speaks, listens;                           // bytes per agent
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    const auto& h = hops[{i, j}];
    const Rank A = node(i), B = node(j);
    if (A == B || direct(b)) {
      REQUIRE(h.size() == 1);
      CHECK((h[0]->from == i && h[0]->to == j));
      if (A == B) {   // below ride_below it rides with a hop i -> j when there is one: scatter, else gather
        std::set<Phase> with;
        for (const Transfer& t : s.transfers)
          if (t.from == i && t.to == j && (t.piece.src != i || t.piece.dst != j)) with.insert(t.phase);
        if (b < ride_below && !with.empty()) CHECK(h[0]->phase == *with.rbegin());   // hops inside a node: gather < scatter
        else CHECK((with.count(h[0]->phase) == 0 || with.size() == s.phases));   // alternating: both phases may hold a hop
      }
      return;
    }
    expected[{A, B}] += b;
    // Three steps: the agents are the ends of the hop that crosses nodes; one pair per node pair.
    // Two: the counterpart of i on B, by their places in their nodes; alternating, for node pairs
    // with A + B odd, j's counterpart on A, which sends to j itself.
    Rank a = i, c = g.members(B)[static_cast<std::size_t>(g.local(i) % size(B))];
    if (two && alternate && (A + B) % 2 == 1) a = g.members(A)[static_cast<std::size_t>(g.local(j) % size(A))], c = j;
    CHECK(g.members(A)[static_cast<std::size_t>(g.local(i))] == i);
    if (!two) {
      const auto cross = std::find_if(h.begin(), h.end(), [&](const Transfer* t) { return node(t->from) != node(t->to); });
      REQUIRE(cross != h.end());
      a = (*cross)->from;
      c = (*cross)->to;
      CHECK(node(a) == A);
      CHECK(node(c) == B);
      const auto it = agents.try_emplace({A, B}, std::pair{a, c}).first;
      CHECK(it->second == std::pair{a, c});
    }
    std::vector<Rank> route{i};
    for (Rank r : {a, c, j})
      if (r != route.back()) route.push_back(r);
    REQUIRE(h.size() == route.size() - 1);
    for (std::size_t k = 0; k < h.size(); ++k) {
      CHECK(h[k]->from == route[k]);
      CHECK(h[k]->to == route[k + 1]);
      if (k > 0) CHECK(h[k]->phase > h[k - 1]->phase);
    }
  });
  for (const Transfer& t : s.transfers)
    if (node(t.from) != node(t.to) && !direct(t.piece.bytes)) {
      node_pairs[{node(t.from), node(t.to)}].insert({t.from, t.to});
      crossing[{node(t.from), node(t.to)}] += t.piece.bytes;
    }
  // Three steps: one message per node pair; two: at most one per rank of the sending node
  // (alternating, gathered first: one per rank of the receiving node).
  for (const auto& [nodes_, pairs] : node_pairs) {
    const auto& nodes = nodes_;
    const bool gathered_first = alternate && (nodes.first + nodes.second) % 2 == 1;
    const Rank most = !two ? 1 : gathered_first ? size(nodes.second) : size(nodes.first);
    CHECK_MESSAGE(pairs.size() <= static_cast<std::size_t>(most), "nodes " << nodes.first << " -> " << nodes.second);
  }
  CHECK(crossing == expected);
  if (two) return;
  // Agents balanced by bytes (longest processing time first): on each node no speaker (listener)
  // carries more than the node's mean over its ranks plus its largest node pair.
  for (const auto& [nodes, ends] : agents) {
    speaks[ends.first] += expected[nodes];
    listens[ends.second] += expected[nodes];
  }
  for (int side = 0; side < 2; ++side) {
    std::map<Rank, Bytes> total, largest;   // per node
    for (const auto& [nodes, ends] : agents) {
      const Rank node = side == 0 ? nodes.first : nodes.second;
      total[node] += expected[nodes];
      largest[node] = std::max(largest[node], expected[nodes]);
    }
    for (const auto& [r_, bytes_] : side == 0 ? speaks : listens) {
      const auto& r = r_; const auto& bytes = bytes_;
      const Rank on = node(r);
      const Rank n = size(on);
      CHECK_MESSAGE(bytes * n <= total[on] + largest[on] * n, "rank " << r << (side == 0 ? " speaks" : " listens") << " for " << bytes << " B");
    }
  }
}

// The property suite on one placement: random, uniform, dense and skewed matrices, both step
// counts (two plain and alternating), with and without direct_from and ride_below. Returns the number of cases.
int check_matrices(Rank p, const NodeGroups& g, const std::string& at, std::uint64_t seed) {
  check_schedule(gen_random_sparse(p, 0.3, 5000, seed), g, "random " + at);
  check_schedule(gen_random_sparse(p, 0.3, 5000, seed), g, "random " + at, 2500);
  check_schedule(gen_random_sparse(p, 0.3, 5000, seed), g, "random " + at, 0, NodeSteps::two);
  check_schedule(gen_dense(p, 300, seed), g, "dense " + at, 200, NodeSteps::two);
  if (p > 1) check_schedule(gen_uniform(p, std::min<int>(p - 1, 5), 100, seed), g, "uniform " + at);
  check_schedule(gen_dense(p, 300, seed), g, "dense " + at);
  check_schedule(gen_dense(p, 300, seed), g, "dense " + at, 0, NodeSteps::three, 150);
  check_schedule(gen_random_sparse(p, 0.5, 600, seed), g, "random " + at, 0, NodeSteps::two, 300);
  check_schedule(gen_hot_receiver(p, p / 2, 4000, 0.2, seed), g, "hot " + at);
  check_schedule(gen_random_sparse(p, 0.3, 5000, seed), g, "random " + at, 0, NodeSteps::two, 0, true);
  check_schedule(gen_dense(p, 300, seed), g, "dense " + at, 200, NodeSteps::two, 0, true);
  check_schedule(gen_random_sparse(p, 0.5, 600, seed), g, "random " + at, 0, NodeSteps::two, 300, true);
  check_schedule(gen_hot_receiver(p, p / 2, 4000, 0.2, seed), g, "hot " + at, 0, NodeSteps::two, 0, true);
  return 13;
}

}  // namespace

TEST_CASE("node aggregate: random, uniform, dense and skewed matrices on every node size") {
  int cases = 0;
  for (Rank p : {1, 2, 3, 7, 16, 33, 64, 70})
    for (Rank per : {1, 2, 3, 4, 8, 16, 17}) {
      if (per > p && per != 1 && p > 1) continue;
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const std::string at = "p " + std::to_string(p) + ", " + std::to_string(per) + " per node, seed " + std::to_string(seed);
        cases += check_matrices(p, NodeGroups::blocks(p, per), at, seed);
      }
    }
  CHECK(cases > 300);
}

TEST_CASE("node aggregate: seeded random placements, round robin and uneven nodes, whole nodes and groups") {
  // Node maps +nodeN cannot describe: each rank on a random node of a random count (some nodes
  // empty, some with one rank), round robin over 2 to 5 nodes, and blocks of uneven sizes; the
  // groups are the nodes, halves and quarters of them.
  int cases = 0;
  for (Rank p : {2, 5, 16, 33, 64})
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      Rng rng(seed * 7919 + static_cast<std::uint64_t>(p));
      std::vector<std::pair<std::string, std::vector<Rank>>> maps;
      std::vector<Rank> random(static_cast<std::size_t>(p)), robin(static_cast<std::size_t>(p)), uneven(static_cast<std::size_t>(p));
      const Rank nodes = 1 + static_cast<Rank>(rng.below(static_cast<std::uint64_t>(std::max<Rank>(1, p / 3))));
      for (Rank& n : random) n = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(nodes)));
      for (Rank r = 0; r < p; ++r) robin[static_cast<std::size_t>(r)] = r % (2 + static_cast<Rank>(seed % 4));
      for (Rank r = 0, node = 0, left = 1; r < p; ++r, --left) {
        if (left == 0) ++node, left = 1 + static_cast<Rank>(rng.below(6));
        uneven[static_cast<std::size_t>(r)] = node;
      }
      maps = {{"random", random}, {"round robin", robin}, {"uneven", uneven}};
      for (const auto& [name, map] : maps) {
        const Topology t = Topology().with_node_map(map);
        for (Rank group = t.ranks_per_node(); group >= 1; group /= 2) {
          const std::string at = name + " placement " + t.spec() + ", groups of " + std::to_string(group) + ", seed " + std::to_string(seed);
          const NodeGroups g(t, p, group);
          // The groups: every rank in exactly one, each on one node, of at most `group` ranks.
          for (Rank k = 0; k < g.count(); ++k) {
            CHECK(g.members(k).size() <= static_cast<std::size_t>(group));
            for (Rank r : g.members(k)) CHECK((g.group_of(r) == k && t.node_of(r) == t.node_of(g.members(k)[0])));
          }
          cases += check_matrices(p, g, at, seed);
          if (group == 1) break;
        }
      }
    }
  CHECK(cases > 500);
}

TEST_CASE("strategy node: plans verify through make_plan, and it needs ranks per node") {
  const CommMatrix m = gen_dense(40, 500, 7);
  PlanOptions o;
  o.strategy = "node";
  o.topology = Topology::parse("full+node8");
  const Plan plan = make_plan(m, o);   // make_plan verifies every plan it returns
  CHECK(plan.manifest.phases == 3);
  CHECK(plan.manifest.contract.contention == Contention::none);
  CHECK(plan.manifest.options.value("ranks_per_node", 0) == 8);
  CHECK(plan.manifest.options.value("direct_from", 0) == 10000);   // tau x bandwidth / 2 at the defaults
  // Deterministic: the same plan twice.
  const Plan again = make_plan(m, o);
  REQUIRE(again.ranks.size() == plan.ranks.size());
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) CHECK(again.ranks[r].steps == plan.ranks[r].steps);
  o.topology = Topology::parse("torus:4x2+node5");   // the last node partly full (40 ranks)
  CHECK(make_plan(m, o).manifest.phases == 3);
  o.steps = 2;
  CHECK(make_plan(m, o).manifest.phases == 2);
  CHECK(make_plan(m, o).manifest.options.value("steps", "") == "2");
  o.steps = 4;
  CHECK_THROWS_WITH_AS(make_plan(m, o), doctest::Contains("unknown steps \"4\" for strategy node"), UsageError);
  o.steps = 3;
  o.topology = Topology();
  CHECK_THROWS_WITH_AS(make_plan(m, o), doctest::Contains("strategy node needs several ranks per node"), UsageError);
}

TEST_CASE("strategy node: the aggregation group is the node or a half, quarter, ... of it, the cheapest under the network model") {
  // Small dense messages on 16 ranks per node: the network model prefers groups smaller than the
  // node (the scatter inside a node is long); with 8 ranks per node and large messages, the node.
  PlanOptions o;
  o.strategy = "node";
  o.cost.bandwidth_Bps = 1.25e10;
  for (const auto& [spec_, m] : {std::pair{"fattree:2;4,2;1,2;1,1+node16", gen_uniform(128, 127, 256, 1)},
                                std::pair{"full+node8", gen_uniform(64, 63, 8192, 2)}, std::pair{"full+node6", gen_dense(40, 2000, 3)}}) {
    const auto& spec = spec_;
    CAPTURE(spec);
    o.topology = Topology::parse(spec);
    const Rank per = o.topology.ranks_per_node();
    const Plan plan = make_plan(m, o);
    const Rank group = plan.manifest.options.value("group", 0);
    CHECK((group == per || group == per / 2 || group == per / 4 || group == per / 8));
    CHECK(group >= 2);
    // Its estimate is that of the pass run with that group, and no group of the chain beats it.
    const Bytes direct_from = plan.manifest.options.value("direct_from", Bytes{0}), ride = plan.manifest.options.value("ride_below", Bytes{0});
    for (Rank g = per; g >= 2; g /= 2) {
      const double e = plan_estimate_s(lower(node_aggregate(m, NodeGroups(o.topology, m.ranks, g), direct_from, NodeSteps::three, ride), m), m,
                                       o.cost, o.topology);
      if (g == group) CHECK(e == plan.manifest.cost.estimate_s);
      else CHECK(e >= plan.manifest.cost.estimate_s);
      if (g % 2 != 0) break;
    }
    if (per == 16) CHECK(group < per);
  }
}

TEST_CASE("strategy node: two steps try every group plain and alternating and keep the cheapest under the network model") {
  // Dense 256 B on 8 hosts of 16 ranks: alternating keeps the network busy while the ranks forward
  // inside their host, and the model prices it lower than plain two steps at every group size.
  PlanOptions o;
  o.strategy = "node";
  o.steps = 2;
  o.cost.bandwidth_Bps = 1.25e10;
  o.topology = Topology::parse("fattree:2;4,2;1,2;1,1+node16");
  const CommMatrix m = gen_uniform(128, 127, 256, 1);
  const Plan plan = make_plan(m, o);
  CHECK(plan.manifest.options.value("alternate", false));
  const Rank group = plan.manifest.options.value("group", 0);
  const Bytes direct_from = plan.manifest.options.value("direct_from", Bytes{0}), ride = plan.manifest.options.value("ride_below", Bytes{0});
  double plain_best = 0;
  for (Rank g = 16; g >= 2; g /= 2)
    for (const bool alternate : {false, true}) {
      const double e = plan_estimate_s(lower(node_aggregate(m, NodeGroups(o.topology, m.ranks, g), direct_from, NodeSteps::two, ride, alternate), m),
                                       m, o.cost, o.topology);
      if (g == group && alternate) CHECK(e == plan.manifest.cost.estimate_s);
      else CHECK(e >= plan.manifest.cost.estimate_s);
      if (!alternate && (plain_best == 0 || e < plain_best)) plain_best = e;
    }
  CHECK(plan.manifest.cost.estimate_s < 0.9 * plain_best);
  // Three steps have no alternating form: the manifest says nothing of it.
  o.steps = 3;
  CHECK_FALSE(make_plan(m, o).manifest.options.contains("alternate"));
}
