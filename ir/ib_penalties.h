// SimGrid's InfiniBand penalties (network_ib, after Vienne) as the network model applies them
// (ir/network_sim.h, network ib): a sender with n > 1 flows out pays n Bs (times ys when one of
// its receivers has more than 2 flows in); a flow into a receiver with c > 1 flows in pays (flows
// from this sender) Be (distinct senders); the larger of the two divides the flow's bound. Senders
// and receivers are nodes (hosts). Step by step as SimGrid: a flow is registered when it starts
// and removed when it arrives; after either, the penalties are recomputed for the nodes connected
// to the sender through active flows (update_IB_factors_rec). Flows a finished flow no longer
// connects keep their penalties until the next update reaches them: SimGrid's behaviour, which
// makes hot receivers slower than a fresh recomputation would.
#pragma once

#include "ir/network_options.h"
#include "ir/types.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace commfit {

class IbPenalties {
 public:
  // Nodes numbered below `nodes`; the factors Be, Bs, ys.
  void reset(std::size_t nodes, const IbFactors& factors);

  void add(std::uint32_t flow, Node from, Node to);
  void remove(std::uint32_t flow, Node from, Node to);
  // Flows were added or removed since the last refresh.
  bool pending() const { return !roots_.empty(); }

  // The penalties of the flows out of every node the changes reach: bound[f] = base_bound[f] /
  // penalty, and each flow whose bound changed appended to `changed`, in the order they changed.
  // Returns the work done (nodes and flows visited), which the simulation counts against its limit.
  std::size_t refresh(const std::vector<double>& base_bound, std::vector<double>& bound, std::vector<std::uint32_t>& changed);

 private:
  struct Out {
    std::uint32_t flow;
    Node to;
  };
  static std::uint64_t pair_key(Node from, Node to) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(to.value())) << 32) | static_cast<std::uint32_t>(from.value());
  }
  // compute_IB_factors(u): the bounds of u's flows out.
  void penalties(Node u, const std::vector<double>& base_bound, std::vector<double>& bound, std::vector<std::uint32_t>& changed);

  IbFactors f_;
  std::vector<std::vector<Out>> up_;                              // each node's flows out, in start order
  std::vector<std::map<Node, std::int64_t>> down_;                // each node's flows in, per sender
  std::vector<std::int64_t> in_flows_;                            // each node's flows in
  std::unordered_map<std::uint64_t, std::int64_t> pair_flows_;    // flows per (sender, receiver)
  std::vector<std::uint64_t> seen_;
  std::uint64_t epoch_ = 0;
  std::vector<Node> stack_, roots_;
};

}  // namespace commfit
