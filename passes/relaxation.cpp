#include "passes/relaxation.h"

#include "ir/error.h"
#include "passes/memory_bound.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace commfit {
namespace {

using I128 = __int128;

struct RelaxedMsg {
  Rank src = 0, dst = 0;
  Bytes size = 0;
};

// A byte range of one message and its route: src -pre-> hold -main-> recv -post-> dst.
struct Seg {
  std::size_t msg = 0;
  Bytes offset = 0, bytes = 0;
  Rank hold = 0, recv = 0;
};

// Adds `need` to b (entries below cap[j]) in proportion to the room cap[j] - b[j]; false when the
// room is short. Deterministic: floor shares, then the remainder in rank order.
bool raise_to(std::vector<Bytes>& b, const std::vector<Bytes>& cap, Bytes& need) {
  I128 room = 0;
  for (std::size_t j = 0; j < b.size(); ++j) room += cap[j] > b[j] ? cap[j] - b[j] : 0;
  if (room == 0 || need == 0) return need == 0;
  const I128 want = std::min<I128>(room, need);
  I128 given = 0;
  std::vector<Bytes> add(b.size(), 0);
  for (std::size_t j = 0; j < b.size(); ++j)
    if (cap[j] > b[j]) {
      add[j] = static_cast<Bytes>(want * I128(cap[j] - b[j]) / room);
      given += add[j];
    }
  for (std::size_t j = 0; j < b.size() && given < want; ++j) {
    const Bytes more = static_cast<Bytes>(std::min<I128>(want - given, I128(cap[j] > b[j] ? cap[j] - b[j] : 0) - add[j]));
    add[j] += more;
    given += more;
  }
  for (std::size_t j = 0; j < b.size(); ++j) b[j] += add[j];
  need -= static_cast<Bytes>(want);
  return need == 0;
}

class Layout {
 public:
  Layout(const CommMatrix& m, std::uint64_t L) : m_(m), L_(L), p_(m.ranks) {
    const auto n = static_cast<std::size_t>(p_);
    r_.assign(n, 0);
    c_.assign(n, 0);
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i == j) return;
      msgs_.push_back({i, j, b});
      r_[i] += b;
      c_[j] += b;
      total_ += b;
    });
    free_.resize(n);
    for (std::size_t j = 0; j < n; ++j) free_[j] = std::min(m.memory[j], total_);
  }

  // Main-phase volumes b_j (sum T) with (L+1) b_j <= L (F_j + r_j) - (L-1) sigma_j; false when
  // they do not add up to T.
  bool volumes(const std::vector<Bytes>& sigma) {
    const auto n = static_cast<std::size_t>(p_);
    std::vector<Bytes> U(n), mid(n);
    b_.assign(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
      const I128 top = I128(L_) * (I128(free_[j]) + r_[j]) - I128(L_ - 1) * sigma[j];
      U[j] = top <= 0 ? 0 : static_cast<Bytes>(top / I128(L_ + 1));
      b_[j] = std::min({r_[j], c_[j], U[j]});
      mid[j] = std::min(std::max(r_[j], c_[j]), U[j]);
    }
    Bytes need = total_;
    for (Bytes x : b_) need -= x;
    // Between min(r, c) and max(r, c) every byte of b_j saves one hop; above, none: fill there last.
    if (raise_to(b_, mid, need)) return true;
    return raise_to(b_, U, need);
  }

  // Holder and receiver assignments for the volumes b_; fills segs_ and the main streams. False
  // (rare) when the only proxy room left is at the source of bytes parked away from it.
  bool assign() {
    const auto n = static_cast<std::size_t>(p_);
    segs_.clear();
    // Holders: rank j keeps min(r_j, b_j) of its own bytes; a donor (r_j > b_j) parks the rest on
    // takers (b_k > r_k) in the pre phase, on the destination itself where it has a message for one.
    std::vector<Bytes> shed(n), take(n), next(msgs_.size(), 0);
    for (std::size_t j = 0; j < n; ++j) {
      shed[j] = r_[j] > b_[j] ? r_[j] - b_[j] : 0;
      take[j] = b_[j] > r_[j] ? b_[j] - r_[j] : 0;
    }
    auto place = [&](std::size_t k, Bytes x, Rank hold, Rank recv) {
      segs_.push_back({k, next[k], x, hold, recv});
      next[k] += x;
    };
    for (std::size_t k = 0; k < msgs_.size(); ++k) {
      const RelaxedMsg& x = msgs_[k];
      const Bytes d = std::min({shed[x.src], take[x.dst], x.size});
      if (d == 0) continue;
      place(k, d, x.dst, x.dst);   // delivered in the pre phase
      shed[x.src] -= d;
      take[x.dst] -= d;
    }
    // Parked first: bytes whose destination receives all of them in the main phases (c <= b), so
    // that the bytes needing a proxy stay with their source (it proxies them itself when it can).
    Rank t = 0;
    for (int sweep = 0; sweep < 2; ++sweep)
    for (std::size_t k = 0; k < msgs_.size(); ++k) {
      const RelaxedMsg& x = msgs_[k];
      if (sweep == 0 && c_[x.dst] > b_[x.dst]) continue;
      while (shed[x.src] > 0 && next[k] < x.size) {
        while (t < p_ && take[t] == 0) ++t;
        commfit_assert(t < p_, "relaxation", "parking space and surplus do not balance");
        const Bytes d = std::min({shed[x.src], take[t], x.size - next[k]});
        place(k, d, t, x.dst);   // t == dst: delivered
        shed[x.src] -= d;
        take[t] -= d;
      }
    }
    for (std::size_t k = 0; k < msgs_.size(); ++k)
      if (next[k] < msgs_[k].size) place(k, msgs_[k].size - next[k], msgs_[k].src, msgs_[k].dst);
    // Receivers: rank j receives min(c_j, b_j) of its own bytes in the main phases (the ones
    // delivered in the pre phase among them); the rest go to proxies (b_k > c_k), which forward
    // them in the post phase: first the holder itself when it has proxy room (no main transfer),
    // then the proxies in rank order.
    std::vector<Bytes> drop(n), room(n);
    for (std::size_t j = 0; j < n; ++j) {
      drop[j] = c_[j] > b_[j] ? c_[j] - b_[j] : 0;
      room[j] = b_[j] > c_[j] ? b_[j] - c_[j] : 0;
    }
    auto relabel = [&](std::size_t s, Bytes x, Rank recv) {   // the first x bytes of segs_[s]
      if (x < segs_[s].bytes) {
        Seg rest = segs_[s];
        rest.offset += x;
        rest.bytes -= x;
        segs_[s].bytes = x;
        segs_.push_back(rest);
      }
      segs_[s].recv = recv;
    };
    // Pass 0: the holder itself. Pass 1: bytes parked away from a source that is itself a proxy
    // (they must not go back to it: it would forward bytes it has already sent), to the first other
    // proxy with room. Pass 2: the rest, to the first proxy with room.
    for (int pass = 0; pass < 3; ++pass) {
      Rank q = 0;
      for (std::size_t s = 0; s < segs_.size(); ++s) {
        const Seg g = segs_[s];
        const Rank dst = msgs_[g.msg].dst, src = msgs_[g.msg].src;
        if (drop[dst] == 0 || g.recv != dst || g.hold == dst) continue;
        Rank use = g.hold;
        if (pass > 0) {
          const bool away = g.hold != src;
          if ((pass == 1) != (away && room[src] > 0)) continue;
          while (q < p_ && room[q] == 0) ++q;
          use = q;
          while (use < p_ && (room[use] == 0 || (away && use == src))) ++use;
          if (use == p_) return false;
        }
        const Bytes x = std::min({drop[dst], room[use], g.bytes});
        if (x == 0) continue;
        relabel(s, x, use);
        drop[dst] -= x;
        room[use] -= x;
      }
    }
    for (std::size_t j = 0; j < n; ++j)
      commfit_assert(drop[j] == 0 && room[j] == 0, "relaxation", "receive assignments do not balance");
    // Streams in (hold, recv) order, segments in message order within each.
    std::sort(segs_.begin(), segs_.end(), [](const Seg& a, const Seg& b) {
      return std::tie(a.hold, a.recv, a.msg, a.offset) < std::tie(b.hold, b.recv, b.msg, b.offset);
    });
    return true;
  }

  // Main-phase peers of every rank in the current assignment.
  std::vector<Bytes> peers() const {
    std::vector<Bytes> sigma(static_cast<std::size_t>(p_), 0);
    for (std::size_t s = 0; s < segs_.size(); ++s) {
      const Seg& g = segs_[s];
      if (g.hold == g.recv) continue;
      if (s == 0 || segs_[s - 1].hold != g.hold || segs_[s - 1].recv != g.recv) ++sigma[g.hold];
    }
    return sigma;
  }

  // The phases: pre (0), main (1..L), post (L+1), empty ones dropped. False when the exact
  // simulation of rule 5 fails (rounding beyond what the reserve covers).
  bool schedule(Schedule& s, Bytes& parked) const {
    s = Schedule{};
    s.ranks = p_;
    s.copies = local_copies(m_);
    const Phase post = static_cast<Phase>(L_ + 1);
    auto piece = [&](const Seg& g, Bytes off, Bytes len) {
      const RelaxedMsg& x = msgs_[g.msg];
      return Piece{x.src, x.dst, off, len};
    };
    for (const Seg& g : segs_) {
      const RelaxedMsg& x = msgs_[g.msg];
      if (g.hold != x.src) s.transfers.push_back({0, x.src, g.hold, piece(g, g.offset, g.bytes)});
      if (g.hold == g.recv && g.recv != x.dst) s.transfers.push_back({post, g.recv, x.dst, piece(g, g.offset, g.bytes)});
    }
    for (std::size_t a = 0; a < segs_.size();) {
      std::size_t e = a;
      Bytes b = 0;
      while (e < segs_.size() && segs_[e].hold == segs_[a].hold && segs_[e].recv == segs_[a].recv) b += segs_[e++].bytes;
      if (segs_[a].hold != segs_[a].recv) {
        // Stream position pos -> main phase t covering [floor((t-1)b/L), floor(tb/L)).
        Bytes pos = 0;
        for (std::size_t k = a; k < e; ++k) {
          const Seg& g = segs_[k];
          Bytes done = 0;
          while (done < g.bytes) {
            std::uint64_t t = static_cast<std::uint64_t>((I128(pos) * L_) / b) + 1;
            while (cut(t, b) <= pos) ++t;   // floor cuts skip phases for small b
            const Bytes len = std::min<Bytes>(cut(t, b), pos + (g.bytes - done)) - pos;
            const Piece pc = piece(g, g.offset + done, len);
            s.transfers.push_back({static_cast<Phase>(t), g.hold, g.recv, pc});
            if (g.recv != pc.dst) s.transfers.push_back({post, g.recv, pc.dst, pc});
            done += len;
            pos += len;
          }
        }
      }
      a = e;
    }
    s.phases = post + 1;
    if (!keeps_memory_rule(s)) return false;
    drop_empty_phases(s);
    if (s.phases == 0 && !s.copies.empty()) s.phases = 1;
    canonicalize(s);
    parked = 0;
    for (const Transfer& t : s.transfers)
      if (t.to != t.piece.dst) parked += t.piece.bytes;
    return true;
  }

  std::vector<Bytes> out_degree() const {
    std::vector<Bytes> d(static_cast<std::size_t>(p_), 0);
    for (const RelaxedMsg& x : msgs_) ++d[x.src];
    return d;
  }

 private:
  Bytes cut(std::uint64_t t, Bytes b) const { return static_cast<Bytes>((I128(t) * b) / L_); }

  // Rule 5, exactly, on the transfers of s.
  bool keeps_memory_rule(const Schedule& s) const {
    const auto n = static_cast<std::size_t>(p_);
    std::vector<I128> fr(n), recv(n), sent(n);
    for (std::size_t r = 0; r < n; ++r) fr[r] = free_[r];
    std::vector<std::size_t> idx(s.transfers.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return s.transfers[a].phase < s.transfers[b].phase; });
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
  Bytes total_ = 0;
  std::vector<RelaxedMsg> msgs_;
  std::vector<Bytes> r_, c_, free_, b_;
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
    // Rounding reserve: (L-1) bytes per main-phase peer; start from the out-degree and grow it to
    // the peers the assignment really has, a few rounds.
    std::vector<Bytes> sigma = layout.out_degree();
    for (int round = 0; round < 6; ++round) {
      if (!layout.volumes(sigma)) break;
      Schedule s;
      Bytes parked = 0;
      if (!layout.assign()) break;
      if (layout.schedule(s, parked)) {
        if (stats) {
          stats->main_phases = L;
          stats->parked_bytes = parked;
        }
        return s;
      }
      const std::vector<Bytes> got = layout.peers();
      bool grew = false;
      for (std::size_t j = 0; j < sigma.size(); ++j)
        if (got[j] > sigma[j]) {
          sigma[j] = got[j];
          grew = true;
        }
      if (!grew) break;
    }
  }
  return std::nullopt;
}

}  // namespace commfit
