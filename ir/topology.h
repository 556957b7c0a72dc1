// Topology: the machine's network and its deterministic routing (docs/TOPOLOGY.md "Topologies and
// routes"). route(a, b) lists the directed links a message from rank a to rank b occupies; the
// link rule of the verifier and the link-checking passes (Ranka-Wang §5, Check_Path /
// Mark_Path) only compare link ids, so ids are opaque numbers in [0, link_count()).
//
// Specs (docs/TOPOLOGY.md has the full description):
//   full                       crossbar, no shared links (the default), any number of ranks
//   hypercube:D                2^D nodes, e-cube routing (address bits flipped least significant first)
//   mesh:AxBxC, torus:AxBxC    any number of dimensions, dimension-order routing (lowest first);
//                              on a torus the shorter way round, ties as SimGrid 3.32's TorusZone
//   fattree:L;m1,..;w1,..;p1,..  SimGrid's FAT_TREE cluster topo_parameters, routed as SimGrid's
//                              FatTreeZone routes (same node and link numbering, same up/down choice)
//   dragonfly:G,b;C,k;B,g;N    SimGrid's DRAGONFLY cluster topo_parameters (groups and blue links
//                              between two groups; chassis per group and black links; blades
//                              per chassis and green links; nodes per blade), routed as SimGrid
//                              3.32's DragonflyZone (minimal routing, its quirks included); a
//                              bundle of k links is one link k times as wide (link_width)
//   any of them + "+nodeN"     N consecutive ranks share a node; messages inside a node use no link
//   any of them + "+map:LIST"  a node map: rank r sits on node LIST[r] (a host of the machine; on
//                              full any numbering, kept canonical by first appearance), for
//                              placements +nodeN cannot describe (round robin, uneven nodes); "n*k"
//                              in LIST stands for k ranks on node n
// The JSON form (the matrix file's "topology" field) is either a spec string or an object such as
// {"kind": "torus", "dims": [4, 4], "ranks_per_node": 4} or {"kind": "full", "node_map": [0, 1, 0, 1]}.
#pragma once

#include "ir/comm_matrix.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace commfit {

namespace detail {
struct FatTree;   // ir/topology_fattree.cpp
}

class Topology;
// The crossbar for a placement: `first[r]` is the lowest rank on rank r's node. full+nodeN when
// the ranks sit on two or more nodes in blocks of N > 1 consecutive ranks (the last block may be
// smaller); full with a node map when they sit on two or more nodes otherwise, some node holding
// several (round robin, uneven nodes); full when there is nothing to aggregate (one node, one rank
// per node).
Topology placement_machine(std::span<const Rank> first);

class Topology {
 public:
  enum class Kind { full, hypercube, mesh, torus, fattree, dragonfly };

  Topology();   // full, one rank per node

  // Parses a spec (above). Throws UsageError naming the spec and what is wrong.
  static Topology parse(const std::string& spec);
  // The matrix file's "topology" field: a spec string or an object (docs/TOPOLOGY.md). Throws
  // UsageError whose message starts with the JSON path under the field, e.g. "/dims/1: ...".
  static Topology from_json(const nlohmann::json& j);
  nlohmann::ordered_json to_json() const;   // the object form; from_json(to_json()) == *this
  std::string spec() const;                 // canonical spec; parse(spec()) == *this

  Kind kind() const { return kind_; }
  static const char* kind_name(Kind k);

  // Network nodes (hosts) and ranks = nodes * ranks_per_node; both 0 for full (any p). With a node
  // map, ranks() is the map's length and ranks_per_node() the most ranks any node holds.
  Rank nodes() const { return nodes_; }
  Rank ranks() const { return map_ ? static_cast<Rank>(map_->size()) : nodes_ * per_node_; }
  Rank ranks_per_node() const { return per_node_; }
  Node node_of(Rank r) const { return Node{map_ ? (*map_)[static_cast<std::size_t>(r)] : r / per_node_}; }
  // The node of each rank when a node map places them; empty otherwise (+nodeN).
  std::span<const Rank> node_map() const { return map_ ? std::span<const Rank>(*map_) : std::span<const Rank>(); }
  // An upper bound on node_of(r) + 1 for the ranks r < p of a job: arrays indexed by node.
  Rank node_slots(Rank p) const { return map_ ? std::max(p, map_nodes_) : p; }
  // This machine with its ranks placed by `node_of` (one entry per rank: a host below nodes(), or on
  // full any non-negative number, renumbered by first appearance). Throws UsageError saying what
  // is wrong when the machine already has +nodeN or an entry is out of range.
  Topology with_node_map(std::vector<Rank> node_of) const;
  // hypercube: {D}; mesh/torus: the sizes, lowest dimension first; fattree: empty; dragonfly:
  // {groups, blue links, chassis, black links, blades, green links, nodes per blade}.
  const std::vector<std::int64_t>& dims() const { return dims_; }
  // fattree parameters (levels = down.size()); empty for other kinds.
  const std::vector<std::int64_t>& fattree_down() const;
  const std::vector<std::int64_t>& fattree_up() const;
  const std::vector<std::int64_t>& fattree_parallel() const;

  // Throws UsageError when a matrix of p ranks does not fit (p > ranks(), unless full). A job may
  // use fewer ranks than the machine has: ranks 0..p-1 sit on the first nodes.
  void check_ranks(Rank p) const;

  // Replaces `links` with the directed links of the route a -> b, in path order. Empty when a and
  // b share a node (a == b included) or the topology is full. Needs 0 <= a, b < ranks() (any
  // non-negative ranks for full).
  void route(Rank a, Rank b, std::vector<Link>& links) const;
  std::vector<Link> route(Rank a, Rank b) const;
  // The same between nodes (hosts) u and v, 0 <= u, v < nodes().
  void route_nodes(Node u, Node v, std::vector<Link>& links) const;

  // Link ids are in [0, link_count()); on a mesh some ids at the borders are never used. Arrays
  // indexed by link have link_count() entries (Link::index()).
  std::int64_t link_count() const;
  // A link's bandwidth in units of the cluster's link bandwidth: 1 except a dragonfly's bundles
  // (SimGrid gives a green, black or blue link that many times the cluster's bandwidth).
  double link_width(Link link) const;
  // A readable name for messages and reports. fattree and torus links carry SimGrid's names for
  // the same link (without the zone prefix), e.g. "link_from_0_15_0_UP", "link_from_3_to_0_DOWN".
  std::string link_name(Link link) const;

  friend bool operator==(const Topology& a, const Topology& b) { return a.spec() == b.spec(); }

 private:
  void route_hypercube(std::int64_t u, std::int64_t v, std::vector<Link>& links) const;
  void route_grid(std::int64_t u, std::int64_t v, std::vector<Link>& links) const;
  void route_dragonfly(std::int64_t u, std::int64_t v, std::vector<Link>& links) const;
  void set_nodes_per_rank(std::int64_t per_node, const std::string& what);

  Kind kind_ = Kind::full;
  Rank nodes_ = 0;
  Rank per_node_ = 1;
  std::vector<std::int64_t> dims_;
  std::vector<std::int64_t> stride_;                  // mesh/torus: node index = sum coord_k * stride_k
  std::shared_ptr<const detail::FatTree> fattree_;   // immutable, shared by copies
  std::shared_ptr<const std::vector<Rank>> map_;     // the node map, when one places the ranks
  Rank map_nodes_ = 0;                                // 1 + the largest node in map_

  friend struct TopologyBuilder;
};

// Limits checked by parse/from_json before anything is allocated.
inline constexpr std::int64_t kMaxTopologyNodes = std::int64_t{1} << 24;     // hypercube, mesh, torus
inline constexpr std::int64_t kMaxFatTreeHosts = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxFatTreeCables = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxTopologyRanks = std::int64_t{1} << 30;
inline constexpr std::int64_t kMaxNodeMapRanks = std::int64_t{1} << 24;      // a node map's length

}  // namespace commfit
