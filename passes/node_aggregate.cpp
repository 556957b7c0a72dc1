#include "passes/node_aggregate.h"

#include "ir/error.h"

#include <algorithm>

namespace commfit {

NodeSpan node_span(Rank node, Rank ranks_per_node, Rank p) {
  const Rank first = node * ranks_per_node;
  return {first, std::min(ranks_per_node, p - first)};
}

Schedule node_aggregate(const CommMatrix& m, Rank ranks_per_node, Bytes direct_from, NodeSteps steps) {
  commfit_assert(ranks_per_node >= 1, "node_aggregate", "fewer than one rank per node");
  const Rank p = m.ranks, per = ranks_per_node;
  Schedule s;
  s.ranks = p;
  s.phases = 3;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    const Piece piece{i, j, 0, b};
    const Rank from_node = i / per, to_node = j / per;
    const NodeSpan src = node_span(from_node, per, p), dst = node_span(to_node, per, p);
    // The route src -> a -> c -> dst; with two steps the sender is its own agent, so the
    // network hop comes first.
    const bool two = steps == NodeSteps::two;
    const Phase network = two ? 0 : 1;
    if (from_node == to_node || (direct_from > 0 && b >= direct_from)) {
      s.transfers.push_back({network, i, j, piece});
      return;
    }
    const Rank a = two ? i : src.first + to_node % src.n;                                  // speaks for from_node to to_node
    const Rank c = two ? dst.first + (i - src.first) % dst.n : dst.first + from_node % dst.n;   // listens on to_node
    if (i != a) s.transfers.push_back({0, i, a, piece});
    s.transfers.push_back({network, a, c, piece});
    if (c != j) s.transfers.push_back({network + 1, c, j, piece});
  });
  s.copies = local_copies(m);
  canonicalize(s);
  drop_empty_phases(s);
  return s;
}

}  // namespace commfit
