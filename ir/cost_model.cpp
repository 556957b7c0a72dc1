#include "ir/cost_model.h"

#include <algorithm>

namespace commfit {

double lower_bound_s(const TrafficStats& s, const CostOptions& c) {
  return static_cast<double>(s.h) * c.tau_s + static_cast<double>(s.t) / c.bandwidth_Bps;
}

std::vector<Bytes> phase_max_piece(const Plan& plan) {
  std::vector<Bytes> out(plan.manifest.phases, 0);
  for (const RankSchedule& r : plan.ranks)
    for (const Step& s : r.steps)
      if (s.op == Op::send) out[s.phase] = std::max(out[s.phase], s.bytes);
  return out;
}

double synchronous_estimate_s(const Plan& plan, const CostOptions& c) {
  double total = 0;
  for (Bytes b : phase_max_piece(plan))
    if (b > 0) total += c.tau_s + static_cast<double>(b) / c.bandwidth_Bps;
  return total;
}

}  // namespace commfit
