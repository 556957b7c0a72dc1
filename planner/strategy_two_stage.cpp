// Strategy "two-stage" (Transportation §7-8, Bader-Helman-JaJa §3): every network message is
// split over the p ranks as intermediaries (--variant), then the two stages are each decomposed
// into phases (--algorithm: optimal, lp or rs_n) and run one after the other.
#include "passes/stage_schedule.h"
#include "passes/two_stage_split.h"
#include "planner/strategies.h"

#include <string>

namespace commfit {
namespace {

// A two-stage plan holds one piece per (message, intermediary): up to nnz * p of them. Refuse
// patterns whose split would not fit in memory (lowered and verified, a part costs ~0.6 KB at peak).
constexpr std::uint64_t kMaxParts = std::uint64_t{1} << 24;

std::string variant_names() {
  std::string out;
  for (const TwoStageVariantEntry& e : two_stage_variants()) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

}  // namespace

StrategyOutput strategy_two_stage(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  const auto variant = parse_two_stage_variant(o.variant);
  if (!variant) throw UsageError("unknown variant \"" + o.variant + "\" (choose from: " + variant_names() + ")");
  StageDecomposition decomposition = StageDecomposition::optimal;
  if (o.algorithm == "lp") decomposition = StageDecomposition::lp;
  else if (o.algorithm == "rs_n") decomposition = StageDecomposition::rs_n;
  else if (o.algorithm != "optimal")
    throw UsageError("algorithm \"" + o.algorithm + "\" cannot decompose the stages of strategy \"two-stage\" (choose from: optimal, lp, rs_n)");
  if (const std::uint64_t parts = two_stage_part_count(m); parts > kMaxParts)
    throw UsageError("strategy \"two-stage\" would split this pattern into " + std::to_string(parts) + " pieces (limit " +
                     std::to_string(kMaxParts) + "): use the direct strategy");

  StrategyOutput out;
  passes.rules.contention = out.contention = Contention::node;
  // 1. Every network message cut into p parts, one per intermediary, by the variant's rule.
  const TwoStageSplit split = passes.run("two-stage-split", [&] { return two_stage_split(m, *variant, o.seed); });
  // 2. Stage 1 (src -> mid) then stage 2 (mid -> dst), each decomposed into phases.
  out.schedule = passes.run("stage-schedule", [&] { return stage_schedule(split, m, decomposition, o.seed); });
  // From here on every phase is a partial permutation of messages and every forwarded piece
  // arrived in an earlier phase.
  out.options["variant"] = o.variant;
  out.options["algorithm"] = o.algorithm;
  out.options["seed"] = o.seed;
  return out;
}

}  // namespace commfit
