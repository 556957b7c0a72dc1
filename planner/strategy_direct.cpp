// Strategy "direct" (Ranka-Wang §4-6): every message goes whole from src to dst.
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "planner/passes.h"
#include "planner/strategies.h"

namespace commfit {

StrategyOutput strategy_direct(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  if (!has_entry(algorithm_table(), o.algorithm))
    throw UsageError("unknown algorithm \"" + o.algorithm + "\" (choose from: " + entry_names(algorithm_table()) + ")");
  StrategyOutput out;
  passes.rules.contention = out.contention = Contention::node;
  if (o.algorithm == "rs_n") {
    const CompressedMatrix ccom = passes.run("compress", [&] { return compress(m, o.seed); });
    out.schedule = passes.run("decompose", [&] { return decompose_rs_n(ccom, m, o.seed); });
  } else if (o.algorithm == "lp") {
    out.schedule = passes.run("decompose", [&] { return decompose_lp(m); });
  } else {
    out.schedule = passes.run("decompose", [&] { return decompose_optimal(m); });
  }
  // From here on every phase is a partial permutation: <= 1 send and <= 1 receive per rank.
  out.options["algorithm"] = o.algorithm;
  out.options["seed"] = o.seed;
  return out;
}

}  // namespace commfit
