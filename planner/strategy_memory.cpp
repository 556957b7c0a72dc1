// Strategy "memory" (Pinar-Hendrickson §3.1): phases that respect every rank's free memory.
// Methods: parking (greedy, passes/park.h) and relaxation (continuous relaxation,
// passes/relaxation.h). The lower bound of passes/memory_bound.h goes into the manifest.
#include "passes/memory_bound.h"
#include "passes/park.h"
#include "passes/relaxation.h"
#include "planner/strategy_table.h"

namespace commfit {
namespace {

StrategyOutput run_memory(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  if (m.memory.empty())
    throw UsageError(
        "strategy memory needs per-rank free memory: give \"memory\" in the matrix, --memory or --memory-file");
  if (const std::string why = memory_feasibility(m); !why.empty())
    throw UsageError("strategy memory: the exchange cannot be done within the memory limits: " + why);
  StrategyOutput out;
  // Ranks send to and receive from several peers in one phase: phases are bounded by memory.
  const MemoryBound lb = memory_lower_bound(m);
  Bytes parked = 0;
  if (o.method == "parking") {
    ParkStats st;
    out.schedule = passes.run(Pass::park, [&] { return park(m, ParkOptions{}, &st); });
    parked = st.parked_bytes;
  } else {
    RelaxationStats st;
    const RelaxationOptions ro;
    std::optional<Schedule> s = passes.run(Pass::relaxation, [&] { return relaxation(m, ro, &st); });
    if (s) {
      out.schedule = std::move(*s);
      parked = st.parked_bytes;
    } else {
      // Whole-byte pieces do not fit the free memory of some rank (free memory comparable to its
      // number of peers): the greedy method always can, so use it and say so.
      ParkStats ps;
      out.schedule = passes.run(Pass::park, [&] { return park(m, ParkOptions{}, &ps); });
      parked = ps.parked_bytes;
      out.options["fallback"] = "parking: the relaxation could not round its pieces to whole bytes within " +
                                std::to_string(ro.max_extra_phases) + " extra main phases";
    }
  }
  // From here on every phase receives at most each rank's free bytes at its start (rule 5).
  out.options["method"] = o.method;
  out.options["lower_bound_phases"] = lb.phases;
  out.options["parked_bytes"] = parked;
  return out;
}

constexpr NamedEntry kMethods[] = {
    {"parking", "Pinar-Hendrickson §3.1", "greedy: receive what fits, park the rest on ranks with spare memory"},
    {"relaxation", "Pinar-Hendrickson §3.1", "continuous relaxation: ceil(T/M) equal pieces plus pre/post phases"},
};
constexpr OptionEntry kMemoryOptions[] = {{StrategyOption::method, kMethods}, {StrategyOption::memory, {}}};

}  // namespace

const Strategy& memory_strategy() {
  static const Strategy s{
      .entry = {"memory", "Pinar-Hendrickson §3", "phases that respect per-rank free memory, parking data on spare ranks"},
      .options = kMemoryOptions,
      .run = run_memory,
      .sweep = StrategyOption::method,
      .needs_memory_limits = true,
      .auto_skip = nullptr,
      .pieces = [](const CommMatrix& m, const PlanOptions&) { return saturating_mul(network_messages(m), 2); },   // a parked message moves twice
  };
  return s;
}

}  // namespace commfit
