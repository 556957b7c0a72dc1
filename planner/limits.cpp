#include "planner/limits.h"

#include "ir/error.h"
#include "planner/strategy_table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace commfit {

MemoryEstimate plan_memory_estimate(const CommMatrix& m, const PlanOptions& o) {
  MemoryEstimate e;
  if (const Strategy* s = find_strategy(o.strategy)) {
    e.pieces = s->pieces(m, o);
  } else if (o.strategy != "auto") {
    e.pieces = network_messages(m);   // make_plan refuses the name; the estimate need not
  } else {
    // auto: every candidate is planned in turn and the cheapest kept, so two plans are alive at
    // the peak; a strategy auto skips on this matrix does not count.
    std::uint64_t most = 0;
    for (const Strategy* t : strategy_table())
      if (!t->auto_skip || t->auto_skip(m).empty()) most = std::max(most, t->pieces(m, o));
    e.pieces = saturating_mul(most, 2);
  }
  e.bytes = saturating_add(saturating_add(saturating_mul(e.pieces, kEstimateBytesPerPiece), saturating_mul(static_cast<std::uint64_t>(m.nnz()), kEstimateBytesPerMessage)),
                           saturating_add(saturating_mul(static_cast<std::uint64_t>(m.ranks), kEstimateBytesPerRank), kEstimateBaseBytes));
  return e;
}

void check_plan_memory(const CommMatrix& m, const PlanOptions& o, const std::string& file, std::optional<std::uint64_t> limit) {
  const std::uint64_t max = limit ? *limit : physical_memory_bytes();
  const MemoryEstimate e = plan_memory_estimate(m, o);
  if (e.bytes <= max) return;
  throw InputError(file, "whole matrix",
                   "planning needs about " + human_bytes(e.bytes) + " (" + std::to_string(m.nnz()) + " messages, " + std::to_string(e.pieces) +
                       " pieces for strategy " + o.strategy + "), more than the limit of " + human_bytes(max) +
                       (limit ? " (--max-memory)" : " (physical memory; see --max-memory)"));
}

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{1} << 63;
  return saturating_mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
}

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace commfit
