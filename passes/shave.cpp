#include "passes/shave.h"

#include "ir/error.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace commfit {
namespace {

// Which phases each rank sends and receives in: one bit per (rank, phase).
class Busy {
 public:
  Busy(Rank p, Phase phases) : words_((static_cast<std::int64_t>(phases) + 63) / 64),
        send_(static_cast<std::size_t>(p * words_), 0), recv_(send_.size(), 0) {}
  void set(Rank u, Rank v, Phase k, bool on) {
    flip(send_[static_cast<std::size_t>(u * words_ + k / 64)], k, on);
    flip(recv_[static_cast<std::size_t>(v * words_ + k / 64)], k, on);
  }
  // Calls f(phase) for every phase where u sends nothing and v receives nothing.
  template <class F>
  void for_each_idle(Rank u, Rank v, Phase phases, F&& f) const {
    for (std::int64_t w = 0; w < words_; ++w) {
      std::uint64_t idle = ~(send_[static_cast<std::size_t>(u * words_ + w)] | recv_[static_cast<std::size_t>(v * words_ + w)]);
      for (; idle; idle &= idle - 1) {
        const std::int64_t k = w * 64 + std::countr_zero(idle);
        if (k >= phases) return;
        f(static_cast<Phase>(k));
      }
    }
  }

 private:
  static void flip(std::uint64_t& word, Phase k, bool on) {
    const std::uint64_t bit = std::uint64_t{1} << (k % 64);
    word = on ? word | bit : word & ~bit;
  }
  std::int64_t words_;
  std::vector<std::uint64_t> send_, recv_;
};

Bytes max_sum(const std::vector<Bytes>& maxima) { return std::accumulate(maxima.begin(), maxima.end(), Bytes{0}); }

}  // namespace

Schedule shave(const Schedule& s, ShaveReport* report, double max_work) {
  ShaveReport local;
  ShaveReport& r = report ? *report : local;
  r = {};
  r.phases_in = r.phases_out = s.phases;
  std::vector<Bytes> maxima = phase_max_piece(s);
  r.max_sum_in = r.max_sum_out = max_sum(maxima);
  if (static_cast<double>(s.transfers.size()) * s.phases > max_work) {
    r.skipped = true;
    return s;
  }
  std::vector<Transfer> ts = s.transfers;
  std::vector<std::vector<std::size_t>> in_phase(s.phases);
  Busy busy(s.ranks, s.phases);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Transfer& t = ts[i];
    commfit_assert(t.from == t.piece.src && t.to == t.piece.dst, "shave", "needs a direct schedule");
    in_phase[t.phase].push_back(i);
    busy.set(t.from, t.to, t.phase, true);
  }
  // Phases that may receive chunks, largest piece first (their order is fixed up front; the
  // capacity used is always the phase's current largest piece).
  std::vector<Phase> by_max(s.phases);
  std::iota(by_max.begin(), by_max.end(), Phase{0});
  std::stable_sort(by_max.begin(), by_max.end(), [&](Phase a, Phase b) { return maxima[a] > maxima[b]; });
  std::vector<Phase> order(by_max.rbegin(), by_max.rend());   // smallest phase first
  std::vector<bool> removed(ts.size(), false);

  for (Phase k : order) {
    if (maxima[k] == 0) continue;
    auto capacity = [&](const Transfer& t) {
      Bytes cap = 0;
      busy.for_each_idle(t.from, t.to, s.phases, [&](Phase j) { if (j != k) cap += maxima[j]; });
      return cap;
    };
    Bytes level = 0;
    for (std::size_t i : in_phase[k]) {
      const Bytes b = ts[i].piece.bytes, cap = capacity(ts[i]);
      level = std::max(level, b > cap ? b - cap : Bytes{0});
    }
    if (level >= maxima[k]) continue;
    std::vector<std::size_t> keep;
    for (std::size_t i : in_phase[k]) {
      if (ts[i].piece.bytes <= level) {
        keep.push_back(i);
        continue;
      }
      // Move the tail beyond `level` into idle phases, largest first. Copies, since ts grows.
      const Transfer t = ts[i];
      Bytes offset = t.piece.offset + level, left = t.piece.bytes - level;
      std::vector<Phase> idle;
      busy.for_each_idle(t.from, t.to, s.phases, [&](Phase j) { if (j != k && maxima[j] > 0) idle.push_back(j); });
      std::stable_sort(idle.begin(), idle.end(), [&](Phase a, Phase b) { return maxima[a] > maxima[b]; });
      for (Phase j : idle) {
        if (left == 0) break;
        const Bytes c = std::min(left, maxima[j]);
        ts.push_back({j, t.from, t.to, {t.piece.src, t.piece.dst, offset, c}});
        removed.push_back(false);
        in_phase[j].push_back(ts.size() - 1);
        busy.set(t.from, t.to, j, true);
        offset += c;
        left -= c;
        ++r.chunks_moved;
      }
      commfit_assert(left == 0, "shave", "idle capacity ran out below the computed level");
      if (level > 0) {
        ts[i].piece.bytes = level;
        keep.push_back(i);
      } else {
        removed[i] = true;
        busy.set(t.from, t.to, k, false);
      }
    }
    in_phase[k] = std::move(keep);
    maxima[k] = level;
  }

  // Renumber the phases that still carry traffic.
  std::vector<Phase> renumber(s.phases, 0);
  Phase next = 0;
  for (Phase k = 0; k < s.phases; ++k) renumber[k] = in_phase[k].empty() ? 0 : next++;
  Schedule out;
  out.ranks = s.ranks;
  out.phases = next;
  out.copies = s.copies;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (removed[i]) continue;
    Transfer t = ts[i];
    t.phase = renumber[t.phase];
    out.transfers.push_back(t);
  }
  canonicalize(out);
  r.phases_out = out.phases;
  r.max_sum_out = max_sum(phase_max_piece(out));
  return out;
}

}  // namespace commfit
