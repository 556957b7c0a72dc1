#include "passes/node_aggregate.h"

#include "ir/error.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace commfit {

NodeSpan node_span(Rank node, Rank ranks_per_node, Rank p) {
  const Rank first = node * ranks_per_node;
  return {first, std::min(ranks_per_node, p - first)};
}

Schedule node_aggregate(const CommMatrix& m, Rank ranks_per_node, Bytes direct_from, NodeSteps steps, Bytes ride_below) {
  commfit_assert(ranks_per_node >= 1, "node_aggregate", "fewer than one rank per node");
  const Rank p = m.ranks, per = ranks_per_node;
  // The route src -> a -> c -> dst; with two steps the sender is its own agent, so the network
  // hop comes first.
  const bool two = steps == NodeSteps::two;
  const Phase gather = 0, network = two ? 0 : 1, scatter = network + 1;
  Schedule s;
  s.ranks = p;
  s.phases = 3;
  // 1. Messages between nodes, and the large ones.
  m.for_each([&](Rank i, Rank j, Bytes b) {
    const Rank from_node = i / per, to_node = j / per;
    if (i == j || from_node == to_node) return;
    const Piece piece{i, j, 0, b};
    if (direct_from > 0 && b >= direct_from) {
      s.transfers.push_back({network, i, j, piece});
      return;
    }
    const NodeSpan src = node_span(from_node, per, p), dst = node_span(to_node, per, p);
    const Rank a = two ? i : src.first + to_node % src.n;                                  // speaks for from_node to to_node
    const Rank c = two ? dst.first + (i - src.first) % dst.n : dst.first + from_node % dst.n;   // listens on to_node
    if (i != a) s.transfers.push_back({gather, i, a, piece});
    s.transfers.push_back({network, a, c, piece});
    if (c != j) s.transfers.push_back({scatter, c, j, piece});
  });
  // 2. Small messages inside a node ride with a hop between the same two ranks (scatter first,
  // then gather), so that they travel in its message; the others go in the network phase.
  std::vector<std::uint64_t> hops;
  hops.reserve(s.transfers.size());
  auto key = [p](Phase k, Rank i, Rank j) { return (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(i)) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(j); };
  for (const Transfer& t : s.transfers)
    if (t.from / per == t.to / per) hops.push_back(key(t.phase, t.from, t.to));
  std::sort(hops.begin(), hops.end());
  auto has = [&](Phase k, Rank i, Rank j) { return std::binary_search(hops.begin(), hops.end(), key(k, i, j)); };
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j || i / per != j / per) return;
    const Phase k = b >= ride_below ? network : has(scatter, i, j) ? scatter : has(gather, i, j) ? gather : network;
    s.transfers.push_back({k, i, j, Piece{i, j, 0, b}});
  });
  s.copies = local_copies(m);
  canonicalize(s);
  drop_empty_phases(s);
  return s;
}

}  // namespace commfit
