#include "passes/stage_schedule.h"

#include "ir/error.h"
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"

#include <algorithm>
#include <tuple>

namespace commfit {
namespace {

// The network hop of a part in a stage, if it has one.
struct Hop {
  bool exists;
  Rank from, to;
};

Hop hop(const StagePart& x, int stage) {
  if (stage == 1) return {x.mid != x.src, x.src, x.mid};
  return {x.mid != x.dst, x.mid, x.dst};
}

// Phase of each (from, to) message of a stage schedule, looked up by binary search.
class PhaseOf {
 public:
  explicit PhaseOf(const Schedule& s) {
    keys_.reserve(s.transfers.size());
    for (const Transfer& t : s.transfers) keys_.emplace_back(t.from, t.to, t.phase);
    std::sort(keys_.begin(), keys_.end());
    for (std::size_t k = 1; k < keys_.size(); ++k)
      commfit_assert(std::get<0>(keys_[k - 1]) != std::get<0>(keys_[k]) || std::get<1>(keys_[k - 1]) != std::get<1>(keys_[k]),
                     "stage-schedule", "a stage message was split over two phases");
  }
  Phase operator()(Rank from, Rank to) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), std::make_tuple(from, to, Phase{0}));
    commfit_assert(it != keys_.end() && std::get<0>(*it) == from && std::get<1>(*it) == to, "stage-schedule",
                   "a stage message got no phase");
    return std::get<2>(*it);
  }

 private:
  std::vector<std::tuple<Rank, Rank, Phase>> keys_;
};

Schedule decompose(const CommMatrix& stage, StageDecomposition d, std::uint64_t seed) {
  switch (d) {
    case StageDecomposition::lp: return decompose_lp(stage);
    case StageDecomposition::rs_n: return decompose_rs_n(compress(stage, seed), stage, seed);
    case StageDecomposition::optimal: break;
  }
  return decompose_optimal(stage);
}

}  // namespace

CommMatrix stage_matrix(const TwoStageSplit& split, int stage) {
  commfit_assert(stage == 1 || stage == 2, "stage-schedule", "stage must be 1 or 2");
  const Rank p = split.ranks;
  // Bucket the hops by sender (counting sort), then total them per receiver with a dense row
  // accumulator and a list of the receivers touched: O(parts + p) time, O(p) extra per row.
  std::vector<std::size_t> first(static_cast<std::size_t>(p) + 1, 0);
  for (const StagePart& x : split.parts)
    if (const Hop h = hop(x, stage); h.exists) ++first[static_cast<std::size_t>(h.from) + 1];
  for (Rank r = 0; r < p; ++r) first[r + 1] += first[r];
  std::vector<std::pair<Rank, Bytes>> by_sender(first[p]);
  std::vector<std::size_t> fill(first.begin(), first.end() - 1);
  for (const StagePart& x : split.parts)
    if (const Hop h = hop(x, stage); h.exists) by_sender[fill[h.from]++] = {h.to, x.bytes};

  std::vector<Bytes> row(static_cast<std::size_t>(p), 0);
  std::vector<Rank> touched;
  std::vector<Message> msgs;
  for (Rank r = 0; r < p; ++r) {
    touched.clear();
    for (std::size_t k = first[r]; k < first[r + 1]; ++k) {
      const auto [to, bytes] = by_sender[k];
      if (row[to] == 0) touched.push_back(to);
      row[to] += bytes;
    }
    std::sort(touched.begin(), touched.end());
    for (Rank to : touched) {
      msgs.push_back({r, to, row[to]});
      row[to] = 0;
    }
  }
  return make_matrix(p, std::move(msgs));
}

Schedule stage_schedule(const TwoStageSplit& split, const CommMatrix& m, StageDecomposition d, std::uint64_t seed) {
  commfit_assert(split.ranks == m.ranks, "stage-schedule", "split and matrix disagree on the rank count");
  Schedule out;
  out.ranks = m.ranks;
  out.copies = local_copies(m);

  // Stage 1 phases [0, P1), stage 2 phases [P1, P1 + P2): every forward follows its arrival.
  const Schedule s1 = decompose(stage_matrix(split, 1), d, seed);
  const Schedule s2 = decompose(stage_matrix(split, 2), d, seed + 1);
  const PhaseOf phase1(s1), phase2(s2);
  out.phases = s1.phases + s2.phases;

  std::size_t hops = 0;
  for (const StagePart& x : split.parts) hops += (x.mid != x.src) + (x.mid != x.dst);
  out.transfers.reserve(hops);
  for (const StagePart& x : split.parts) {
    const Piece piece{x.src, x.dst, x.offset, x.bytes};
    if (x.mid != x.src) out.transfers.push_back({phase1(x.src, x.mid), x.src, x.mid, piece});
    if (x.mid != x.dst) out.transfers.push_back({s1.phases + phase2(x.mid, x.dst), x.mid, x.dst, piece});
  }
  canonicalize(out);
  return out;
}

}  // namespace commfit
