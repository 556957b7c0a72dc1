// Topology (ir/topology.h): specs and the JSON form, hand-checked routes on small hypercubes,
// meshes, tori and fat trees, route properties on every pair (e-cube length = Hamming distance,
// torus length = sum of the shorter ways round <= sum floor(size/2), links chain from a to b),
// ranks per node. Fat tree and torus routes are compared with SimGrid itself in
// tests/simgrid/test_fattree_routes.cpp.
#include "ir/error.h"
#include "ir/topology.h"
#include "ir/topology_fattree.h"

#include <doctest/doctest.h>

#include <bit>
#include <set>
#include <string>
#include <vector>

using namespace commfit;
using Links = std::vector<Link>;
Links links_of(std::initializer_list<std::int64_t> ids) {
  Links out;
  for (std::int64_t id : ids) out.push_back(Link{id});
  return out;
}

namespace {

std::string parse_error(const std::string& spec) {
  try {
    Topology::parse(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string json_error(const char* text) {
  try {
    Topology::from_json(nlohmann::json::parse(text));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Walks a hypercube/mesh/torus route: every link must leave the node the previous one reached,
// and the last one must reach b's node. Returns the number of problems.
int walk_grid(const Topology& t, Rank a, Rank b, const Links& links) {
  std::int64_t x = t.node_of(a).value();
  int problems = 0;
  const auto n = static_cast<std::int64_t>(t.dims().size());
  for (Link id : links) {
    const std::int64_t l = id.value();
    if (l < 0 || l >= t.link_count()) return ++problems;
    if (t.kind() == Topology::Kind::hypercube) {
      const std::int64_t D = t.dims()[0];
      problems += l / D != x;
      x ^= std::int64_t{1} << (l % D);
    } else {
      problems += l / 2 / n != x;
      const std::int64_t k = l / 2 % n;
      std::int64_t stride = 1;
      for (std::int64_t j = 0; j < k; ++j) stride *= t.dims()[j];
      const std::int64_t size = t.dims()[k], c = (x / stride) % size;
      const std::int64_t next = l % 2 == 0 ? (c + 1) % size : (c + size - 1) % size;
      if (t.kind() == Topology::Kind::mesh) problems += l % 2 == 0 ? c == size - 1 : c == 0;   // no wrap on a mesh
      x += (next - c) * stride;
    }
  }
  return problems + (x != t.node_of(b).value());
}

}  // namespace

TEST_CASE("topology: specs round-trip through spec() and the JSON form") {
  for (const char* spec : {"full", "full+node8", "hypercube:0", "hypercube:6", "hypercube:3+node2", "mesh:4x4",
                           "mesh:7", "torus:8x8x4", "torus:2x3x4x5+node4", "fattree:2;16,16;1,16;1,1",
                           "fattree:3;4,4,4;1,2,2;1,1,1+node2", "dragonfly:4,8;4,2;4,2;4", "dragonfly:1,1;1,1;1,1;1+node16"}) {
    CAPTURE(spec);
    const Topology t = Topology::parse(spec);
    CHECK(t.spec() == spec);
    CHECK(Topology::parse(t.spec()) == t);
    CHECK(Topology::from_json(t.to_json()) == t);
    CHECK(Topology::from_json(nlohmann::json(spec)) == t);
  }
  CHECK(Topology() == Topology::parse("full"));
  CHECK(Topology::parse("torus:8,8,4").spec() == "torus:8x8x4");   // SimGrid's separator
  CHECK(Topology::parse("hypercube:6").ranks() == 64);
  CHECK(Topology::parse("torus:4x4+node4").ranks() == 64);
  CHECK(Topology::parse("torus:4x4+node4").nodes() == 16);
  CHECK(Topology::parse("fattree:2;16,16;1,16;1,1").ranks() == 256);
  CHECK(Topology::parse("full+node4").ranks() == 0);
  CHECK(Topology::parse("dragonfly:4,8;4,2;4,2;4").ranks() == 256);
  CHECK(Topology::parse("dragonfly:4,8;4,2;4,2;4+node2").to_json().dump() ==
        R"({"kind":"dragonfly","groups":4,"blue_links":8,"chassis":4,"black_links":2,"blades":4,"green_links":2,"nodes_per_blade":4,"ranks_per_node":2})");
  CHECK(Topology::parse("torus:4x4").to_json().dump() == R"({"kind":"torus","dims":[4,4]})");
  CHECK(Topology::parse("fattree:2;4,4;1,2;1,2+node2").to_json().dump() ==
        R"({"kind":"fattree","levels":2,"down":[4,4],"up":[1,2],"parallel":[1,2],"ranks_per_node":2})");
  CHECK(Topology::from_json(nlohmann::json::parse(R"({"kind": "hypercube", "dimension": 4, "ranks_per_node": 2})")) ==
        Topology::parse("hypercube:4+node2"));
  CHECK(Topology::from_json(nlohmann::json::parse(R"({"kind": "fattree", "down": [4, 4], "up": [1, 2], "parallel": [1, 2]})")) ==
        Topology::parse("fattree:2;4,4;1,2;1,2"));
}

TEST_CASE("topology: bad specs and JSON name the problem") {
  CHECK(parse_error("") == "topology \"\": expected full, hypercube:D, mesh:AxB..., torus:AxB..., fattree:L;m1,..;w1,..;p1,.. or "
                           "dragonfly:G,b;C,k;B,g;N ('/' may replace ';'), optionally followed by +nodeN or +map:LIST");
  CHECK(parse_error("dragonfly") == "topology \"dragonfly\": dragonfly needs parameters after a colon");
  CHECK(parse_error("dragonfly:4,8;4,2;4,2").find("a dragonfly is G,b;C,k;B,g;N") != std::string::npos);
  CHECK(parse_error("dragonfly:4,8;4;4,2;4").find("a dragonfly is G,b;C,k;B,g;N") != std::string::npos);
  CHECK(parse_error("dragonfly:4,8;4,2;4,x;4") == "topology \"dragonfly:4,8;4,2;4,x;4\": \"x\" is not a valid count");
  CHECK(parse_error("dragonfly:4,0;4,2;4,2;4") == "topology \"dragonfly:4,0;4,2;4,2;4\": every count must be an integer from 1 to 16777216");
  CHECK(parse_error("dragonfly:5,1;4,2;4,2;4") ==
        "topology \"dragonfly:5,1;4,2;4,2;4\": SimGrid's dragonfly routing needs at most as many groups (5) as blades per chassis (4)");
  CHECK(parse_error("dragonfly:64,1;4096,1;64,1;1") == "topology \"dragonfly:64,1;4096,1;64,1;1\": more than 16777216 cables");
  CHECK(parse_error("ring:4").find("expected full, hypercube:D") != std::string::npos);
  CHECK(parse_error("hypercube") == "topology \"hypercube\": hypercube needs parameters after a colon");
  CHECK(parse_error("hypercube:25") == "topology \"hypercube:25\": the dimension must be an integer from 0 to 24");
  CHECK(parse_error("hypercube:-1") == "topology \"hypercube:-1\": the dimension must be an integer from 0 to 24");
  CHECK(parse_error("full:3") == "topology \"full:3\": full takes no parameters");
  CHECK(parse_error("mesh:4x0") == "topology \"mesh:4x0\": every dimension size must be at least 1");
  CHECK(parse_error("torus:4x") == "topology \"torus:4x\": \"\" is not a valid dimension size");
  CHECK(parse_error("torus:4xa") == "topology \"torus:4xa\": \"a\" is not a valid dimension size");
  CHECK(parse_error("torus:4096x4096x4096") == "topology \"torus:4096x4096x4096\": more than 16777216 nodes");
  CHECK(parse_error("torus:4x4+node0") == "topology \"torus:4x4+node0\": the suffix must be +nodeN with N >= 1 ranks per node, or +map:LIST");
  CHECK(parse_error("torus:4x4+nod4") == "topology \"torus:4x4+nod4\": the suffix must be +nodeN with N >= 1 ranks per node, or +map:LIST");
  CHECK(parse_error("torus:1024x1024+node2048") == "topology \"torus:1024x1024+node2048\": more than 1073741824 ranks");
  // '/' separates the groups as ';' does, without quotes in a shell: the same topology.
  CHECK(Topology::parse("fattree:2/4,8/1,4/1,1").spec() == "fattree:2;4,8;1,4;1,1");
  CHECK(Topology::parse("dragonfly:4,8/4,2/4,2/4+node2").spec() == "dragonfly:4,8;4,2;4,2;4+node2");
  CHECK(Topology::parse("fattree:2/4,8/1,4/1,1").route(0, 31) == Topology::parse("fattree:2;4,8;1,4;1,1").route(0, 31));
  CHECK(parse_error("fattree:2/4,8;1,4/1,1").find("a fat tree is") != std::string::npos);
  CHECK(parse_error("fattree:2;4,4;1,2").find("a fat tree is L;m1,...,mL;w1,...,wL;p1,...,pL") != std::string::npos);
  CHECK(parse_error("fattree:2;4,4;1;1,1") == "topology \"fattree:2;4,4;1;1,1\": the up-link count list has 1 entries for 2 levels");
  CHECK(parse_error("fattree:2;4,4;1,0;1,1") == "topology \"fattree:2;4,4;1,0;1,1\": every link count must be at least 1");
  CHECK(parse_error("fattree:0;;;") == "topology \"fattree:0;;;\": the number of levels must be an integer from 1 to 16");
  CHECK(parse_error("fattree:3;128,128,128;1,1,1;1,1,1") == "topology \"fattree:3;128,128,128;1,1,1;1,1,1\": more than 1048576 hosts");
  CHECK(parse_error("fattree:2;1024,1024;1,1024;1,1").find("hosts") == std::string::npos);   // 2^20 hosts is allowed...
  CHECK(parse_error("fattree:2;1024,1024;1024,1024;1,1") ==
        "topology \"fattree:2;1024,1024;1024,1024;1,1\": more than 16777216 cables or switches");   // ...2^30 cables are not

  CHECK(json_error("3") == "expected a topology spec string or an object");
  CHECK(json_error(R"({"dims": [4]})") == "/kind: expected one of \"full\", \"hypercube\", \"mesh\", \"torus\", \"fattree\", \"dragonfly\"");
  CHECK(json_error(R"({"kind": "ring"})") == "/kind: unknown kind \"ring\" (choose from full, hypercube, mesh, torus, fattree, dragonfly)");
  CHECK(json_error(R"({"kind": "dragonfly", "groups": 2, "blue_links": 1, "chassis": 2, "black_links": 1, "blades": 2, "green_links": 1})") ==
        "/nodes_per_blade: missing");
  CHECK(json_error(R"({"kind": "dragonfly", "groups": 2, "blue_links": 1, "chassis": 2, "black_links": 1, "blades": 2, "green_links": 1, "nodes_per_blade": 2, "dims": [2]})") ==
        "/dims: not a field of a dragonfly topology");
  CHECK(json_error(R"({"kind": "torus", "dims": [4], "groups": 2})") == "/groups: not a field of a torus topology");
  CHECK(json_error(R"({"kind": "torus", "dims": [4, 0]})") == "/dims/1: expected an integer from 1 to 16777216");
  CHECK(json_error(R"({"kind": "torus", "dims": 4})") == "/dims: expected an array of 1 to 16 integers");
  CHECK(json_error(R"({"kind": "torus"})") == "/dims: missing");
  CHECK(json_error(R"({"kind": "torus", "dims": [4], "colour": 1})") == "/colour: unknown field");
  CHECK(json_error(R"({"kind": "torus", "dims": [4], "dimension": 1})") == "/dimension: not a field of a torus topology");
  CHECK(json_error(R"({"kind": "hypercube", "dimension": 2.5})") == "/dimension: expected an integer from 0 to 24");
  CHECK(json_error(R"({"kind": "full", "ranks_per_node": 0})") == "/ranks_per_node: expected an integer from 1 to 1073741824");
  CHECK(json_error(R"({"kind": "fattree", "down": [4, 4], "up": [1], "parallel": [1, 1]})") == "/up: needs one entry per level (2)");
  CHECK(json_error(R"({"kind": "fattree", "levels": 3, "down": [4, 4], "up": [1, 1], "parallel": [1, 1]})") ==
        "/levels: differs from the length of \"down\"");
  CHECK(json_error(R"("torus:4x0")") == "topology \"torus:4x0\": every dimension size must be at least 1");

  const Topology t = Topology::parse("torus:4x4+node2");
  CHECK_NOTHROW(t.check_ranks(32));
  CHECK_NOTHROW(t.check_ranks(20));   // fewer ranks than the machine holds
  CHECK_THROWS_WITH_AS(t.check_ranks(33), "topology torus:4x4+node2 has 32 ranks (16 nodes x 2 per node) but the matrix has 33", UsageError);
  CHECK_NOTHROW(Topology().check_ranks(1 << 20));
}

TEST_CASE("topology: full has no links") {
  const Topology t;
  CHECK(t.link_count() == 0);
  CHECK(t.route(0, 5).empty());
  CHECK(t.route(123456, 7).empty());
}

TEST_CASE("topology: e-cube routes on a 3-cube by hand") {
  const Topology t = Topology::parse("hypercube:3");
  CHECK(t.link_count() == 24);
  // 0 -> 7: flip bit 0 (0 -> 1), bit 1 (1 -> 3), bit 2 (3 -> 7); link = node * 3 + bit.
  CHECK(t.route(0, 7) == links_of({0, 4, 11}));
  // 5 -> 2 (101 -> 010): 5 -> 4 (bit 0), 4 -> 6 (bit 1), 6 -> 2 (bit 2).
  CHECK(t.route(5, 2) == links_of({15, 13, 20}));
  CHECK(t.route(2, 5) == links_of({6, 10, 5}));   // 2 -> 3 -> 1 -> 5: no link in common with 5 -> 2
  CHECK(t.route(6, 4) == links_of({19}));
  CHECK(t.route(3, 3).empty());
  CHECK(t.link_name(Link{15}) == "5->4 (bit 0)");
  CHECK(t.link_name(Link{20}) == "6->2 (bit 2)");
}

TEST_CASE("topology: e-cube route length is the Hamming distance") {
  for (int D : {1, 4, 6}) {
    const Topology t = Topology::parse("hypercube:" + std::to_string(D));
    int bad = 0;
    Links links;
    for (Rank a = 0; a < t.ranks(); ++a)
      for (Rank b = 0; b < t.ranks(); ++b) {
        t.route(a, b, links);
        bad += static_cast<int>(links.size()) != std::popcount(static_cast<unsigned>(a ^ b));
        bad += walk_grid(t, a, b, links);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("topology: dimension-order routes on a 4x3 mesh by hand") {
  const Topology t = Topology::parse("mesh:4x3");
  CHECK(t.link_count() == 2 * 12 * 2);
  // 0 = (0,0) -> 11 = (3,2): x first (+) from nodes 0, 1, 2; then y (+) from nodes 3, 7.
  // Link = 2 (node * 2 + dim) + (0 for +, 1 for -).
  CHECK(t.route(0, 11) == links_of({0, 4, 8, 14, 30}));
  // Back: x (-) from 11, 10, 9; y (-) from 8, 4.
  CHECK(t.route(11, 0) == links_of({45, 41, 37, 35, 19}));
  CHECK(t.route(5, 6) == links_of({20}));
  CHECK(t.link_name(Link{45}) == "11->10 (dim 0 -)");
  CHECK(t.link_name(Link{14}) == "3->7 (dim 1 +)");
}

TEST_CASE("topology: torus directions and SimGrid's tie-break by hand") {
  const Topology t = Topology::parse("torus:4");
  CHECK(t.route(0, 1) == links_of({0}));
  CHECK(t.route(0, 3) == links_of({1}));      // the short way, through the wrap link
  CHECK(t.route(0, 2) == links_of({0, 2}));   // tie: +
  CHECK(t.route(1, 3) == links_of({2, 4}));   // tie: +
  CHECK(t.route(3, 1) == links_of({6, 0}));   // tie: + through the wrap 3 -> 0
  CHECK(t.route(2, 0) == links_of({5, 3}));   // tie from size/2 to 0: - (SimGrid's rule)
  CHECK(t.link_name(Link{6}) == "link_from_3_to_0_UP");
  CHECK(t.link_name(Link{5}) == "link_from_1_to_2_DOWN");
  const Topology t5 = Topology::parse("torus:5");
  CHECK(t5.route(0, 3) == links_of({1, 9}));   // 0 -> 4 -> 3
  CHECK(t5.route(3, 0) == links_of({6, 8}));   // 3 -> 4 -> 0
  const Topology t2 = Topology::parse("torus:2x3");
  CHECK(t2.route(1, 0) == links_of({5}));      // size 2: 1 -> 0 goes -
  CHECK(t2.route(0, 5) == links_of({0, 7}));   // x: 0 -> 1 (+); y: 1 -> 5 the short way (-)
}

TEST_CASE("topology: torus routes are shortest, at most sum floor(size/2) long") {
  for (const char* spec : {"torus:4x4", "torus:5x4x3", "torus:8x8x4", "torus:2x7", "mesh:5x4x3"}) {
    CAPTURE(spec);
    const Topology t = Topology::parse(spec);
    std::int64_t bound = 0;
    for (std::int64_t d : t.dims()) bound += d / 2;
    int bad = 0, longest = 0;
    Links links;
    for (Rank a = 0; a < t.ranks(); ++a)
      for (Rank b = 0; b < t.ranks(); ++b) {
        t.route(a, b, links);
        std::int64_t want = 0, stride = 1;
        for (std::int64_t d : t.dims()) {
          const std::int64_t delta = std::abs((a / stride) % d - (b / stride) % d);
          want += t.kind() == Topology::Kind::torus ? std::min(delta, d - delta) : delta;
          stride *= d;
        }
        bad += static_cast<std::int64_t>(links.size()) != want;
        bad += walk_grid(t, a, b, links);
        bad += std::set<Link>(links.begin(), links.end()).size() != links.size();
        longest = std::max(longest, static_cast<int>(links.size()));
      }
    CHECK(bad == 0);
    if (t.kind() == Topology::Kind::torus) CHECK(longest == bound);
  }
}

TEST_CASE("topology: ranks of one node use no link") {
  const Topology t = Topology::parse("torus:4x4+node4");
  for (Rank a = 0; a < 64; ++a)
    for (Rank b = 0; b < 64; ++b) {
      if (a / 4 == b / 4) CHECK(t.route(a, b).empty());
      else CHECK(t.route(a, b) == Topology::parse("torus:4x4").route(a / 4, b / 4));
    }
  const Topology h = Topology::parse("hypercube:2+node3");
  CHECK(h.route(0, 2).empty());
  CHECK(h.route(2, 3) == links_of({0}));   // node 0 -> node 1
  CHECK(Topology::parse("fattree:1;4;1;1+node2").route(6, 7).empty());
}

TEST_CASE("topology: fat tree numbering and routes by hand") {
  // One switch, four hosts: cable k joins host k to the switch (SimGrid id 2N-1 = 7).
  const Topology star = Topology::parse("fattree:1;4;1;1");
  CHECK(star.link_count() == 8);
  CHECK(star.route(0, 1) == links_of({0, 3}));
  CHECK(star.route(3, 2) == links_of({6, 5}));
  CHECK(star.link_name(Link{0}) == "link_from_0_7_0_UP");
  CHECK(star.link_name(Link{5}) == "link_from_2_7_2_DOWN");

  // 2;2,2;1,2;1,1: 4 hosts, 2 leaf switches (ids 7, 6), 2 top switches (ids 5, 4). Cables:
  // host k -> its leaf (k = 0..3); leaf 0 -> top 0, top 1 (4, 5); leaf 1 -> top 0, top 1 (6, 7).
  const Topology t = Topology::parse("fattree:2;2,2;1,2;1,1");
  CHECK(t.link_count() == 16);
  CHECK(t.route(0, 1) == links_of({0, 3}));   // same leaf
  // 0 -> 3: up to leaf 0; up port (3 / w0) mod (w1 p1) = 1: top 1 (cable 5); down to leaf 1
  // (cable 7), down to host 3 (cable 3).
  CHECK(t.route(0, 3) == links_of({0, 10, 15, 7}));
  CHECK(t.route(1, 2) == links_of({2, 8, 13, 5}));   // destination 2: top 0
  CHECK(t.link_name(Link{10}) == "link_from_7_4_5_UP");
  CHECK(t.link_name(Link{15}) == "link_from_6_4_7_DOWN");

  // Parallel cables: the up cable is chosen by destination, the down cable by source mod p.
  const Topology par = Topology::parse("fattree:1;2;1;2");
  CHECK(par.link_count() == 8);   // host 0: cables 0, 1; host 1: cables 2, 3
  CHECK(par.route(0, 1) == links_of({2, 5}));   // up port 1 mod 2 = 1 (cable 1); down from source 0 mod 2 = 0 (cable 2)
  CHECK(par.route(1, 0) == links_of({4, 3}));   // up port 0 (cable 2); down cable 1 (source 1 mod 2)
}

TEST_CASE("topology: fat tree routes climb to the lowest common switch and come down") {
  for (const char* spec : {"fattree:2;4,4;1,2;1,2", "fattree:2;16,16;1,16;1,1", "fattree:3;4,4,4;1,2,2;1,1,1",
                           "fattree:3;2,3,2;2,2,3;2,1,2"}) {
    CAPTURE(spec);
    const Topology t = Topology::parse(spec);
    const detail::FatTree ft(t.fattree_down(), t.fattree_up(), t.fattree_parallel(), spec);
    int bad = 0;
    Links links;
    std::set<std::int64_t> used;
    for (Rank a = 0; a < t.ranks(); ++a)
      for (Rank b = 0; b < t.ranks(); ++b) {
        if (a == b) continue;
        t.route(a, b, links);
        // Lowest common level: the highest label digit where a and b differ, plus one.
        int lca = 0;
        for (int j = 0; j < ft.levels(); ++j)
          if (ft.label(a, j) != ft.label(b, j)) lca = j + 1;
        bad += static_cast<int>(links.size()) != 2 * lca;
        std::int64_t at = a;
        for (std::size_t k = 0; k < links.size(); ++k) {
          const std::int64_t cable = links[k].value() / 2;
          const bool up = links[k].value() % 2 == 0;
          bad += up != (k < links.size() / 2);
          bad += (up ? ft.cable_child[cable] : ft.cable_parent[cable]) != at;
          at = up ? ft.cable_parent[cable] : ft.cable_child[cable];
          used.insert(links[k].value());
        }
        bad += at != b;
      }
    CHECK(bad == 0);
    CHECK(static_cast<std::int64_t>(used.size()) <= t.link_count());
  }
}

TEST_CASE("placement_machine: +nodeN from where ranks sit, a node map when blocks cannot say, full when nothing shares") {
  using V = std::vector<Rank>;
  auto spec = [](V v) { return placement_machine(v).spec(); };
  CHECK(spec(V{0, 0, 2, 2, 4, 4}) == "full+node2");
  CHECK(spec(V{0, 0, 0, 3, 3, 3, 6}) == "full+node3");              // the last node partly full
  CHECK(spec(V{0, 0, 0, 0}) == "full");                               // one node: nothing to aggregate
  CHECK(spec(V{0, 1, 2, 3}) == "full");                               // one rank per node
  CHECK(spec(V{0, 1, 0, 1}) == "full+map:0,1,0,1");                   // round robin
  CHECK(spec(V{0, 0, 2, 2, 2, 5}) == "full+map:0*2,1*3,2");           // uneven nodes
  CHECK(spec(V{0, 0, 2, 2, 2}) == "full+map:0*2,1*3");                // a later node larger than the first
  CHECK(spec(V{}) == "full");
  const Topology t = placement_machine(V{0, 1, 0, 1, 4});
  CHECK(t.ranks_per_node() == 2);
  CHECK(t.node_of(2) == Node{0});
  CHECK(t.node_of(3) == Node{1});
  CHECK(t.node_of(4) == Node{2});
}

TEST_CASE("node maps: +map:LIST, the JSON node_map, canonical forms and clear errors") {
  const Topology t = Topology::parse("full+map:7,7,3,3,3,7");
  CHECK(t.spec() == "full+map:0*2,1*3,0");   // full: nodes numbered by first appearance
  CHECK(t.ranks() == 6);
  CHECK(t.ranks_per_node() == 3);
  CHECK(Topology::parse(t.spec()) == t);
  CHECK(Topology::from_json(t.to_json()) == t);
  CHECK(t.to_json().dump() == R"({"kind":"full","node_map":[0,0,1,1,1,0]})");
  CHECK_NOTHROW(t.check_ranks(6));
  CHECK_THROWS_WITH_AS(t.check_ranks(5), "the node map places 6 ranks but the matrix has 5", UsageError);
  // On a network the entries are hosts, kept as given; routes go between them.
  const Topology f = Topology::parse("torus:4+map:3,0,3*2");
  CHECK(f.spec() == "torus:4+map:3,0,3*2");
  CHECK(f.node_of(1) == Node{0});
  CHECK(f.route(0, 1) == Topology::parse("torus:4").route(3, 0));
  CHECK(f.route(0, 2).empty());
  CHECK(f.node_slots(4) == 4);
  CHECK(Topology::from_json(nlohmann::json::parse(R"({"kind":"torus","dims":[4],"node_map":[3,0,3,3]})")) == f);
  CHECK_THROWS_WITH_AS(Topology::parse("torus:4+map:0,4"), doctest::Contains("+map: rank 1 is on node 4, but torus:4 has nodes 0 to 3"), UsageError);
  CHECK_THROWS_WITH_AS(Topology::parse("full+map:0,x"), doctest::Contains("\"x\" in +map: is not a node number or n*k"), UsageError);
  CHECK_THROWS_WITH_AS(Topology::parse("full+map:0*0"), doctest::Contains("is not a node number or n*k"), UsageError);
  CHECK_THROWS_WITH_AS(Topology::parse("full+map:0*16777216,1"), doctest::Contains("places more than 16777216 ranks"), UsageError);
  CHECK_THROWS_WITH_AS(Topology::parse("full+node2").with_node_map({0, 1}), doctest::Contains("give +nodeN or a node map, not both"), UsageError);
  CHECK_THROWS_WITH_AS(Topology::from_json(nlohmann::json::parse(R"({"kind":"full","node_map":[0,-1]})")),
                       "/node_map/1: expected a node number from 0 to 1073741823", UsageError);
  CHECK_THROWS_WITH_AS(Topology::from_json(nlohmann::json::parse(R"({"kind":"full","node_map":[0,1],"ranks_per_node":2})")),
                       "/node_map: give ranks_per_node or node_map, not both", UsageError);
  CHECK_THROWS_WITH_AS(Topology::from_json(nlohmann::json::parse(R"({"kind":"torus","dims":[2],"node_map":[0,2]})")),
                       "/node_map: rank 1 is on node 2, but torus:2 has nodes 0 to 1", UsageError);
}
