#include "passes/relaxation.h"

#include "ir/error.h"
#include "passes/memory_bound.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace commfit {
namespace {

using I128 = __int128;

// A byte range of one message and its route: src -pre-> holder -main-> recv -post-> dst.
// holder == dst means delivered in the pre phase (then recv == dst); otherwise holder != recv.
struct Seg {
  Piece piece;
  Rank holder = 0;
  Rank recv = 0;
};

class Layout {
 public:
  Layout(const CommMatrix& m, std::uint64_t L) : m_(m), L_(L), p_(m.ranks) {
    const auto n = static_cast<std::size_t>(p_);
    p_in_.assign(n, 0);
    p_out_.assign(n, 0);
    beta_.assign(n, 0);
    col_.assign(n, 0);
    out_pair_.resize(n);
    in_pair_.resize(n);
    Bytes total = 0;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != j) total += b;
    });
    free_.resize(n);
    for (std::size_t r = 0; r < n; ++r) free_[r] = std::min(m.memory[r], total);
  }

  // Steps 1 (balance) and 2 (open up space); false when the greedy cannot fit L main phases.
  bool build() {
    balance();
    return open_space();
  }

  // The phases: pre (0), main (1..L), post (L+1), empty ones dropped. Empty optional when the
  // exact simulation of rule 5 fails (rounding beyond what the slack covers).
  bool schedule(Schedule& s, Bytes& parked) const {
    s = Schedule{};
    s.ranks = p_;
    s.copies = local_copies(m_);
    const Phase post = static_cast<Phase>(L_ + 1);
    for (const Seg& g : segs_)
      if (g.piece.bytes > 0 && g.holder != g.piece.src) s.transfers.push_back({0, g.piece.src, g.holder, g.piece});
    std::vector<std::size_t> list;
    for (const auto& [pair, all] : pair_segs_) {
      const auto [holder, recv] = pair;
      // A segment may be listed twice (moved away and back): once each, in creation order.
      list.clear();
      for (std::size_t k : all)
        if (live(k, holder, recv)) list.push_back(k);
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      Bytes b = 0;
      for (std::size_t k : list) b += segs_[k].piece.bytes;
      if (b == 0) continue;
      // Stream position `pos` of this pair -> phase t covering [floor((t-1)b/L), floor(tb/L)).
      Bytes pos = 0;
      for (std::size_t k : list) {
        const Seg& g = segs_[k];
        Bytes done = 0;
        while (done < g.piece.bytes) {
          // Phase of stream byte `pos`: the t with floor((t-1)b/L) <= pos < floor(tb/L).
          const auto t = static_cast<std::uint64_t>((static_cast<I128>(pos) * L_) / b) + 1;
          std::uint64_t tt = t;
          while (cut(tt, b) <= pos) ++tt;   // floor cuts may skip phases for small b
          const Bytes end = std::min<Bytes>(cut(tt, b), pos + (g.piece.bytes - done));
          const Bytes len = end - pos;
          const Piece piece{g.piece.src, g.piece.dst, g.piece.offset + done, len};
          s.transfers.push_back({static_cast<Phase>(tt), holder, recv, piece});
          if (recv != g.piece.dst) s.transfers.push_back({post, recv, g.piece.dst, piece});
          done += len;
          pos += len;
        }
      }
    }
    s.phases = post + 1;
    if (!keeps_memory_rule(s)) return false;
    // Drop empty phases (free memory at each remaining phase start is unchanged).
    std::vector<Phase> used(s.phases, 0);
    for (const Transfer& t : s.transfers) used[t.phase] = 1;
    std::vector<Phase> renum(s.phases, 0);
    Phase next = 0;
    for (Phase k = 0; k < s.phases; ++k) {
      renum[k] = next;
      next += used[k];
    }
    for (Transfer& t : s.transfers) t.phase = renum[t.phase];
    s.phases = next;
    if (s.phases == 0 && !s.copies.empty()) s.phases = 1;
    canonicalize(s);
    parked = 0;
    for (const Transfer& t : s.transfers)
      if (t.to != t.piece.dst) parked += t.piece.bytes;
    return true;
  }

 private:
  Bytes cut(std::uint64_t t, Bytes b) const {
    return static_cast<Bytes>((static_cast<I128>(t) * b) / L_);
  }
  bool live(std::size_t k, Rank holder, Rank recv) const {
    const Seg& g = segs_[k];
    return g.piece.bytes > 0 && g.holder == holder && g.recv == recv;
  }

  I128 G(Rank j) const { return I128(free_[j]) - I128(p_in_[j]) + I128(p_out_[j]); }
  I128 slack(Rank j) const {
    return I128(L_) * (G(j) - I128(out_pair_[j].size())) - I128(beta_[j]);
  }

  // Adds (sign +1) or removes (-1) a segment's contributions to the per-rank sums.
  void account(const Seg& g, int sign, std::size_t index) {
    const Bytes b = g.piece.bytes;
    auto add = [sign](Bytes& x, Bytes v) { x = sign > 0 ? x + v : x - v; };
    if (g.holder != g.piece.src) {
      add(p_in_[g.holder], b);
      add(p_out_[g.piece.src], b);
    }
    if (g.holder != g.recv) {
      add(beta_[g.holder], b);
      add(col_[g.recv], b);
      auto bump = [&](std::map<Rank, Bytes>& mp, Rank key) {
        Bytes& v = mp[key];
        add(v, b);
        if (v == 0) mp.erase(key);
      };
      bump(out_pair_[g.holder], g.recv);
      bump(in_pair_[g.recv], g.holder);
      if (sign > 0) {
        auto& list = pair_segs_[{g.holder, g.recv}];
        if (list.empty() || list.back() != index) list.push_back(index);
      }
    }
  }

  void add_seg(const Seg& g) {
    segs_.push_back(g);
    account(g, +1, segs_.size() - 1);
  }

  // Re-routes the first `x` bytes of segment k (x <= its bytes) with new holder / receiver.
  void reroute(std::size_t k, Bytes x, Rank holder, Rank recv) {
    Seg front = segs_[k];
    front.piece.bytes = x;
    account(front, -1, k);
    if (x == segs_[k].piece.bytes) {
      segs_[k].holder = holder;
      segs_[k].recv = recv;
      account(segs_[k], +1, k);
    } else {
      segs_[k].piece.offset += x;
      segs_[k].piece.bytes -= x;
      front.holder = holder;
      front.recv = recv;
      add_seg(front);
    }
  }

  // Step 1: net senders ship their surplus r_j - c_j to net receivers (directly when they have a
  // message for one, else parked there); net receiver k takes in exactly c_k - r_k <= F_k.
  void balance() {
    struct Msg { Rank src, dst; Bytes size, next; };
    std::vector<Msg> msgs;
    std::vector<I128> e(static_cast<std::size_t>(p_), 0);   // r_j - c_j, then what is left of it
    m_.for_each([&](Rank i, Rank j, Bytes b) {
      if (i == j) return;
      msgs.push_back({i, j, b, 0});
      e[i] += b;
      e[j] -= b;
    });
    auto take = [&](Msg& x, Bytes b, Rank holder, Rank recv) {
      add_seg({{x.src, x.dst, x.next, b}, holder, recv});
      x.next += b;
      e[x.src] -= b;
      e[holder] += b;
    };
    for (Msg& x : msgs) {   // direct, in (src, dst) order
      if (e[x.src] <= 0 || e[x.dst] >= 0) continue;
      const Bytes b = static_cast<Bytes>(std::min<I128>({I128(x.size - x.next), e[x.src], -e[x.dst]}));
      take(x, b, x.dst, x.dst);
    }
    Rank k = 0;   // next net receiver with room
    for (Msg& x : msgs) {
      while (e[x.src] > 0 && x.next < x.size) {
        while (k < p_ && e[k] >= 0) ++k;
        commfit_assert(k < p_, "relaxation", "surplus and deficit do not balance");
        const Bytes b = static_cast<Bytes>(std::min<I128>({I128(x.size - x.next), e[x.src], -e[k]}));
        take(x, b, k, x.dst);   // k == x.dst: delivered
      }
    }
    for (Msg& x : msgs)
      if (x.next < x.size) add_seg({{x.src, x.dst, x.next, x.size - x.next}, x.src, x.dst});
    for (Rank j = 0; j < p_; ++j)
      commfit_assert(beta_[j] == col_[j], "relaxation", "rank " + std::to_string(j) + " is not balanced");
  }

  // Step 2: hand equal send and receive assignments from ranks without enough slack to helpers.
  bool open_space() {
    const std::size_t cap_moves = 64 * static_cast<std::size_t>(p_) + 4 * segs_.size() + 64;
    std::vector<Rank> helpers(static_cast<std::size_t>(p_));
    for (std::size_t moves = 0;; ++moves) {
      Rank j = -1;
      I128 worst = 0;
      for (Rank r = 0; r < p_; ++r)
        if (const I128 s = slack(r); s < worst) {
          worst = s;
          j = r;
        }
      if (j < 0) return true;
      if (moves > cap_moves) return false;
      const I128 need = (-worst + I128(L_)) / I128(L_ + 1);   // ceil(-worst / (L + 1))
      std::iota(helpers.begin(), helpers.end(), Rank{0});
      std::vector<I128> sl(helpers.size());
      for (Rank r = 0; r < p_; ++r) sl[r] = slack(r);
      std::stable_sort(helpers.begin(), helpers.end(), [&](Rank a, Rank b) { return sl[a] > sl[b]; });
      bool moved = false;
      for (Rank h : helpers) {
        if (h == j) continue;
        const I128 by_slack = (sl[h] - I128(L_)) / I128(L_ + 1);
        const I128 by_pre = I128(free_[h]) - I128(p_in_[h]);
        if (by_slack <= 0) break;   // sorted by slack: no later helper has any
        const I128 cap = std::min(by_slack, by_pre);
        if (cap <= 0) continue;
        if (move(j, h, static_cast<Bytes>(std::min(need, cap)))) {
          moved = true;
          break;
        }
      }
      if (!moved) return false;
    }
  }

  // Moves up to `x` bytes of j's main sends (one receiver group) and as many of its main receipts
  // (one holder group) to helper h; false when nothing could move.
  bool move(Rank j, Rank h, Bytes x) {
    // Row group: a receiver rv != h of j, preferring one h already sends to, then the largest.
    auto pick = [&](const std::map<Rank, Bytes>& groups, auto&& prefer, auto&& allowed) {
      Rank best = -1;
      bool best_pref = false;
      Bytes best_bytes = 0;
      for (const auto& [r, b] : groups) {
        if (!allowed(r)) continue;
        const bool pr = prefer(r);
        if (best < 0 || pr > best_pref || (pr == best_pref && b > best_bytes)) {
          best = r;
          best_pref = pr;
          best_bytes = b;
        }
      }
      return best;
    };
    const Rank rv = pick(out_pair_[j], [&](Rank r) { return out_pair_[h].count(r) > 0; },
                         [&](Rank r) { return r != h; });
    const Rank hi = pick(in_pair_[j], [&](Rank i) { return out_pair_[i].count(h) > 0; },
                         [&](Rank i) { return i != h; });
    if (rv < 0 || hi < 0) return false;
    // Row bytes may not include pieces destined to h (h would hold its own final data).
    Bytes row = 0;
    for (std::size_t k : pair_segs_[{j, rv}])
      if (live(k, j, rv) && segs_[k].piece.dst != h) row += segs_[k].piece.bytes;
    // Receive bytes may not include pieces from h (h would get its own data back to forward).
    Bytes col = 0;
    for (std::size_t k : pair_segs_[{hi, j}])
      if (live(k, hi, j) && segs_[k].piece.src != h) col += segs_[k].piece.bytes;
    x = std::min({x, row, col});
    if (x == 0) return false;
    Bytes left = x;
    const std::vector<std::size_t> row_list = pair_segs_[{j, rv}];
    for (std::size_t k : row_list) {
      if (left == 0) break;
      if (!live(k, j, rv) || segs_[k].piece.dst == h) continue;
      const Bytes b = std::min(left, segs_[k].piece.bytes);
      reroute(k, b, h, rv);
      left -= b;
    }
    left = x;
    const std::vector<std::size_t> col_list = pair_segs_[{hi, j}];
    for (std::size_t k : col_list) {
      if (left == 0) break;
      if (!live(k, hi, j) || segs_[k].piece.src == h) continue;
      const Bytes b = std::min(left, segs_[k].piece.bytes);
      reroute(k, b, hi, h);   // hi -> h in the main phases, h -> dst in the post phase
      left -= b;
    }
    commfit_assert(left == 0, "relaxation", "receive group smaller than its total");
    return true;
  }

  // Rule 5, exactly, on the transfers of s.
  bool keeps_memory_rule(const Schedule& s) const {
    const auto n = static_cast<std::size_t>(p_);
    std::vector<std::vector<std::pair<Rank, Bytes>>> in(s.phases), out(s.phases);
    std::vector<I128> fr(n), recv(n), sent(n);
    for (std::size_t r = 0; r < n; ++r) fr[r] = free_[r];
    std::vector<std::size_t> idx(s.transfers.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return s.transfers[a].phase < s.transfers[b].phase;
    });
    std::size_t k = 0;
    for (Phase ph = 0; ph < s.phases; ++ph) {
      std::fill(recv.begin(), recv.end(), 0);
      std::fill(sent.begin(), sent.end(), 0);
      for (; k < idx.size() && s.transfers[idx[k]].phase == ph; ++k) {
        const Transfer& t = s.transfers[idx[k]];
        recv[t.to] += t.piece.bytes;
        sent[t.from] += t.piece.bytes;
      }
      for (std::size_t r = 0; r < n; ++r) {
        if (recv[r] > fr[r]) return false;
        fr[r] += sent[r] - recv[r];
      }
    }
    return true;
  }

  const CommMatrix& m_;
  std::uint64_t L_;
  Rank p_;
  std::vector<Bytes> free_, p_in_, p_out_, beta_, col_;
  std::vector<std::map<Rank, Bytes>> out_pair_, in_pair_;   // holder -> (recv -> bytes), recv -> (holder -> bytes)
  std::map<std::pair<Rank, Rank>, std::vector<std::size_t>> pair_segs_;
  std::vector<Seg> segs_;
};

}  // namespace

std::optional<Schedule> relaxation(const CommMatrix& m, const RelaxationOptions& o, RelaxationStats* stats) {
  if (const std::string why = memory_feasibility(m); !why.empty()) throw UsageError("strategy memory: " + why);
  const MemoryBound lb = memory_lower_bound(m);
  const std::uint64_t L0 = std::max<std::uint64_t>(lb.volume_bound, 1);
  for (std::uint64_t L = L0; L <= L0 + o.max_extra_phases; ++L) {
    if (L + 2 > (std::uint64_t{1} << 30))
      throw UsageError("strategy memory: relaxation would need more than 2^30 phases: give the ranks more free memory");
    Layout layout(m, L);
    Schedule s;
    Bytes parked = 0;
    if (layout.build() && layout.schedule(s, parked)) {
      if (stats) {
        stats->main_phases = L;
        stats->parked_bytes = parked;
      }
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace commfit
