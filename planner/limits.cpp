#include "planner/limits.h"

#include "passes/two_stage_split.h"
#include "planner/candidates.h"
#include "ir/error.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace commfit {
namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return b != 0 && a > kSaturated / b ? kSaturated : a * b; }

// Network messages, each one piece (direct, async).
std::uint64_t whole_messages(const CommMatrix& m) {
  std::uint64_t n = 0;
  m.for_each([&](Rank i, Rank j, Bytes) { n += i != j; });
  return n;
}

// direct --algorithm quantised --chunk Q: every message cut into ceil(size / Q) pieces. With
// --chunk 0 the chunk is chosen under a colour-table bound (planner/strategy_direct.cpp) that
// keeps the pieces near the message count; the estimate counts messages then.
std::uint64_t quantised_pieces(const CommMatrix& m, Bytes chunk) {
  std::uint64_t n = 0;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) n = add(n, b / chunk + (b % chunk != 0));
  });
  return n;
}

std::uint64_t strategy_pieces(const CommMatrix& m, const PlanOptions& o, const std::string& strategy) {
  const std::uint64_t messages = whole_messages(m);
  if (strategy == "two-stage") return mul(two_stage_part_count(m), 2);   // src -> mid, mid -> dst
  if (strategy == "memory") return mul(messages, 2);                       // a parked message moves twice
  if (strategy == "direct" && o.algorithm == "quantised" && o.chunk > 0) return std::max(messages, quantised_pieces(m, o.chunk));
  return messages;
}

}  // namespace

MemoryEstimate plan_memory_estimate(const CommMatrix& m, const PlanOptions& o) {
  MemoryEstimate e;
  if (o.strategy == "auto") {
    // Every candidate is planned in turn and the cheapest kept: two plans alive at the peak.
    // Two-stage candidates are skipped above kMaxTwoStagePieces parts (planner/candidates.h).
    std::uint64_t most = std::max(strategy_pieces(m, o, "direct"), strategy_pieces(m, o, "memory"));
    if (static_cast<double>(whole_messages(m)) * m.ranks <= kMaxTwoStagePieces) most = std::max(most, strategy_pieces(m, o, "two-stage"));
    e.pieces = mul(most, 2);
  } else {
    e.pieces = strategy_pieces(m, o, o.strategy);
  }
  e.bytes = add(add(mul(e.pieces, kEstimateBytesPerPiece), mul(static_cast<std::uint64_t>(m.nnz()), kEstimateBytesPerMessage)),
                add(mul(static_cast<std::uint64_t>(m.ranks), kEstimateBytesPerRank), kEstimateBaseBytes));
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
  return mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
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
