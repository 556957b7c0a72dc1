#include "ir/cost_model.h"

#include <algorithm>

namespace commfit {

double lower_bound_s(const TrafficStats& s, const CostOptions& c) {
  return static_cast<double>(s.h) * c.tau_s + static_cast<double>(s.t) / c.bandwidth_Bps;
}

std::vector<Bytes> phase_max_message(const Plan& plan) {
  std::vector<Bytes> out(plan.manifest.phases, 0);
  for (const RankSchedule& r : plan.ranks) {
    // Steps are in (phase, op, peer) order: the sends to one peer in one phase are adjacent.
    Bytes run = 0;
    const Step* prev = nullptr;
    for (const Step& s : r.steps) {
      if (s.op != Op::send) continue;
      if (prev && prev->phase == s.phase && prev->peer == s.peer) run += s.bytes;
      else run = s.bytes;
      out[s.phase] = std::max(out[s.phase], run);
      prev = &s;
    }
  }
  return out;
}

double synchronous_estimate_s(const Plan& plan, const CostOptions& c) {
  double total = 0;
  for (Bytes b : phase_max_message(plan))
    if (b > 0) total += c.tau_s + static_cast<double>(b) / c.bandwidth_Bps;
  return total;
}

double async_estimate_s(const Plan& plan, const CostOptions& c) {
  std::vector<std::int64_t> in_msgs(plan.ranks.size(), 0);
  std::vector<Bytes> in_bytes(plan.ranks.size(), 0);
  double worst = 0;
  for (const RankSchedule& r : plan.ranks) {
    std::int64_t out_msgs = 0;
    Bytes out_bytes = 0;
    const Step* prev = nullptr;
    for (const Step& s : r.steps) {
      if (s.op != Op::send) continue;
      if (!prev || prev->phase != s.phase || prev->peer != s.peer) ++out_msgs;
      out_bytes += s.bytes;
      prev = &s;
    }
    prev = nullptr;
    for (const Step& s : r.steps) {
      if (s.op != Op::recv) continue;
      if (!prev || prev->phase != s.phase || prev->peer != s.peer) ++in_msgs[r.rank];
      in_bytes[r.rank] += s.bytes;
      prev = &s;
    }
    worst = std::max(worst, static_cast<double>(out_msgs) * c.tau_s + static_cast<double>(out_bytes) / c.bandwidth_Bps);
  }
  for (std::size_t r = 0; r < plan.ranks.size(); ++r)
    worst = std::max(worst, static_cast<double>(in_msgs[r]) * c.tau_s + static_cast<double>(in_bytes[r]) / c.bandwidth_Bps);
  return worst;
}

}  // namespace commfit
