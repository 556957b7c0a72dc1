#include "passes/node_aggregate.h"

#include "ir/error.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace commfit {

NodeGroups::NodeGroups(const Topology& t, Rank p, Rank size) : group_(static_cast<std::size_t>(p)), local_(static_cast<std::size_t>(p)) {
  commfit_assert(size >= 1 && p >= 0, "NodeGroups", "groups of fewer than one rank");
  commfit_assert(t.node_map().empty() || p <= t.ranks(), "NodeGroups", "more ranks than the node map places");
  // Ranks by node (a stable counting sort: ascending within a node), then cut.
  const Rank slots = t.node_slots(p);
  std::vector<Rank> at(static_cast<std::size_t>(slots) + 1, 0);
  for (Rank r = 0; r < p; ++r) ++at[t.node_of(r).index() + 1];
  for (std::size_t n = 1; n < at.size(); ++n) at[n] += at[n - 1];
  std::vector<Rank> by_node(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) by_node[static_cast<std::size_t>(at[t.node_of(r).index()]++)] = r;
  // Each node's ranks, in order, to groups of `size`; a group is numbered by its lowest rank.
  std::vector<std::pair<Rank, Rank>> cuts;   // (lowest rank, position in by_node of the group's first)
  for (Rank k = 0; k < p;) {
    const Node node = t.node_of(by_node[static_cast<std::size_t>(k)]);
    Rank end = k;
    while (end < p && t.node_of(by_node[static_cast<std::size_t>(end)]) == node) ++end;
    for (Rank g = k; g < end; g += size) cuts.emplace_back(by_node[static_cast<std::size_t>(g)], g);
    k = end;
  }
  std::sort(cuts.begin(), cuts.end());
  start_.push_back(0);
  members_.reserve(static_cast<std::size_t>(p));
  for (const auto& [lowest, first] : cuts) {
    const Rank g = static_cast<Rank>(start_.size()) - 1;
    const Node node = t.node_of(lowest);
    for (Rank k = first; k < p && k < first + size && t.node_of(by_node[static_cast<std::size_t>(k)]) == node; ++k) {
      const Rank r = by_node[static_cast<std::size_t>(k)];
      group_[static_cast<std::size_t>(r)] = g;
      local_[static_cast<std::size_t>(r)] = k - first;
      members_.push_back(r);
    }
    start_.push_back(static_cast<Rank>(members_.size()));
  }
}

namespace {

// Three steps: which rank of a node speaks for it to each other node, and which listens on a node
// for each other node, chosen by bytes (longest processing time first): the node pairs with
// traffic in decreasing bytes (then node order), each to the rank of its node with the fewest
// bytes so far (then the fewest pairs, then the lowest rank). With equal loads that is a round
// robin; with skewed ones no agent carries much more than its share.
class Agents {
 public:
  Agents(const CommMatrix& m, const NodeGroups& groups, Bytes direct_from) : groups_(groups), nodes_(static_cast<std::uint64_t>(groups.count())) {
    m.for_each([&](Rank i, Rank j, Bytes b) {
      const Rank a = groups.group_of(i), c = groups.group_of(j);
      if (a != c && !(direct_from > 0 && b >= direct_from)) pairs_.push_back({key(a, c), b, 0, 0});
    });
    // One entry per node pair, its bytes summed (for_each gives messages in (i, j) order).
    std::sort(pairs_.begin(), pairs_.end(), [](const Pair& x, const Pair& y) { return x.key < y.key; });
    std::size_t n = 0;
    for (const Pair& q : pairs_) {
      if (n > 0 && pairs_[n - 1].key == q.key) pairs_[n - 1].bytes += q.bytes;
      else pairs_[n++] = q;
    }
    pairs_.resize(n);
    // Speakers: per sending node; listeners: per receiving node.
    assign([&](const Pair& q) { return q.key / nodes_; }, &Pair::speaker);
    assign([&](const Pair& q) { return q.key % nodes_; }, &Pair::listener);
  }

  // The speaking and listening ranks for node pair (a, c), a != c, with traffic.
  std::pair<Rank, Rank> of(Rank a, Rank c) const {
    const std::uint64_t k = key(a, c);
    const auto it = std::lower_bound(pairs_.begin(), pairs_.end(), k, [](const Pair& q, std::uint64_t v) { return q.key < v; });
    commfit_assert(it != pairs_.end() && it->key == k, "node_aggregate", "no agents for a node pair with traffic");
    return {it->speaker, it->listener};
  }

 private:
  struct Pair {
    std::uint64_t key;
    Bytes bytes;
    Rank speaker, listener;
  };

  std::uint64_t key(Rank a, Rank c) const { return static_cast<std::uint64_t>(a) * nodes_ + static_cast<std::uint64_t>(c); }

  // For each node (node_of a pair), its pairs by bytes descending, each to its least loaded rank.
  template <class NodeOf>
  void assign(NodeOf node_of, Rank Pair::* agent) {
    std::vector<std::uint32_t> order(pairs_.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      const std::uint64_t nx = node_of(pairs_[x]), ny = node_of(pairs_[y]);
      if (nx != ny) return nx < ny;
      if (pairs_[x].bytes != pairs_[y].bytes) return pairs_[x].bytes > pairs_[y].bytes;
      return pairs_[x].key < pairs_[y].key;
    });
    struct Load {
      Bytes bytes;
      std::int64_t pairs;
      Rank rank;
      bool operator>(const Load& o) const { return std::tie(bytes, pairs, rank) > std::tie(o.bytes, o.pairs, o.rank); }
    };
    std::vector<Load> heap;
    for (std::size_t k = 0; k < order.size();) {
      const Rank node = static_cast<Rank>(node_of(pairs_[order[k]]));
      heap.clear();
      for (Rank r : groups_.members(node)) heap.push_back({0, 0, r});
      std::make_heap(heap.begin(), heap.end(), std::greater<>());
      for (; k < order.size() && static_cast<Rank>(node_of(pairs_[order[k]])) == node; ++k) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        Load& least = heap.back();
        pairs_[order[k]].*agent = least.rank;
        least.bytes += pairs_[order[k]].bytes;
        ++least.pairs;
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
  }

  const NodeGroups& groups_;
  std::uint64_t nodes_;
  std::vector<Pair> pairs_;
};

}  // namespace

Schedule node_aggregate(const CommMatrix& m, const NodeGroups& groups, Bytes direct_from, NodeSteps steps, Bytes ride_below, bool alternate) {
  commfit_assert(groups.ranks() == m.ranks, "node_aggregate", "groups of another number of ranks");
  const Rank p = m.ranks;
  auto group = [&](Rank r) { return groups.group_of(r); };
  // The route src -> a -> c -> dst; with two steps the sender is its own agent, so the network
  // hop comes first.
  const bool two = steps == NodeSteps::two;
  const Phase gather = 0, network = two ? 0 : 1, scatter = network + 1;
  std::optional<Agents> agents;
  if (!two) agents.emplace(m, groups, direct_from);
  Schedule s;
  s.ranks = p;
  s.phases = 3;
  // 1. Messages between nodes, and the large ones.
  m.for_each([&](Rank i, Rank j, Bytes b) {
    const Rank from_node = group(i), to_node = group(j);
    if (i == j || from_node == to_node) return;
    const Piece piece{i, j, 0, b};
    if (direct_from > 0 && b >= direct_from) {
      s.transfers.push_back({network, i, j, piece});
      return;
    }
    if (two && alternate && (from_node + to_node) % 2 == 1) {
      // Gathered first: i -> a, the rank of i's node with j's local index (modulo n_A), in the
      // first phase; a -> j over the network in the second (two steps: the scatter phase).
      const std::span<const Rank> src = groups.members(from_node);
      const Rank a = src[static_cast<std::size_t>(groups.local(j)) % src.size()];
      if (i != a) s.transfers.push_back({gather, i, a, piece});
      s.transfers.push_back({scatter, a, j, piece});
      return;
    }
    // a speaks for from_node to to_node, c listens on to_node.
    const std::span<const Rank> dst = groups.members(to_node);
    const auto [a, c] = two ? std::pair{i, dst[static_cast<std::size_t>(groups.local(i)) % dst.size()]} : agents->of(from_node, to_node);
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
    if (group(t.from) == group(t.to)) hops.push_back(key(t.phase, t.from, t.to));
  std::sort(hops.begin(), hops.end());
  auto has = [&](Phase k, Rank i, Rank j) { return std::binary_search(hops.begin(), hops.end(), key(k, i, j)); };
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j || group(i) != group(j)) return;
    Phase k = b >= ride_below ? network : has(scatter, i, j) ? scatter : has(gather, i, j) ? gather : network;
    // Alternating, a hop gathered first may share the network phase: a message that does not ride
    // goes in the scatter phase then, unless a hop is there too.
    if (b >= ride_below && two && alternate && has(network, i, j) && !has(scatter, i, j)) k = scatter;
    s.transfers.push_back({k, i, j, Piece{i, j, 0, b}});
  });
  s.copies = local_copies(m);
  canonicalize(s);
  drop_empty_phases(s);
  return s;
}

}  // namespace commfit
