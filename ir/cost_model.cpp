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

}  // namespace commfit
