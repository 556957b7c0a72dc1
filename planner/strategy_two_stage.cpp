// Strategy "two-stage" (Transportation §7-8, Bader-Helman-JaJa §3): every network message is
// split over the p ranks as intermediaries (--variant), then the two stages are each decomposed
// into phases (--algorithm: optimal, lp or rs_n) and run one after the other.
#include "passes/stage_schedule.h"
#include "passes/two_stage_split.h"
#include "planner/strategy_table.h"

#include <string>
#include <vector>

namespace commfit {
namespace {

// Its two size limits, in one place. A two-stage plan holds one piece per (message,
// intermediary), up to messages x p of them:
// - kMaxParts: --strategy two-stage refuses patterns whose split would not fit in memory (lowered
//   and verified, a part costs ~0.6 KB at peak);
// - kMaxAutoPieces: auto and compare, which plan all five variants, skip them above messages x p
//   = 2^19 (use --strategy two-stage to force one).
constexpr std::uint64_t kMaxParts = std::uint64_t{1} << 24;
constexpr double kMaxAutoPieces = 1 << 19;

StrategyOutput run_two_stage(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  // Both values are checked against the strategy's table entry before it runs.
  const TwoStageVariant variant = *parse_two_stage_variant(o.variant);
  const StageDecomposition decomposition =
      o.algorithm == "lp" ? StageDecomposition::lp : o.algorithm == "rs_n" ? StageDecomposition::rs_n : StageDecomposition::optimal;
  if (const std::uint64_t parts = two_stage_part_count(m); parts > kMaxParts)
    throw UsageError("strategy \"two-stage\" would split this pattern into " + std::to_string(parts) + " pieces (limit " +
                     std::to_string(kMaxParts) + "): use the direct strategy");

  StrategyOutput out;
  // 1. Every network message cut into p parts, one per intermediary, by the variant's rule.
  const TwoStageSplit split = passes.run(Pass::two_stage_split, [&] { return two_stage_split(m, variant, o.seed); });
  // 2. Stage 1 (src -> mid) then stage 2 (mid -> dst), each decomposed into phases.
  out.schedule = passes.run(Pass::stage_schedule, [&] { return stage_schedule(split, m, decomposition, o.seed); });
  // From here on every phase is a partial permutation of messages and every forwarded piece
  // arrived in an earlier phase.
  out.options["variant"] = o.variant;
  out.options["algorithm"] = o.algorithm;
  out.options["seed"] = o.seed;
  return out;
}

std::string auto_skip(const CommMatrix& m) {
  const double pieces = static_cast<double>(traffic_stats(m).messages) * m.ranks;
  if (pieces <= kMaxAutoPieces) return "";
  return "messages x ranks = " + std::to_string(static_cast<long long>(pieces)) + " pieces, over the auto limit of " +
         std::to_string(static_cast<long long>(kMaxAutoPieces));
}

constexpr NamedEntry kStageAlgorithms[] = {
    {"optimal", "König's theorem", "each stage in exactly as many phases as its degree"},
    {"lp", "Ranka-Wang §4.1 Fig. 2", "each stage by linear permutation"},
    {"rs_n", "Ranka-Wang §4.2 Fig. 3", "each stage by random scheduling"},
};

}  // namespace

const Strategy& two_stage_strategy() {
  static const std::vector<NamedEntry> variants = [] {
    std::vector<NamedEntry> v;
    for (const TwoStageVariantEntry& e : two_stage_variants()) v.push_back({e.name, "Transportation §7-8; BHJ §3", e.description});
    return v;
  }();
  static const OptionEntry options[] = {{StrategyOption::variant, variants}, {StrategyOption::algorithm, kStageAlgorithms}};
  static const Strategy s{
      .entry = {"two-stage", "Transportation §7-8; BHJ §3", "every message split over p intermediaries: two balanced stages"},
      .options = options,
      .run = run_two_stage,
      .sweep = StrategyOption::variant,
      .needs_memory_limits = false,
      .auto_skip = auto_skip,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return saturating_mul(two_stage_part_count(m), 2); },   // src -> mid, mid -> dst
      .plan_cost = [](const PlanOptions&) { return 2.0; },   // p pieces per message
  };
  return s;
}

}  // namespace commfit
