// Strategy "direct" (Ranka-Wang §4-6): every message goes whole from src to dst.
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "passes/decompose_rs_nlp.h"
#include "passes/heap_split.h"
#include "passes/link_check.h"
#include "passes/profile_split.h"
#include "passes/quantised_split.h"
#include "passes/shave.h"
#include "planner/passes.h"
#include "planner/strategies.h"

#include <algorithm>
#include <cmath>

namespace commfit {
namespace {

double schedule_cost(const Schedule& s, const CostOptions& c) {
  double total = 0;
  for (Bytes b : phase_max_piece(s))
    if (b > 0) total += c.tau_s + static_cast<double>(b) / c.bandwidth_Bps;
  return total;
}

// The quantised split's chunk size and colouring: the cheapest under the synchronous cost model
// of a few chunk sizes around q* = sqrt(tau t / (mu h)) (where the 2 LB bound holds) up to no
// split at all, each coloured with exactly D colours by first fit (+ Kempe flips), by first fit
// alone (<= 2D - 1) and by bottleneck peeling (exactly D), each then shaved (passes/shave.h);
// and the profile split of the whole messages (h to h + 2 phases, passes/profile_split.h).
// Sizes whose colour table would pass ~2^27 entries are skipped; so is bottleneck peeling where
// p·D², a measure of its work, passes 2^23 (e.g. a hot receiver at p = 256, D = 255: 1.7 s), and
// the profile split where h > 64, messages x h passes 2^22 (its colourings) or 2p h^3 passes 2^28
// (its template checks, about h^3 per port: 0.5 s at p = 1024, h = 16; 2 s at h = 32; 6 s at
// h = 48; 3 s at p = 4096, h = 16).
struct Chunked {
  Bytes q = 1;
  std::int64_t slack = 0;
  const char* colouring = "first-fit";
  Schedule schedule;
};

Chunked choose_chunk(const CommMatrix& m, const CostOptions& c, PassRunner& passes) {
  const TrafficStats st = traffic_stats(m);
  if (st.h == 0) return {1, 0, "first-fit", passes.run("quantised-split", [&] { return quantised_split(m, 1); })};
  const double mu = 1.0 / c.bandwidth_Bps;
  const double qstar = c.tau_s > 0 ? std::sqrt(c.tau_s * static_cast<double>(st.t) / (mu * static_cast<double>(st.h))) : 1.0;
  Chunked best_plan;
  double best = -1;
  auto consider_plan = [&](Bytes q, std::int64_t slack, const char* colouring, const char* pass, auto&& make) {
    Schedule s = passes.run(pass, make);
    s = passes.run("shave", [&] { return shave(s); });
    const double cost = schedule_cost(s, c);
    if (best < 0 || cost < best) {
      best = cost;
      best_plan = {q, slack, colouring, std::move(s)};
    }
  };
  Bytes last_q = 0;
  for (double f : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1e300}) {
    const Bytes q = f > 1e200 ? st.max_message : static_cast<Bytes>(std::clamp(qstar * f, 1.0, static_cast<double>(st.max_message)));
    if (q == last_q) continue;
    last_q = q;
    const std::int64_t d = quantised_degree(m, q);
    for (const std::int64_t slack : {std::int64_t{0}, std::max<std::int64_t>(d - 1, 0)}) {
      if (2.0 * m.ranks * static_cast<double>(d + slack) > static_cast<double>(1 << 27)) continue;
      if (slack > 0 && d <= 1) continue;
      consider_plan(q, slack, "first-fit", "quantised-split", [&] { return quantised_split(m, q, slack); });
    }
    if (static_cast<double>(m.ranks) * static_cast<double>(d) * static_cast<double>(d) <= static_cast<double>(1 << 23))
      consider_plan(q, 0, "bottleneck", "quantised-split", [&] { return quantised_split_bottleneck(m, q); });
  }
  const double h = static_cast<double>(st.h);
  if (st.h <= 64 && static_cast<double>(st.messages) * h <= 0x1p22 && 2.0 * m.ranks * h * h * h <= 0x1p28) {
    ProfileSplitOptions po;
    po.cost = c;
    po.to_beat_s = best;
    consider_plan(st.max_message, 0, "profile", "profile-split", [&] { return profile_split(m, po); });
  }
  commfit_assert(best >= 0, "quantised", "no chunk size fits the colour table limit");
  return best_plan;
}

// Link check (Ranka-Wang §5) as a repair of a node-contention-free schedule: conflicting
// transfers move to other phases; the manifest records the phases it added.
Schedule repair_links(const Schedule& s, const PlanOptions& o, PassRunner& passes, StrategyOutput& out) {
  LinkCheckReport report;
  passes.rules.contention = Contention::link;
  Schedule fixed = passes.run("link-check", [&] { return link_check(s, o.topology, &report); });
  out.options["link_check_added_phases"] = static_cast<std::int64_t>(report.phases_out) - static_cast<std::int64_t>(report.phases_in);
  out.options["link_phase_lower_bound"] = report.phase_lower_bound;
  return fixed;
}

}  // namespace

StrategyOutput strategy_direct(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  if (!has_entry(algorithm_table(), o.algorithm))
    throw UsageError("unknown algorithm \"" + o.algorithm + "\" (choose from: " + entry_names(algorithm_table()) + ")");
  // On a machine with shared links every phase must also be link-disjoint (Ranka-Wang §5); the
  // verifier's link rule includes the node rule.
  const bool links = o.topology.link_count() > 0;
  StrategyOutput out;
  out.contention = links ? Contention::link : Contention::node;
  passes.rules.contention = Contention::node;   // until a pass has made the phases link-disjoint
  out.options["algorithm"] = o.algorithm;
  out.options["seed"] = o.seed;
  const std::string& a = o.algorithm;
  // The Ranka-Wang family: RS_N with Locate_Pair (P), Check_Path/Mark_Path (L), heaps (H).
  if (a.rfind("rs_n", 0) == 0) {
    const CompressedMatrix ccom = passes.run("compress", [&] { return compress(m, o.seed); });
    if (a == "rs_nlph" || a == "rs_nlh") {
      passes.rules.contention = out.contention;
      HeapSplitOptions h;
      h.pairwise = a == "rs_nlph";
      h.link_check = true;
      h.cost = o.cost;
      h.seed = o.seed;
      HeapSplitReport report;
      out.schedule = passes.run("heap-split", [&] { return heap_split(ccom, m, o.topology, h, &report); });
      out.options["lambda"] = report.sweep[report.chosen].lambda;
      out.options["pairs_located"] = report.pairs_located;
      return out;
    }
    const RsNlpOptions r{.pairwise = a == "rs_np" || a == "rs_nlp", .link_check = a == "rs_nl" || a == "rs_nlp", .seed = o.seed};
    RsNlpReport report;
    if (r.link_check) passes.rules.contention = out.contention;
    out.schedule = passes.run("decompose", [&] { return decompose_rs_nlp(ccom, m, o.topology, r, &report); });
    if (r.pairwise) out.options["pairs_located"] = report.pairs_located;
    if (!r.link_check && links) out.schedule = repair_links(out.schedule, o, passes, out);
    return out;
  }
  if (a == "quantised") {
    Chunked chunked = o.chunk ? Chunked{o.chunk, 0, "first-fit", passes.run("quantised-split", [&] { return quantised_split(m, o.chunk); })}
                              : choose_chunk(m, o.cost, passes);
    out.schedule = std::move(chunked.schedule);
    out.options["chunk"] = chunked.q;
    out.options["colouring"] = chunked.colouring;
    out.options["colour_slack"] = chunked.slack;
  } else if (a == "lp") {
    out.schedule = passes.run("decompose", [&] { return decompose_lp(m); });
  } else {
    out.schedule = passes.run("decompose", [&] { return decompose_optimal(m); });
  }
  // From here on every phase is a partial permutation: <= 1 send and <= 1 receive per rank.
  if (links) out.schedule = repair_links(out.schedule, o, passes, out);
  // ... and with a topology, the messages of a phase share no link.
  return out;
}

}  // namespace commfit
