#include "passes/lower.h"

#include "ir/error.h"

#include <algorithm>
#include <map>

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

constexpr std::size_t kAhead = 16;   // transfers prefetched ahead of the one gathered

struct Staged {
  Piece piece;
  Bytes stage_offset;
  Bytes remaining;   // bytes not yet forwarded
};

// Stable counting sort of items 0..n-1 by key(k) in [0, p): start[r] .. start[r + 1] are rank r's.
template <class Key>
void index_by(std::size_t n, Rank p, Key key, std::vector<std::uint32_t>& start, std::vector<std::uint32_t>& items) {
  start.assign(static_cast<std::size_t>(p) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const Rank r = key(k);
    commfit_assert(r >= 0 && r < p, "lower", "a transfer names a rank out of range");
    ++start[static_cast<std::size_t>(r) + 1];
  }
  for (Rank r = 0; r < p; ++r) start[r + 1] += start[r];
  items.resize(n);
  std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
  for (std::size_t k = 0; k < n; ++k) items[next[static_cast<std::size_t>(key(k))]++] = static_cast<std::uint32_t>(k);
}

}  // namespace

Lowering::Lowering(const Schedule& s, const CommMatrix& m, const MatrixColumns& columns, std::string fingerprint)
    : s_(s), m_(m), columns_(columns), fingerprint_(std::move(fingerprint)) {
  commfit_assert(s.ranks == m.ranks, "lower", "schedule and matrix disagree on the rank count");
  commfit_assert(s.transfers.size() < (std::size_t{1} << 32) && s.copies.size() < (std::size_t{1} << 32), "lower", "2^32 transfers or more");
  phases_ = std::max<Phase>(s.phases, s.copies.empty() ? 0 : 1);
  index_by(s.transfers.size(), m.ranks, [&](std::size_t k) { return s.transfers[k].from; }, from_start_, from_);
  index_by(s.transfers.size(), m.ranks, [&](std::size_t k) { return s.transfers[k].to; }, to_start_, to_);
  index_by(s.copies.size(), m.ranks, [&](std::size_t k) { return s.copies[k].src; }, copy_start_, copy_);
  // The transfers are processed in runs of one phase, in the schedule's order (sorted by phase in
  // every schedule a pass returns; tests hand lower others). Out of order, each run is numbered.
  const std::vector<Transfer>& t = s.transfers;
  if (!std::is_sorted(t.begin(), t.end(), [](const Transfer& a, const Transfer& b) { return a.phase < b.phase; })) {
    run_.resize(t.size());
    for (std::size_t k = 0; k < t.size(); ++k) run_[k] = k == 0 ? 0 : run_[k - 1] + (t[k].phase != t[k - 1].phase);
  }
  while (first_later_ < t.size() && t[first_later_].phase == 0) ++first_later_;
}

void Lowering::rank(Rank r, RankSchedule& out) {
  out.rank = r;
  out.ranks = m_.ranks;
  out.phases = phases_;
  out.matrix_fingerprint = fingerprint_;
  out.max_outstanding = 0;
  out.send_order.clear();
  // Its row and its column of COM.
  out.sends.clear();
  out.recvs.clear();
  const auto* row = m_.com.outerIndexPtr();
  out.sends.reserve(static_cast<std::size_t>(row[r + 1] - row[r]));
  for (std::int64_t x = row[r]; x < row[r + 1]; ++x) out.sends.push_back({static_cast<Rank>(m_.com.innerIndexPtr()[x]), m_.com.valuePtr()[x]});
  out.recvs.reserve(static_cast<std::size_t>(columns_.start[r + 1] - columns_.start[r]));
  for (std::int64_t x = columns_.start[r]; x < columns_.start[r + 1]; ++x)
    out.recvs.push_back({columns_.src[static_cast<std::size_t>(x)], m_.com.valuePtr()[columns_.message[static_cast<std::size_t>(x)]]});

  const std::uint32_t* const send_begin = from_.data() + from_start_[r];
  const std::uint32_t* const send_end = from_.data() + from_start_[r + 1];
  const std::uint32_t* const recv_begin = to_.data() + to_start_[r];
  const std::uint32_t* const recv_end = to_.data() + to_start_[r + 1];
  const std::uint32_t* send = send_begin;
  const std::uint32_t* recv = recv_begin;
  // The rank's transfers, gathered from where the phase order scattered them over the schedule
  // (prefetched a few ahead: each is most likely a cache miss).
  const std::vector<Transfer>& t = s_.transfers;
  auto gather = [&](const std::uint32_t* b, const std::uint32_t* e, std::vector<Transfer>& into) {
    const std::size_t n = static_cast<std::size_t>(e - b);
    into.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      if (k + kAhead < n) __builtin_prefetch(&t[b[k + kAhead]]);
      into[k] = t[b[k]];
    }
  };
  gather(send_begin, send_end, sends_);
  gather(recv_begin, recv_end, recvs_);
  auto sent = [&](const std::uint32_t* x) -> const Transfer& { return sends_[static_cast<std::size_t>(x - send_begin)]; };
  auto received = [&](const std::uint32_t* x) -> const Transfer& { return recvs_[static_cast<std::size_t>(x - recv_begin)]; };
  out.steps.clear();
  out.steps.reserve(static_cast<std::size_t>((send_end - send) + (recv_end - recv)) + (copy_start_[r + 1] - copy_start_[r]));

  // Steps are appended in step_less order when the transfers are in canonical order (phase,
  // from, to, src, dst, offset): per phase the receives, then the sends, and the copies after
  // phase 0's. The steps are sorted at the end only if they are not (another order).
  bool copied = false;
  auto copy = [&] {
    for (std::uint32_t k = copy_start_[r]; k < copy_start_[r + 1]; ++k) {
      const Piece& c = s_.copies[copy_[k]];
      commfit_assert(c.src == c.dst, "lower", "a local copy between two ranks");
      out.steps.push_back({0, Op::copy, Buffer::recv, c.src, c.src, c.dst, c.offset, c.bytes, kNoStage});
    }
    copied = true;
  };

  // The staging area: what this rank holds to forward, by (src, dst) of the message.
  StageAllocator stage;
  std::map<std::pair<Rank, Rank>, std::vector<Staged>> held;
  std::vector<Staged> to_free;
  std::vector<Bytes> send_stage;   // stage_offset of each send of the phase
  auto send_run = [&](const std::uint32_t* x) { return run_.empty() ? sent(x).phase : run_[*x]; };
  auto recv_run = [&](const std::uint32_t* x) { return run_.empty() ? received(x).phase : run_[*x]; };
  while (send < send_end || recv < recv_end) {
    const std::uint32_t run = std::min(send < send_end ? send_run(send) : ~std::uint32_t{0}, recv < recv_end ? recv_run(recv) : ~std::uint32_t{0});
    const bool by_send = send < send_end && send_run(send) == run;
    const std::uint32_t any = by_send ? *send : *recv;   // a transfer of the run
    const Phase phase = by_send ? sent(send).phase : received(recv).phase;
    commfit_assert(phase < s_.phases, "lower", "transfer phase beyond the phase count");
    if (any >= first_later_ && !copied) copy();   // the copies go before the first run of a phase > 0
    const std::uint32_t* sends = send;
    while (send < send_end && send_run(send) == run) ++send;
    const std::uint32_t* recvs = recv;
    while (recv < recv_end && recv_run(recv) == run) ++recv;
    // Sends of this phase read what was staged in earlier phases ...
    send_stage.assign(static_cast<std::size_t>(send - sends), kNoStage);
    for (const std::uint32_t* x = sends; x < send; ++x) {
      const Transfer& tr = sent(x);
      commfit_assert(tr.from != tr.to, "lower", "a network transfer to the sending rank itself");
      if (tr.from == tr.piece.src) continue;
      auto it = held.find({tr.piece.src, tr.piece.dst});
      commfit_assert(it != held.end(), "lower", "rank " + std::to_string(tr.from) + " forwards bytes it never received");
      auto& list = it->second;
      auto sp = std::find_if(list.begin(), list.end(), [&](const Staged& h) {
        return h.piece.offset <= tr.piece.offset && tr.piece.offset + tr.piece.bytes <= h.piece.offset + h.piece.bytes;
      });
      commfit_assert(sp != list.end(), "lower", "rank " + std::to_string(tr.from) + " forwards a byte range it does not hold");
      send_stage[static_cast<std::size_t>(x - sends)] = sp->stage_offset + (tr.piece.offset - sp->piece.offset);
      commfit_assert(sp->remaining >= tr.piece.bytes, "lower", "staged bytes forwarded twice");
      sp->remaining -= tr.piece.bytes;
      if (sp->remaining == 0) {
        to_free.push_back(*sp);
        list.erase(sp);
      }
    }
    // ... receives of this phase land in space not freed by this phase's sends ...
    for (const std::uint32_t* x = recvs; x < recv; ++x) {
      const Transfer& tr = received(x);
      Step step{phase, Op::recv, Buffer::recv, tr.from, tr.piece.src, tr.piece.dst, tr.piece.offset, tr.piece.bytes, kNoStage};
      if (tr.to != tr.piece.dst) {
        step.buffer = Buffer::stage;
        step.stage_offset = stage.allocate(tr.piece.bytes);
        held[{tr.piece.src, tr.piece.dst}].push_back({tr.piece, step.stage_offset, tr.piece.bytes});
      }
      out.steps.push_back(step);
    }
    for (const std::uint32_t* x = sends; x < send; ++x) {
      const Transfer& tr = sent(x);
      const Bytes at = send_stage[static_cast<std::size_t>(x - sends)];
      out.steps.push_back({phase, Op::send, at == kNoStage ? Buffer::send : Buffer::stage, tr.to, tr.piece.src, tr.piece.dst, tr.piece.offset,
                           tr.piece.bytes, at});
    }
    // ... and space is released once the phase is over.
    for (const Staged& h : to_free) stage.release(h.stage_offset, h.piece.bytes);
    to_free.clear();
  }
  if (!copied) copy();
  if (!std::is_sorted(out.steps.begin(), out.steps.end(), step_less)) std::sort(out.steps.begin(), out.steps.end(), step_less);
  out.staging_bytes = stage.high_water();
}

Plan lower(const Schedule& s, const CommMatrix& m) {
  const MatrixColumns columns = matrix_columns(m);
  Lowering lowering(s, m, columns, matrix_fingerprint(m));
  Plan plan;
  plan.manifest.ranks = m.ranks;
  plan.manifest.phases = lowering.phases();
  plan.manifest.matrix_fingerprint = lowering.fingerprint();
  plan.ranks.resize(static_cast<std::size_t>(m.ranks));
  for (Rank r = 0; r < m.ranks; ++r) {
    lowering.rank(r, plan.ranks[r]);
    plan.manifest.staging_bytes_max = std::max(plan.manifest.staging_bytes_max, plan.ranks[r].staging_bytes);
  }
  return plan;
}

}  // namespace commfit
