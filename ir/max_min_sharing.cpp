#include "ir/max_min_sharing.h"

#include <algorithm>
#include <functional>

namespace commfit {

void MaxMinSharing::reset(std::vector<double> capacity) {
  capacity_ = std::move(capacity);
  const std::size_t n = capacity_.size();
  cap_.assign(n, 0);
  users_.assign(n, 0);
  weights_.assign(n, 0);
  version_.assign(n, 0);
  slot_.assign(n, 0);
}

std::size_t MaxMinSharing::solve(std::span<const std::uint32_t> flows, const std::vector<std::vector<std::int32_t>>& routes,
                                 const std::vector<double>& bound, const std::vector<double>& penalty, std::vector<double>& rate) {
  // The resources in use, and the active flows of each (CSR over `touched_`).
  touched_.clear();
  std::size_t total = 0;
  for (std::uint32_t f : flows)
    for (std::int32_t q : routes[f]) {
      if (users_[q]++ == 0) {
        slot_[q] = static_cast<std::uint32_t>(touched_.size());
        touched_.push_back(q);
        cap_[q] = capacity_[static_cast<std::size_t>(q)];
        weights_[q] = 0;
      }
      weights_[q] += 1 / penalty[f];
      ++total;
    }
  res_start_.assign(touched_.size() + 1, 0);
  for (std::size_t k = 0; k < touched_.size(); ++k) res_start_[k + 1] = res_start_[k] + static_cast<std::size_t>(users_[touched_[k]]);
  res_flows_.resize(total);
  fill_.assign(res_start_.begin(), res_start_.end() - 1);
  for (std::size_t i = 0; i < flows.size(); ++i)
    for (std::int32_t q : routes[flows[i]]) res_flows_[fill_[slot_[q]]++] = static_cast<std::uint32_t>(i);
  // Levels, as SimGrid's max-min solver: a flow limited at level L moves at L / its penalty
  // (1 without RTT weighting), and a resource's level is its capacity over the sum of 1 / penalty
  // of its unfixed flows. The flows' own bounds as levels, tightest first (ties by position:
  // deterministic): a heap, since most flows are fixed by a resource before their bound surfaces.
  by_bound_.resize(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) by_bound_[i] = static_cast<std::uint32_t>(i);
  const auto bound_level = [&](std::uint32_t i) { return bound[flows[i]] * penalty[flows[i]]; };
  const auto looser = [&](std::uint32_t a, std::uint32_t b) {
    return bound_level(a) != bound_level(b) ? bound_level(a) > bound_level(b) : a > b;
  };
  std::make_heap(by_bound_.begin(), by_bound_.end(), looser);
  heap_.clear();
  auto push_share = [&](std::int32_t q) {
    heap_.push_back({cap_[q] / weights_[q], q, version_[q]});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  };
  for (std::int32_t q : touched_) push_share(q);
  fixed_.assign(flows.size(), 0);
  // A fix takes a level <= every resource's level, so no level ever decreases: an entry's key
  // is a lower bound of its resource's level, and a stale entry is refreshed only when it
  // surfaces (one push per stale pop, not one per fix and resource).
  std::size_t unfixed = flows.size();
  auto fix = [&](std::uint32_t i, double x) {
    const std::uint32_t f = flows[i];
    fixed_[i] = 1;
    --unfixed;
    rate[f] = x;
    for (std::int32_t q : routes[f]) {
      cap_[q] = std::max(0.0, cap_[q] - x);
      weights_[q] = std::max(0.0, weights_[q] - 1 / penalty[f]);
      ++version_[q];
      --users_[q];
    }
  };
  while (unfixed > 0) {
    while (!by_bound_.empty() && fixed_[by_bound_.front()]) {
      std::pop_heap(by_bound_.begin(), by_bound_.end(), looser);
      by_bound_.pop_back();
    }
    while (!heap_.empty() && (users_[heap_.front().q] == 0 || heap_.front().version != version_[heap_.front().q])) {
      const std::int32_t q = heap_.front().q;
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
      if (users_[q] > 0) push_share(q);
    }
    const bool have_bound = !by_bound_.empty();
    if (heap_.empty() && !have_bound) break;
    if (have_bound && (heap_.empty() || bound_level(by_bound_.front()) <= heap_.front().share)) {
      fix(by_bound_.front(), bound[flows[by_bound_.front()]]);
      continue;
    }
    const Level top = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
    const std::size_t k = slot_[top.q];
    for (std::size_t j = res_start_[k]; j < res_start_[k + 1]; ++j)
      if (!fixed_[res_flows_[j]]) fix(res_flows_[j], top.share / penalty[flows[res_flows_[j]]]);
  }
  for (std::int32_t q : touched_) users_[q] = 0;
  return total + flows.size();
}

}  // namespace commfit
