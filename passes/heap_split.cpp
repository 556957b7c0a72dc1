#include "passes/heap_split.h"

#include "ir/error.h"
#include "passes/ranka_wang_detail.h"

#include <algorithm>
#include <optional>

namespace commfit {
namespace {

Schedule heap_split_one(const CompressedMatrix& ccom, const CommMatrix& m, const Topology& topo,
                        const HeapSplitOptions& o, Rank k, std::int64_t& pairs) {
  const Rank n = m.ranks;
  Schedule s;
  s.ranks = n;
  s.copies = local_copies(m);
  detail::RsState state(ccom, m, detail::RsState::Order::heap);
  std::optional<detail::LinkClaims> links;
  if (o.link_check) links.emplace(topo);
  Rng rng(o.seed ^ detail::kRsStartRowSalt);
  std::vector<Bytes> sizes;
  pairs = 0;
  for (std::uint32_t iteration = 1; !state.done(); ++iteration) {
    const auto x = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(n)));
    const Phase phase = iteration - 1;
    const std::vector<detail::Pick>& picks = state.iterate(x, o.pairwise, links ? &*links : nullptr, iteration);
    // M_thresh: the k-th smallest of the n sizes of the phase, idle ranks counted as 0.
    sizes.clear();
    for (const detail::Pick& p : picks) sizes.push_back(state.remaining(p.msg));
    std::sort(sizes.begin(), sizes.end());
    const std::int64_t idle = n - static_cast<std::int64_t>(sizes.size());
    const Bytes thresh = k <= idle ? sizes.front() : sizes[k - idle - 1];
    for (const detail::Pick& p : picks) {
      const Bytes b = std::min(state.remaining(p.msg), thresh);
      s.transfers.push_back({phase, state.src(p.msg), state.dst(p.msg), {state.src(p.msg), state.dst(p.msg), state.sent(p.msg), b}});
      state.send_bytes(p.msg, b);
      if (state.remaining(p.msg) == 0) state.complete(p.msg);
      else state.reinsert(p.msg);
      pairs += p.paired;
    }
    state.end_iteration();
    s.phases = iteration;
  }
  pairs /= 2;
  canonicalize(s);
  return s;
}

}  // namespace

std::vector<Rank> paper_lambda_ks(Rank n) {
  std::vector<Rank> ks;
  for (std::int64_t step = 1; n >= 2 && n - step >= 1; step *= 2) {
    const std::int64_t k = n - step;
    if (!ks.empty() && 4 * k < 3 * static_cast<std::int64_t>(n)) break;
    ks.push_back(static_cast<Rank>(k));
  }
  return ks;
}

Schedule heap_split(const CompressedMatrix& ccom, const CommMatrix& m, const Topology& topo,
                    const HeapSplitOptions& options, HeapSplitReport* report) {
  topo.check_ranks(m.ranks);
  const Rank n = m.ranks;
  std::vector<Rank> ks = options.ks.empty() ? paper_lambda_ks(n) : options.ks;
  for (Rank k : ks)
    if (k < 1 || k > n) throw UsageError("heap split: k = " + std::to_string(k) + " is not in 1.." + std::to_string(n));
  if (ks.empty()) ks.push_back(std::max<Rank>(n, 1));   // n <= 1: nothing to split
  HeapSplitReport local;
  HeapSplitReport& r = report ? *report : local;
  r = HeapSplitReport{};
  Schedule best;
  for (Rank k : ks) {
    std::int64_t pairs = 0;
    Schedule s = n >= 1 ? heap_split_one(ccom, m, topo, options, k, pairs) : Schedule{};
    HeapSplitCandidate c{k, n > 0 ? static_cast<double>(k) / n : 1.0, s.phases,
                         static_cast<std::int64_t>(s.transfers.size()),
                         options.estimate ? options.estimate(s) : schedule_estimate_s(s, options.cost)};
    if (r.sweep.empty() || c.estimate_s < r.sweep[r.chosen].estimate_s) {
      r.chosen = r.sweep.size();
      r.pairs_located = pairs;
      best = std::move(s);
    }
    r.sweep.push_back(c);
  }
  return best;
}

}  // namespace commfit
