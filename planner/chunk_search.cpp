#include "planner/chunk_search.h"

#include "passes/profile_split.h"
#include "passes/quantised_split.h"
#include "passes/shave.h"

#include <algorithm>
#include <cmath>

namespace commfit {
namespace {

// The chunk sizes tried, as multiples of q* = sqrt(tau t / (mu h)), the size at which the
// quantised schedule is within 2 LB; the last (1e300) is no split at all.
constexpr double kChunkFactors[] = {0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1e300};

// First fit keeps a colour table of 2 p (D + slack) entries: sizes that would pass ~2^27 are skipped.
constexpr double kMaxColourTable = 0x1p27;

// Bottleneck peeling (exactly D min-bottleneck perfect matchings) costs about p D^2: skipped above
// 2^23 (a hot receiver at p = 256, D = 255 takes 1.7 s).
constexpr double kMaxPeelingWork = 0x1p23;

// The profile split is tried only where h <= 64, messages x h <= 2^22 (its colourings) and
// 2 p h^3 <= 2^28 (its template checks, about h^3 per port: 0.5 s at p = 1024, h = 16; 2 s at
// h = 32; 6 s at h = 48; 3 s at p = 4096, h = 16).
constexpr std::int64_t kMaxProfileDegree = 64;
constexpr double kMaxProfileColouring = 0x1p22;
constexpr double kMaxProfileTemplates = 0x1p28;

}  // namespace

Chunked choose_chunk(const CommMatrix& m, const CostOptions& c, PassRunner& passes) {
  const TrafficStats st = traffic_stats(m);
  if (st.h == 0) return {1, 0, "first-fit", passes.run(Pass::quantised_split, [&] { return quantised_split(m, 1); })};
  const double mu = 1.0 / c.bandwidth_Bps;
  const double qstar = c.tau_s > 0 ? std::sqrt(c.tau_s * static_cast<double>(st.t) / (mu * static_cast<double>(st.h))) : 1.0;
  Chunked best_plan;
  double best = -1;
  // Every candidate is shaved, then priced; the first of equal cost is kept.
  auto consider_plan = [&](Bytes q, std::int64_t slack, const char* colouring, Pass pass, auto&& make) {
    Schedule s = passes.run(pass, make);
    s = passes.run(Pass::shave, [&] { return shave(s); });
    const double cost = schedule_estimate_s(s, c);
    if (best < 0 || cost < best) {
      best = cost;
      best_plan = {q, slack, colouring, std::move(s)};
    }
  };
  // 1. Each chunk size, coloured with exactly D colours by first fit (+ Kempe flips), by first
  //    fit alone with D - 1 spare colours (<= 2D - 1), and by bottleneck peeling (exactly D).
  Bytes last_q = 0;
  for (double f : kChunkFactors) {
    const Bytes q = f > 1e200 ? st.max_message : static_cast<Bytes>(std::clamp(qstar * f, 1.0, static_cast<double>(st.max_message)));
    if (q == last_q) continue;
    last_q = q;
    const std::int64_t d = quantised_degree(m, q);
    for (const std::int64_t slack : {std::int64_t{0}, std::max<std::int64_t>(d - 1, 0)}) {
      if (2.0 * m.ranks * static_cast<double>(d + slack) > kMaxColourTable) continue;
      if (slack > 0 && d <= 1) continue;
      consider_plan(q, slack, "first-fit", Pass::quantised_split, [&] { return quantised_split(m, q, slack); });
    }
    if (static_cast<double>(m.ranks) * static_cast<double>(d) * static_cast<double>(d) <= kMaxPeelingWork)
      consider_plan(q, 0, "bottleneck", Pass::quantised_split, [&] { return quantised_split_bottleneck(m, q); });
  }
  // 2. The profile split of the whole messages (h to h + 2 phases), told the cost to beat.
  const double h = static_cast<double>(st.h);
  if (st.h <= kMaxProfileDegree && static_cast<double>(st.messages) * h <= kMaxProfileColouring &&
      2.0 * m.ranks * h * h * h <= kMaxProfileTemplates) {
    ProfileSplitOptions po;
    po.cost = c;
    po.to_beat_s = best;
    consider_plan(st.max_message, 0, "profile", Pass::profile_split, [&] { return profile_split(m, po); });
  }
  commfit_assert(best >= 0, "quantised", "no chunk size fits the colour table limit");
  return best_plan;
}

}  // namespace commfit
