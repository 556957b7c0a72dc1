#include "passes/memory_bound.h"

#include "ir/error.h"

#include <algorithm>

namespace commfit {
namespace {

std::uint64_t ceil_div(Bytes a, Bytes b) { return a / b + (a % b != 0); }

}  // namespace

std::string memory_feasibility(const CommMatrix& m) {
  if (m.memory.size() != static_cast<std::size_t>(m.ranks))
    return "no per-rank free memory given (\"memory\" in the matrix, --memory or --memory-file)";
  const TrafficStats st = traffic_stats(m);
  if (st.total_bytes == 0) return {};
  unsigned __int128 total_free = 0;
  for (Rank j = 0; j < m.ranks; ++j) {
    const unsigned __int128 room = static_cast<unsigned __int128>(m.memory[j]) + st.r[j];
    if (st.c[j] > room) {
      const Bytes short_by = static_cast<Bytes>(st.c[j] - room);
      return "rank " + std::to_string(j) + " must receive " + std::to_string(st.c[j]) + " bytes but has only " +
             std::to_string(m.memory[j]) + " bytes free and sends " + std::to_string(st.r[j]) +
             ": after the exchange it would need " + std::to_string(short_by) +
             " bytes more than it has, in any number of phases";
    }
    total_free += m.memory[j];
  }
  if (total_free == 0)
    return "no rank has free memory, so no byte can ever be received (" + std::to_string(st.total_bytes) +
           " bytes to move)";
  return {};
}

MemoryBound memory_lower_bound(const CommMatrix& m) {
  commfit_assert(m.memory.size() == static_cast<std::size_t>(m.ranks), "memory_bound", "no memory limits");
  const TrafficStats st = traffic_stats(m);
  MemoryBound b;
  b.total = st.total_bytes;
  unsigned __int128 memory = 0;
  for (Rank j = 0; j < m.ranks; ++j) {
    memory += m.memory[j];
    if (st.c[j] > m.memory[j]) b.deficit += st.c[j] - m.memory[j];
  }
  // Free memory is user input and may sum past 2^64: clamp (the bounds only get weaker).
  b.memory = memory > ~Bytes{0} ? ~Bytes{0} : static_cast<Bytes>(memory);
  if (b.total == 0) return b;
  commfit_assert(b.memory > 0, "memory_bound", "no free memory (check memory_feasibility first)");
  b.volume_bound = ceil_div(b.total, b.memory);
  b.last_phase_bound = b.deficit ? 1 + ceil_div(b.deficit, b.memory) : 0;
  b.phases = std::max<std::uint64_t>({1, b.volume_bound, b.last_phase_bound});
  return b;
}

}  // namespace commfit
