#include "passes/decompose_rs_n.h"

#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <vector>

namespace commfit {
namespace {

// compress() seeds its Rng with the same seed; a salted stream keeps the two independent.
constexpr std::uint64_t kStartRowSalt = 0x7a3c5e91d2b4f608ULL;

}  // namespace

Schedule decompose_rs_n(CompressedMatrix ccom, const CommMatrix& m, std::uint64_t seed) {
  const Rank n = ccom.ranks;
  commfit_assert(n == m.ranks, "decompose_rs_n", "CCOM and matrix differ in rank count");
  Schedule s;
  s.ranks = n;
  s.copies = local_copies(m);
  if (n == 0) return s;

  // Work bookkeeping that does not change which entry Fig. 3 picks:
  //  - `rows`: the rows with active entries, in rank order. Rows with prt(i) = 0 contribute
  //    nothing to the scan, so the iteration walks this list from the first row >= x, cyclically.
  //  - `pending_in[k]`: messages still to be scheduled to k. Once no free receiver has a pending
  //    message, no later row of the scan can find an entry, so the iteration stops early.
  //  - `taken[k] == iteration` is the paper's receive(k) != -1 (no O(n) reset per iteration).
  std::vector<Rank> rows;
  std::vector<std::int64_t> pending_in(n, 0);
  std::int64_t remaining = 0;
  for (Rank i = 0; i < n; ++i) {
    if (ccom.prt[i] > 0) rows.push_back(i);
    for (std::int64_t k = 0; k < ccom.prt[i]; ++k) ++pending_in[ccom.row(i)[k]];
    remaining += ccom.prt[i];
  }
  std::int64_t receivers_pending = std::count_if(pending_in.begin(), pending_in.end(),
                                                 [](std::int64_t c) { return c > 0; });
  std::vector<std::uint32_t> taken(n, 0);   // iteration numbers start at 1
  s.transfers.reserve(static_cast<std::size_t>(remaining));

  Rng rng(seed ^ kStartRowSalt);
  for (std::uint32_t iteration = 1; remaining > 0; ++iteration) {
    const Phase phase = iteration - 1;
    const auto x = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(n)));  // Fig. 3 (b)
    const std::size_t start = std::lower_bound(rows.begin(), rows.end(), x) - rows.begin();
    std::int64_t free_receivers = receivers_pending;
    std::int64_t scheduled = 0;
    for (std::size_t y = 0; y < rows.size() && free_receivers > 0; ++y) {
      const Rank i = rows[(start + y) % rows.size()];   // rows (x + y) mod n with entries
      Rank* row = ccom.row(i);
      std::int64_t& prt = ccom.prt[i];
      for (std::int64_t j = 0; j < prt; ++j) {          // first entry whose receiver is free
        const Rank k = row[j];
        if (taken[k] == iteration) continue;
        taken[k] = iteration;                           // send(i) = k, receive(k) = i
        row[j] = row[prt - 1];                          // fill the hole with the last entry
        row[prt - 1] = -1;
        --prt;
        --free_receivers;
        if (--pending_in[k] == 0) --receivers_pending;
        const Bytes b = m.at(i, k);
        commfit_assert(b > 0, "decompose_rs_n", "CCOM entry without a message");
        s.transfers.push_back({phase, i, k, {i, k, 0, b}});
        ++scheduled;
        break;
      }
    }
    // The first row scanned has all receivers free, so every iteration makes progress.
    commfit_assert(scheduled > 0, "decompose_rs_n", "an iteration scheduled no message");
    remaining -= scheduled;
    s.phases = iteration;
    std::erase_if(rows, [&](Rank i) { return ccom.prt[i] == 0; });
  }
  canonicalize(s);
  return s;
}

}  // namespace commfit
