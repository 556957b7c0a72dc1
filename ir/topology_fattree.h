// The fat tree of Topology (ir/topology.h), built and routed exactly as SimGrid 3.32's FatTreeZone
// (src/kernel/routing/FatTreeZone.cpp) builds and routes a FAT_TREE cluster with topo_parameters
// "L;m1,..,mL;w1,..,wL;p1,..,pL": a parallel generalised fat tree (PGFT) of L switch levels; a
// level-l switch has m_l children, a level-(l-1) node has w_l parents, and p_l parallel cables
// join a related pair.
//
// Numbering (SimGrid's): nodes are ordered by level, then position; hosts are level 0 with
// position = rank, and host k has id k; switches get ids 2N-1, 2N-2, ... in that order (N hosts).
// A level-l node's label has L digits, the position written in mixed radix, digit 0 first: digit
// j runs over [0, up[j]) for j < l and [0, down[j]) for j >= l (vectors 0-based). A level-l node
// and a level-(l+1) node are related when their labels agree on every digit but digit l. Cables are numbered in creation order: for every node, level by level,
// for every related parent in position order, for every parallel cable j. Cable c is the two
// directed links 2c (up, SimGrid "_UP") and 2c + 1 (down, "_DOWN").
//
// Routing (d-mod-k, SimGrid's get_local_route): going up from a level-l node, the port is
// (destination position / prod_{i<l} w_i) mod (w_l p_l) (3.32 divides by w_i, not w_i p_i); going down, the scan starts at cable
// (source position mod p) and takes the first child port whose digit matches the destination,
// including SimGrid's loop that keeps scanning from the same port index one level lower.
#pragma once

#include "ir/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace commfit::detail {

struct FatTree {
  // Throws UsageError (naming `spec`) when a parameter is out of range or the tree is too large.
  FatTree(std::vector<std::int64_t> down, std::vector<std::int64_t> up,
          std::vector<std::int64_t> parallel, const std::string& spec);

  std::vector<std::int64_t> down, up, parallel;   // m, w, p per level (SimGrid's vectors)

  std::int64_t hosts() const { return level_begin[1]; }
  std::int64_t cables() const { return static_cast<std::int64_t>(cable_child.size()); }
  std::int64_t link_count() const { return 2 * cables(); }

  // Appends the directed links from host a to host b (a != b).
  void route(std::int64_t a, std::int64_t b, std::vector<Link>& links) const;
  std::string link_name(Link link) const;

  // Node tables, global index g: level_begin[l] <= g < level_begin[l + 1] at level l.
  int levels() const { return static_cast<int>(down.size()); }
  int level_of(std::int64_t g) const;
  std::int64_t position(std::int64_t g) const { return g - level_begin[level_of(g)]; }
  std::int64_t simgrid_id(std::int64_t g) const;
  std::int32_t label(std::int64_t g, int digit) const { return labels[g * levels() + digit]; }
  std::int64_t parent_cable(std::int64_t g, std::int64_t port) const;
  std::int64_t child_cable(std::int64_t g, std::int64_t port) const;
  std::int64_t child_ports(std::int64_t g) const;   // 0 for hosts

  std::vector<std::int64_t> level_begin;   // size L + 2
  std::vector<std::int32_t> labels;        // nodes x L
  std::vector<std::int64_t> parent_base, child_base;   // per level: first entry in the port tables
  std::vector<std::int32_t> parent_port, child_port;   // cable per (node, port)
  std::vector<std::int32_t> cable_child, cable_parent; // global node indices per cable
};

}  // namespace commfit::detail
