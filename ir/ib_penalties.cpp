#include "ir/ib_penalties.h"

#include <algorithm>

namespace commfit {

void IbPenalties::reset(std::size_t nodes, const IbFactors& factors) {
  f_ = factors;
  up_.assign(nodes, {});
  down_.assign(nodes, {});
  in_flows_.assign(nodes, 0);
  seen_.assign(nodes, 0);
  pair_flows_.clear();
  stack_.clear();
  roots_.clear();
}

void IbPenalties::add(std::uint32_t flow, Node from, Node to) {
  up_[from.index()].push_back({flow, to});
  ++down_[to.index()][from];
  ++pair_flows_[pair_key(from, to)];
  ++in_flows_[to.index()];
  roots_.push_back(from);
}

void IbPenalties::remove(std::uint32_t flow, Node from, Node to) {
  auto& down = down_[to.index()];
  if (--down[from] == 0) down.erase(from);
  if (auto it = pair_flows_.find(pair_key(from, to)); --it->second == 0) pair_flows_.erase(it);
  --in_flows_[to.index()];
  std::erase_if(up_[from.index()], [flow](const Out& o) { return o.flow == flow; });
  roots_.push_back(from);
}

// The refreshes of the flows that started or ended at one instant, as one traversal from all
// their senders (SimGrid runs one per flow, in an order of its own; at one instant the counts
// they read differ only by the flows of that instant).
std::size_t IbPenalties::refresh(const std::vector<double>& base_bound, std::vector<double>& bound,
                                 std::vector<std::uint32_t>& changed) {
  ++epoch_;
  stack_.clear();
  auto visit = [&](Node v) {
    if (seen_[v.index()] != epoch_) {
      seen_[v.index()] = epoch_;
      stack_.push_back(v);
    }
  };
  for (Node root : roots_) visit(root);
  roots_.clear();
  std::size_t work = 0;
  while (!stack_.empty()) {
    const Node u = stack_.back();
    stack_.pop_back();
    penalties(u, base_bound, bound, changed);
    for (const Out& c : up_[u.index()]) visit(c.to);
    for (const auto& [src, n] : down_[u.index()]) visit(src);
    work += up_[u.index()].size() + down_[u.index()].size() + 1;
  }
  return work;
}

void IbPenalties::penalties(Node u, const std::vector<double>& base_bound, std::vector<double>& bound,
                            std::vector<std::uint32_t>& changed) {
  const auto& up = up_[u.index()];
  const double n = static_cast<double>(up.size());
  double out = 0;
  for (const Out& c : up) out = std::max(out, n == 1 ? 1.0 : n * f_.bs * (in_flows_[c.to.index()] > 2 ? f_.ys : 1.0));
  for (const Out& c : up) {
    const Node d = c.to;
    const double in = in_flows_[d.index()] != 1
                          ? static_cast<double>(pair_flows_.find(pair_key(u, d))->second) * f_.be * static_cast<double>(down_[d.index()].size())
                          : 1.0;
    const double b = base_bound[c.flow] / std::max(in, out);
    if (b != bound[c.flow]) {
      bound[c.flow] = b;
      changed.push_back(c.flow);
    }
  }
}

}  // namespace commfit
