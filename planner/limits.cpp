#include "planner/limits.h"

#include "ir/error.h"
#include "planner/strategy_table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

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

namespace {

// Ranks that send or receive at least one message.
std::uint64_t communicating_ranks(const CommMatrix& m) {
  std::vector<bool> seen(static_cast<std::size_t>(m.ranks), false);
  m.for_each([&](Rank s, Rank d, Bytes) { seen[s] = seen[d] = true; });
  return static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), true));
}

}  // namespace

void check_plan_memory(const CommMatrix& m, const PlanOptions& o, const std::string& file, std::optional<std::uint64_t> limit) {
  const std::uint64_t max = limit ? *limit : physical_memory_bytes();
  const MemoryEstimate e = plan_memory_estimate(m, o);
  // A plan holds a schedule for every rank, idle or not: a few messages among millions of ranks
  // would cost gigabytes for nothing a user wants. Without --max-memory that is refused.
  const std::uint64_t messages = static_cast<std::uint64_t>(m.nnz());
  const std::uint64_t rank_bytes = saturating_mul(static_cast<std::uint64_t>(m.ranks), kEstimateBytesPerRank);
  if (!limit && rank_bytes > kProportionFloorBytes && rank_bytes / std::max<std::uint64_t>(messages, 1) > kProportionBytesPerMessage)
    throw InputError(file, "whole matrix",
                     "planning needs about " + human_bytes(e.bytes) + " for " + std::to_string(messages) + " messages: " +
                         std::to_string(communicating_ranks(m)) + " of its " + std::to_string(m.ranks) +
                         " ranks send or receive, and the plan holds a schedule for every rank; plan the ranks that communicate on a smaller communicator, or give --max-memory to plan it anyway");
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
