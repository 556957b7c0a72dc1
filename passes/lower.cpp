#include "passes/lower.h"

#include "ir/error.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace commfit {
namespace {

// First-fit allocator of one rank's staging area; the high-water mark is its size.
class StageAllocator {
 public:
  Bytes allocate(Bytes n) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < n) continue;
      const Bytes at = it->first;
      const Bytes left = it->second - n;
      free_.erase(it);
      if (left) free_.emplace(at + n, left);
      return at;
    }
    // Extend the top, reusing a free block that ends there.
    Bytes at = top_;
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        at = last->first;
        free_.erase(last);
      }
    }
    top_ = at + n;
    high_ = std::max(high_, top_);
    return at;
  }
  void release(Bytes at, Bytes n) {
    auto [it, inserted] = free_.emplace(at, n);
    commfit_assert(inserted, "lower", "staging block freed twice");
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
        it = prev;
      }
    }
    if (it->first + it->second == top_) {
      top_ = it->first;
      free_.erase(it);
    }
  }
  Bytes high_water() const { return high_; }

 private:
  std::map<Bytes, Bytes> free_;  // offset -> size, coalesced, all below top_
  Bytes top_ = 0;
  Bytes high_ = 0;
};

struct Staged {
  Piece piece;
  Bytes stage_offset;
  Bytes remaining;   // bytes not yet forwarded
};

using StageKey = std::tuple<Rank, Rank, Rank>;   // (holder, src, dst)

}  // namespace

Plan lower(const Schedule& s, const CommMatrix& m) {
  commfit_assert(s.ranks == m.ranks, "lower", "schedule and matrix disagree on the rank count");
  const Rank p = m.ranks;
  Plan plan;
  plan.manifest.ranks = p;
  // Local copies run in phase 0: a plan of copies only still has that one phase.
  const Phase phases = std::max<Phase>(s.phases, s.copies.empty() ? 0 : 1);
  plan.manifest.phases = phases;
  plan.manifest.matrix_fingerprint = matrix_fingerprint(m);
  plan.ranks.resize(static_cast<std::size_t>(p));
  // Every list is counted first and allocated once, at its size.
  {
    std::vector<std::size_t> sends(static_cast<std::size_t>(p), 0), recvs(sends), steps(sends);
    m.for_each([&](Rank i, Rank j, Bytes) { ++sends[i], ++recvs[j]; });
    for (const Piece& c : s.copies) ++steps[c.src];
    for (const Transfer& t : s.transfers) ++steps[t.from], ++steps[t.to];
    for (Rank r = 0; r < p; ++r) {
      RankSchedule& rs = plan.ranks[r];
      rs.rank = r;
      rs.ranks = p;
      rs.phases = phases;
      rs.matrix_fingerprint = plan.manifest.matrix_fingerprint;
      rs.sends.reserve(sends[r]);
      rs.recvs.reserve(recvs[r]);
      rs.steps.reserve(steps[r]);
    }
  }
  m.for_each([&](Rank i, Rank j, Bytes b) {
    plan.ranks[i].sends.push_back({j, b});
    plan.ranks[j].recvs.push_back({i, b});
  });

  // Steps are appended in step_less order when the transfers are in canonical order (phase,
  // from, to, src, dst, offset): per phase the receives, then the sends, and the copies after
  // phase 0's. Each rank's steps are sorted at the end only if they are not (another order).
  bool copied = false;
  auto copy = [&] {
    for (const Piece& c : s.copies) {
      commfit_assert(c.src == c.dst, "lower", "a local copy between two ranks");
      plan.ranks[c.src].steps.push_back({0, Op::copy, Buffer::recv, c.src, c.src, c.dst, c.offset, c.bytes, kNoStage});
    }
    copied = true;
  };

  std::vector<StageAllocator> stage(static_cast<std::size_t>(p));
  std::map<StageKey, std::vector<Staged>> held;
  std::vector<std::pair<Rank, Staged>> to_free;
  std::vector<Bytes> send_stage;   // stage_offset of each send of the phase

  std::size_t k = 0;
  while (k < s.transfers.size()) {
    const Phase phase = s.transfers[k].phase;
    if (phase > 0 && !copied) copy();
    std::size_t end = k;
    while (end < s.transfers.size() && s.transfers[end].phase == phase) ++end;
    commfit_assert(phase < s.phases, "lower", "transfer phase beyond the phase count");
    // Sends of this phase read what was staged in earlier phases ...
    send_stage.assign(end - k, kNoStage);
    for (std::size_t x = k; x < end; ++x) {
      const Transfer& t = s.transfers[x];
      commfit_assert(t.from != t.to, "lower", "a network transfer to the sending rank itself");
      if (t.from == t.piece.src) continue;
      auto it = held.find({t.from, t.piece.src, t.piece.dst});
      commfit_assert(it != held.end(), "lower", "rank " + std::to_string(t.from) + " forwards bytes it never received");
      auto& list = it->second;
      auto sp = std::find_if(list.begin(), list.end(), [&](const Staged& h) {
        return h.piece.offset <= t.piece.offset && t.piece.offset + t.piece.bytes <= h.piece.offset + h.piece.bytes;
      });
      commfit_assert(sp != list.end(), "lower", "rank " + std::to_string(t.from) + " forwards a byte range it does not hold");
      send_stage[x - k] = sp->stage_offset + (t.piece.offset - sp->piece.offset);
      commfit_assert(sp->remaining >= t.piece.bytes, "lower", "staged bytes forwarded twice");
      sp->remaining -= t.piece.bytes;
      if (sp->remaining == 0) {
        to_free.emplace_back(t.from, *sp);
        list.erase(sp);
      }
    }
    // ... receives of this phase land in space not freed by this phase's sends ...
    for (std::size_t x = k; x < end; ++x) {
      const Transfer& t = s.transfers[x];
      Step recv{phase, Op::recv, Buffer::recv, t.from, t.piece.src, t.piece.dst, t.piece.offset, t.piece.bytes, kNoStage};
      if (t.to != t.piece.dst) {
        recv.buffer = Buffer::stage;
        recv.stage_offset = stage[t.to].allocate(t.piece.bytes);
        held[{t.to, t.piece.src, t.piece.dst}].push_back({t.piece, recv.stage_offset, t.piece.bytes});
      }
      plan.ranks[t.to].steps.push_back(recv);
    }
    for (std::size_t x = k; x < end; ++x) {
      const Transfer& t = s.transfers[x];
      const Bytes at = send_stage[x - k];
      plan.ranks[t.from].steps.push_back({phase, Op::send, at == kNoStage ? Buffer::send : Buffer::stage, t.to, t.piece.src, t.piece.dst,
                                          t.piece.offset, t.piece.bytes, at});
    }
    // ... and space is released once the phase is over.
    for (auto& [r, h] : to_free) stage[r].release(h.stage_offset, h.piece.bytes);
    to_free.clear();
    k = end;
  }
  if (!copied) copy();

  for (Rank r = 0; r < p; ++r) {
    RankSchedule& rs = plan.ranks[r];
    if (!std::is_sorted(rs.steps.begin(), rs.steps.end(), step_less)) std::sort(rs.steps.begin(), rs.steps.end(), step_less);
    rs.staging_bytes = stage[r].high_water();
    plan.manifest.staging_bytes_max = std::max(plan.manifest.staging_bytes_max, rs.staging_bytes);
  }
  return plan;
}

}  // namespace commfit
