#include "passes/decompose_lp.h"

#include <bit>
#include <vector>

namespace commfit {

Schedule decompose_lp(const CommMatrix& m) {
  const Rank p = m.ranks;
  const bool xor_pairing = std::has_single_bit(static_cast<std::uint32_t>(p));
  // Fig. 2 step k (1 <= k <= p - 1) in which message i -> j is sent: the k with
  // j = i XOR k, or j = (i + k) mod p when p is not a power of two.
  auto step_of = [&](Rank i, Rank j) {
    return xor_pairing ? static_cast<std::uint32_t>(i ^ j)
                       : static_cast<std::uint32_t>((j - i + p) % p);
  };
  // Steps without any message are dropped; the others are numbered densely in step order.
  std::vector<Phase> phase_of_step(p > 0 ? static_cast<std::size_t>(p) : 0, 0);
  m.for_each([&](Rank i, Rank j, Bytes) {
    if (i != j) phase_of_step[step_of(i, j)] = 1;
  });
  Schedule s;
  s.ranks = p;
  for (Phase& ph : phase_of_step) ph = ph ? s.phases++ : 0;
  s.transfers.reserve(static_cast<std::size_t>(m.nnz()));
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) s.transfers.push_back({phase_of_step[step_of(i, j)], i, j, {i, j, 0, b}});
  });
  s.copies = local_copies(m);
  canonicalize(s);
  return s;
}

}  // namespace commfit
