// Matchings of the bipartite multigraph of a decomposition: p senders on one side, p receivers on
// the other, one edge per piece (edge e joins sender from[e] and receiver to[e]; parallel edges
// are distinct pieces). One state, the edge that covers each port (ir/types.h: Port::sender(u),
// Port::receiver(p, v)), and the two searches the passes need, each in one place:
//  - augment(): one breadth-first alternating path from an uncovered root on either side, which
//    ends at a free port or at a covered one that may give its edge up (the Mendelsohn-Dulmage
//    exchange; Lovász-Plummer §1.4). A matching that covers a set of ports is found this way if
//    one exists: the profile split (passes/profile_split.cpp) covers the ports of largest degree.
//  - hopcroft_karp(): Hopcroft-Karp (SIAM J. Comput. 2(4), 1973) from the current matching: the
//    breadth-first layers from the free senders, then vertex-disjoint shortest augmenting paths
//    along them, until no path is left; true when every sender is matched. The bottleneck peeling
//    of passes/quantised_split.cpp tests each size threshold with it, warm-started.
// Every search tries a port's edges in the order the constructor was given (its `order`), so the
// matchings are deterministic. Neither search allocates per call beyond its scratch.
#pragma once

#include "ir/error.h"
#include "ir/types.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace commfit {

class BipartiteMatching {
 public:
  using Edge = std::int64_t;
  static constexpr Edge kNone = -1;

  // Whether a search may use an edge; `stop`: neither this edge nor the ones after it in its
  // port's list (the lists are in the caller's order, which a threshold may cut).
  enum class Use { yes, no, stop };

  // The edges in `order` (each once) make every port's list, in that order.
  BipartiteMatching(Rank p, std::vector<Rank> from, std::vector<Rank> to, const std::vector<Edge>& order)
      : p_(p), from_(std::move(from)), to_(std::move(to)), adj_(2 * static_cast<std::size_t>(p)), match_(adj_.size(), kNone),
        seen_(adj_.size(), 0), dist_(static_cast<std::size_t>(p), -1), it_(static_cast<std::size_t>(p), 0) {
    commfit_assert(from_.size() == to_.size(), "BipartiteMatching", "edges with one end");
    for (Edge e : order) {
      adj_[sender_port(e).index()].push_back(e);
      adj_[receiver_port(e).index()].push_back(e);
    }
  }

  // Ports 0 .. ports() - 1: the senders, then the receivers.
  std::size_t ports() const { return match_.size(); }
  // The ranks edge e joins, and their ports.
  Rank sender(Edge e) const { return from_[static_cast<std::size_t>(e)]; }
  Rank receiver(Edge e) const { return to_[static_cast<std::size_t>(e)]; }
  Port sender_port(Edge e) const { return Port::sender(from_[static_cast<std::size_t>(e)]); }
  Port receiver_port(Edge e) const { return Port::receiver(p_, to_[static_cast<std::size_t>(e)]); }
  // The edge covering a port, or kNone.
  Edge match(Port port) const { return match_[port.index()]; }
  // The whole matching, port by port (to put back later with restore()).
  const std::vector<Edge>& matching() const { return match_; }
  void restore(const std::vector<Edge>& matching) { match_ = matching; }
  void clear() { std::fill(match_.begin(), match_.end(), kNone); }

  // e covers its two ports (both free).
  void take(Edge e) {
    match_[sender_port(e).index()] = e;
    match_[receiver_port(e).index()] = e;
  }
  // e, which covers its ports, no longer does.
  void drop(Edge e) {
    match_[sender_port(e).index()] = kNone;
    match_[receiver_port(e).index()] = kNone;
  }

  // Forgets the edges `keep` rejects, in `order` and in every port's list.
  template <class Keep>
  void prune(std::vector<Edge>& order, Keep keep) {
    auto drop_from = [&](std::vector<Edge>& list) { list.erase(std::remove_if(list.begin(), list.end(), [&](Edge e) { return !keep(e); }), list.end()); };
    drop_from(order);
    for (auto& list : adj_) drop_from(list);
  }

  // One alternating path from the uncovered port `root`, breadth-first, over the edges `usable`
  // accepts: it ends at a free port, or at a covered port x2 with may_leave(x2), which then gives
  // its edge up. The path is flipped; false when no such path exists (the matching is unchanged).
  template <class Usable, class MayLeave>
  bool augment(Port root, Usable usable, MayLeave may_leave) {
    ++stamp_;
    queue_.assign(1, root);
    via_.assign(1, kNone);
    parent_.assign(1, -1);
    seen_[root.index()] = stamp_;
    for (std::size_t i = 0; i < queue_.size(); ++i) {
      const Port x = queue_[i];
      for (Edge e : adj_[x.index()]) {
        if (match_[x.index()] == e || !usable(e)) continue;
        const Port y = other(e, x);
        const Edge held = match_[y.index()];
        const Port x2 = held == kNone ? Port{0} : other(held, y);
        if (held == kNone || may_leave(x2)) {
          if (held != kNone) match_[x2.index()] = kNone;   // x2 may go without
          Edge edge = e;
          for (std::int64_t at = static_cast<std::int64_t>(i);;) {
            take(edge);
            if (parent_[static_cast<std::size_t>(at)] < 0) break;
            edge = via_[static_cast<std::size_t>(at)];
            at = parent_[static_cast<std::size_t>(at)];
          }
          return true;
        }
        if (seen_[x2.index()] == stamp_) continue;
        seen_[x2.index()] = stamp_;
        queue_.push_back(x2);
        via_.push_back(e);
        parent_.push_back(static_cast<std::int64_t>(i));
      }
    }
    return false;
  }

  // Hopcroft-Karp from the current matching over the edges `use` allows; true when every sender
  // is matched.
  template <class UseOf>
  bool hopcroft_karp(UseOf use) {
    while (true) {
      // The layers: breadth-first from the free senders over alternating paths.
      senders_.clear();
      for (Rank u = 0; u < p_; ++u) {
        const bool free = match_[Port::sender(u).index()] == kNone;
        dist_[static_cast<std::size_t>(u)] = free ? 0 : -1;
        if (free) senders_.push_back(u);
      }
      if (senders_.empty()) return true;
      bool reachable = false;
      for (std::size_t i = 0; i < senders_.size(); ++i) {
        const Rank u = senders_[i];
        for (Edge e : adj_[Port::sender(u).index()]) {
          const Use how = use(e);
          if (how == Use::stop) break;
          if (how == Use::no) continue;
          const Edge m = match_[receiver_port(e).index()];
          if (m == kNone) {
            reachable = true;
            continue;
          }
          const Rank u2 = from_[static_cast<std::size_t>(m)];
          if (dist_[static_cast<std::size_t>(u2)] < 0) {
            dist_[static_cast<std::size_t>(u2)] = dist_[static_cast<std::size_t>(u)] + 1;
            senders_.push_back(u2);
          }
        }
      }
      if (!reachable) return false;
      // Shortest augmenting paths along the layers, vertex-disjoint.
      std::fill(it_.begin(), it_.end(), 0);
      bool grew = false;
      for (Rank u = 0; u < p_; ++u)
        if (match_[Port::sender(u).index()] == kNone && layered_path(u, use)) grew = true;
      if (!grew) return false;
    }
  }

 private:
  Port other(Edge e, Port x) const { return x == sender_port(e) ? receiver_port(e) : sender_port(e); }

  // One augmenting path from the free sender `root` along the layers (an iterative depth-first
  // search; a sender it leaves without a path is dead for this round).
  template <class UseOf>
  bool layered_path(Rank root, UseOf use) {
    stack_.assign(1, root);
    path_.clear();
    while (!stack_.empty()) {
      const Rank u = stack_.back();
      const auto& list = adj_[Port::sender(u).index()];
      std::size_t& i = it_[static_cast<std::size_t>(u)];
      bool down = false;
      for (; i < list.size(); ++i) {
        const Edge e = list[i];
        const Use how = use(e);
        if (how == Use::stop) {
          i = list.size();
          break;
        }
        if (how == Use::no) continue;
        const Edge m = match_[receiver_port(e).index()];
        if (m == kNone) {   // a free receiver: flip the path
          path_.push_back(e);
          for (std::size_t level = 0; level < path_.size(); ++level) {
            const Edge f = path_[level];
            match_[Port::sender(stack_[level]).index()] = f;
            match_[receiver_port(f).index()] = f;
          }
          return true;
        }
        const Rank u2 = from_[static_cast<std::size_t>(m)];
        if (dist_[static_cast<std::size_t>(u2)] == dist_[static_cast<std::size_t>(u)] + 1) {
          path_.push_back(e);
          stack_.push_back(u2);
          ++i;   // if u2 fails, u goes on with its next edge
          down = true;
          break;
        }
      }
      if (down) continue;
      dist_[static_cast<std::size_t>(u)] = -1;   // a dead end for this round
      stack_.pop_back();
      if (!path_.empty()) path_.pop_back();
    }
    return false;
  }

  Rank p_;
  std::vector<Rank> from_, to_;
  std::vector<std::vector<Edge>> adj_;   // per port, its edges in the caller's order
  std::vector<Edge> match_;              // per port, the edge covering it
  // augment()'s scratch: the breadth-first queue of ports, the edge and queue entry each came by.
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;
  std::vector<Port> queue_;
  std::vector<Edge> via_;
  std::vector<std::int64_t> parent_;
  // hopcroft_karp()'s scratch: each sender's layer and next edge, the queue, the current path.
  std::vector<std::int64_t> dist_;
  std::vector<std::size_t> it_;
  std::vector<Rank> senders_, stack_;
  std::vector<Edge> path_;
};

}  // namespace commfit
