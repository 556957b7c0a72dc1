#include "passes/level_search.h"

#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <tuple>

namespace commfit {
namespace {

using Mask = std::uint64_t;   // a message's phases, bit k = phase k
constexpr std::int64_t kMaxSearchPhases = 64;
constexpr std::int64_t kMinMoves = 1000;

struct Demand {
  Rank u, v;
  Bytes bytes;
};

// Pieces of a message over its phases under levels T: largest level first, min(left, T_k) each.
// Calls f(k, bytes) for every phase that gets bytes.
template <class F>
void cut(Bytes size, Mask mask, const std::vector<Bytes>& T, F&& f) {
  int order[kMaxSearchPhases];
  int n = 0;
  for (Mask x = mask; x; x &= x - 1) order[n++] = std::countr_zero(x);
  std::sort(order, order + n, [&](int a, int b) { return std::tie(T[b], a) < std::tie(T[a], b); });
  Bytes left = size;
  for (int i = 0; i < n && left > 0; ++i) {
    const Bytes x = std::min(left, T[static_cast<std::size_t>(order[i])]);
    if (x > 0) f(order[i], x);
    left -= x;
  }
}

// The tabu search over the messages' phase sets. The sets and the port occupancy persist from
// one attempt to the next: an attempt re-places only the messages the new levels displace and
// undoes its moves if it fails, so its fixed cost is a scan of the messages, not a rebuild.
class Search {
 public:
  Search(Rank p, std::int64_t P, std::vector<Demand> msg, std::vector<Mask> start, std::uint64_t seed,
         std::int64_t max_scored)
      : p_(p), P_(P), msg_(std::move(msg)), cur_(std::move(start)), rng_(seed), max_scored_(max_scored) {
    port_msgs_.resize(2 * static_cast<std::size_t>(p));
    for (std::size_t e = 0; e < msg_.size(); ++e) {
      port_msgs_[sender(e)].push_back(static_cast<std::int32_t>(e));
      port_msgs_[receiver(e)].push_back(static_cast<std::int32_t>(e));
    }
    occ_.assign(2 * static_cast<std::size_t>(p) * static_cast<std::size_t>(P), 0);
    busy_.assign(2 * static_cast<std::size_t>(p), 0);
    for (std::size_t e = 0; e < msg_.size(); ++e) put(e, cur_[e], 1);
    in_conflict_.assign(msg_.size(), 0);
    tabu_.assign(msg_.size(), {0, 0});
  }

  // Whether the start sets are conflict-free and each holds its message under T; if so, T
  // becomes the levels.
  bool start(const std::vector<Bytes>& T) {
    set_levels(T);
    for (std::size_t e = 0; e < msg_.size(); ++e)
      if (cur_[e] == 0 || !holds(e, cur_[e]) || conflicted(e)) return false;
    return true;
  }

  // Moves to levels U: every message whose set no longer holds it is re-placed (largest first)
  // in its best-scoring admissible set, then the search runs until no rank is in two pieces of a
  // phase (true) or `budget` moves are spent (false: every move undone, the levels kept).
  bool attempt(const std::vector<Bytes>& U, std::int64_t budget, std::int64_t& moves) {
    const std::vector<Bytes> before = T_;
    Mask lowered = 0;   // only a message in a lowered phase can be displaced
    for (int k = 0; k < P_; ++k)
      if (U[static_cast<std::size_t>(k)] < before[static_cast<std::size_t>(k)]) lowered |= Mask{1} << k;
    set_levels(U);
    journal_.clear();
    std::vector<std::int32_t> displaced;
    for (std::size_t e = 0; e < msg_.size(); ++e)
      if ((cur_[e] & lowered) != 0 && !holds(e, cur_[e])) displaced.push_back(static_cast<std::int32_t>(e));
    std::stable_sort(displaced.begin(), displaced.end(), [&](std::int32_t a, std::int32_t b) {
      return msg_[static_cast<std::size_t>(a)].bytes > msg_[static_cast<std::size_t>(b)].bytes;
    });
    for (std::int32_t x : displaced) {
      const std::size_t e = static_cast<std::size_t>(x);
      put(e, cur_[e], -1);
      const Mask next = best_set(e, false);
      if (next == 0) {   // no admissible set at all
        put(e, cur_[e], 1);
        undo(before);
        return false;
      }
      move(e, next);
    }
    for (std::int64_t it = 0;;) {
      if (conflict_.empty()) return true;
      if (it == budget || scored_ >= max_scored_) break;
      const std::size_t i = rng_.below(conflict_.size());
      const std::size_t e = static_cast<std::size_t>(conflict_[i]);
      if (!conflicted(e)) {   // resolved by another move since it was listed
        in_conflict_[e] = 0;
        conflict_[i] = conflict_.back();
        conflict_.pop_back();
        continue;
      }
      ++it;
      ++moves;
      ++clock_;
      put(e, cur_[e], -1);
      const Mask next = best_set(e, true);
      tabu_[e] = {cur_[e], clock_ + 1 + static_cast<std::int64_t>(rng_.below(2))};
      move(e, next);
    }
    undo(before);
    return false;
  }

  const std::vector<Mask>& sets() const { return cur_; }
  bool spent() const { return scored_ >= max_scored_; }

  // The largest piece of each phase when the current sets are cut under the current levels.
  std::vector<Bytes> maxima() const {
    std::vector<Bytes> top(static_cast<std::size_t>(P_), 0);
    for (std::size_t e = 0; e < msg_.size(); ++e) {
      if ((cur_[e] & (cur_[e] - 1)) == 0) {   // one phase: the whole message
        Bytes& t = top[static_cast<std::size_t>(std::countr_zero(cur_[e]))];
        t = std::max(t, msg_[e].bytes);
        continue;
      }
      cut(msg_[e].bytes, cur_[e], T_, [&](int k, Bytes x) {
        Bytes& t = top[static_cast<std::size_t>(k)];
        t = std::max(t, x);
      });
    }
    return top;
  }

 private:
  void set_levels(const std::vector<Bytes>& T) {
    T_ = T;
    by_level_.resize(static_cast<std::size_t>(P_));
    for (int k = 0; k < P_; ++k) by_level_[static_cast<std::size_t>(k)] = k;
    std::sort(by_level_.begin(), by_level_.end(), [&](int a, int b) {
      return std::tie(T_[static_cast<std::size_t>(b)], a) < std::tie(T_[static_cast<std::size_t>(a)], b);
    });
  }
  Bytes level(int k) const { return T_[static_cast<std::size_t>(k)]; }
  std::size_t sender(std::size_t e) const { return Port::sender(msg_[e].u).index(); }          // its port
  std::size_t receiver(std::size_t e) const { return Port::receiver(p_, msg_[e].v).index(); }   // its port
  bool holds(std::size_t e, Mask m) const {
    Bytes room = 0;
    for (Mask x = m; x; x &= x - 1) room += level(std::countr_zero(x));
    return room >= msg_[e].bytes;
  }
  std::int32_t& occ(std::size_t port, int k) { return occ_[port * static_cast<std::size_t>(P_) + static_cast<std::size_t>(k)]; }
  void put(std::size_t e, Mask m, std::int32_t d) {
    for (Mask x = m; x; x &= x - 1) {
      const int k = std::countr_zero(x);
      for (const std::size_t port : {sender(e), receiver(e)}) {
        const std::int32_t n = occ(port, k) += d;
        if (n == 0) busy_[port] &= ~(Mask{1} << k);
        else busy_[port] |= Mask{1} << k;
      }
    }
  }
  // e (already taken out of the occupancy) into set m, journaled; messages it now meets are listed.
  void move(std::size_t e, Mask m) {
    journal_.push_back({static_cast<std::int32_t>(e), cur_[e]});
    cur_[e] = m;
    put(e, m, 1);
    flag_port(sender(e), m);
    flag_port(receiver(e), m);
  }
  void undo(const std::vector<Bytes>& levels) {
    for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
      const std::size_t e = static_cast<std::size_t>(it->first);
      put(e, cur_[e], -1);
      cur_[e] = it->second;
      put(e, cur_[e], 1);
    }
    journal_.clear();
    for (std::int32_t e : conflict_) in_conflict_[static_cast<std::size_t>(e)] = 0;
    conflict_.clear();
    set_levels(levels);
  }
  // The best-scoring admissible set of e, 0 if it has none. Admissible: one phase whose level
  // holds it, two smaller levels that add up to it, or its current set if larger and still
  // holding it. Score: 4 per occupied port-phase the set meets plus its size (fewest conflicts,
  // then fewest pieces), so a free single phase (score 1) beats every pair (2 or more). In a move
  // (ties broken at random) not its current set nor the set it left within the tenure; it stays
  // put if that leaves nothing.
  Mask best_set(std::size_t e, bool moving) {
    const Mask bu = busy_[sender(e)], bv = busy_[receiver(e)];
    Mask best = 0;
    std::int64_t best_score = 0, ties = 0;
    auto consider = [&](Mask m, std::int64_t pieces) {
      ++scored_;
      if (moving && (m == cur_[e] || (m == tabu_[e].first && tabu_[e].second > clock_))) return;
      std::int64_t c = pieces;
      for (Mask x = m; x; x &= x - 1) {
        const Mask bit = x & (~x + 1);
        c += 4 * (((bu & bit) != 0) + ((bv & bit) != 0));
      }
      if (best == 0 || c < best_score) {
        best = m;
        best_score = c;
        ties = 1;
      } else if (moving && c == best_score && rng_.below(static_cast<std::uint64_t>(++ties)) == 0) {
        best = m;
      }
    };
    const Bytes s = msg_[e].bytes;
    std::size_t small = 0;   // by_level_[small..] are the levels below s
    while (small < by_level_.size() && level(by_level_[small]) >= s) consider(Mask{1} << by_level_[small++], 1);
    if (best != 0 && best_score == 1) return best;
    for (std::size_t i = small; i < by_level_.size(); ++i)
      for (std::size_t j = i + 1; j < by_level_.size() && level(by_level_[i]) + level(by_level_[j]) >= s; ++j)
        consider((Mask{1} << by_level_[i]) | (Mask{1} << by_level_[j]), 2);
    if (std::popcount(cur_[e]) > 2 && holds(e, cur_[e])) consider(cur_[e], std::popcount(cur_[e]));
    return best ? best : (moving ? cur_[e] : 0);
  }
  bool conflicted(std::size_t e) {
    for (Mask x = cur_[e]; x; x &= x - 1) {
      const int k = std::countr_zero(x);
      if (occ(sender(e), k) > 1 || occ(receiver(e), k) > 1) return true;
    }
    return false;
  }
  void flag(std::size_t e) {
    if (in_conflict_[e]) return;
    in_conflict_[e] = 1;
    conflict_.push_back(static_cast<std::int32_t>(e));
  }
  void flag_port(std::size_t port, Mask m) {
    for (Mask x = m; x; x &= x - 1) {
      const int k = std::countr_zero(x);
      if (occ(port, k) > 1)
        for (std::int32_t f : port_msgs_[port])
          if (cur_[static_cast<std::size_t>(f)] >> k & 1) flag(static_cast<std::size_t>(f));
    }
  }

  Rank p_;
  std::int64_t P_;
  std::vector<Demand> msg_;
  std::vector<Mask> cur_;
  Rng rng_;
  std::vector<std::vector<std::int32_t>> port_msgs_;   // senders 0..p-1, receivers p..2p-1
  std::vector<Bytes> T_;
  std::vector<int> by_level_;        // phases, largest level first
  std::vector<std::int32_t> occ_;    // pieces per port and phase
  std::vector<Mask> busy_;           // per port, the phases with occ_ > 0
  std::vector<char> in_conflict_;
  std::vector<std::int32_t> conflict_;   // may hold messages no longer in conflict
  std::vector<std::pair<std::int32_t, Mask>> journal_;   // (message, set before) this attempt
  std::vector<std::pair<Mask, std::int64_t>> tabu_;      // the set last left, barred until clock_
  std::int64_t clock_ = 0;           // moves so far
  std::int64_t scored_ = 0;          // sets scored so far: the work
  std::int64_t max_scored_;
};

}  // namespace

Schedule level_search(const CommMatrix& m, const Schedule& s, const LevelSearchOptions& o, LevelSearchReport* report) {
  commfit_assert(o.effort >= 0 && o.probe >= 0 && o.step > 0 && o.step < 1, "level_search", "bad options");
  LevelSearchReport local;
  LevelSearchReport& r = report ? *report : local;
  r = {};
  const std::int64_t P = s.phases;
  if (P == 0 || P > kMaxSearchPhases || s.transfers.empty()) return s;
  commfit_assert(o.target.empty() || static_cast<std::int64_t>(o.target.size()) == P, "level_search", "target levels != phases");

  std::vector<Demand> msg;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j && b > 0) msg.push_back({i, j, b});
  });
  std::sort(msg.begin(), msg.end(), [](const Demand& a, const Demand& b) {
    return std::tie(a.u, a.v) < std::tie(b.u, b.v);
  });
  std::vector<Mask> start(msg.size(), 0);
  std::vector<Bytes> T = phase_max_piece(s);
  T.resize(static_cast<std::size_t>(P), 0);
  for (const Transfer& t : s.transfers) {
    commfit_assert(t.from == t.piece.src && t.to == t.piece.dst, "level_search", "not a direct schedule");
    const auto it = std::lower_bound(msg.begin(), msg.end(), t.piece, [](const Demand& a, const Piece& b) {
      return std::tie(a.u, a.v) < std::tie(b.src, b.dst);
    });
    commfit_assert(it != msg.end() && it->u == t.piece.src && it->v == t.piece.dst, "level_search", "piece of no message");
    start[static_cast<std::size_t>(it - msg.begin())] |= Mask{1} << t.phase;
  }

  // Work: at most work_per_message sets scored per message, and max_work in all.
  const std::int64_t work = std::min(o.max_work, o.work_per_message * static_cast<std::int64_t>(msg.size()));
  Search search(s.ranks, P, msg, start, o.seed, work);
  if (!search.start(T)) return s;   // not a valid schedule of m: left to the verifier
  // levels: those the current sets hold under (lowered one at a time); best: the least sum of
  // maxima seen, with its sets (a message's pieces fit under the maxima its own cut produced).
  std::vector<Bytes> levels = T, best = search.maxima();
  std::vector<Mask> best_sets = search.sets();
  const auto sum = [](const std::vector<Bytes>& v) { return std::accumulate(v.begin(), v.end(), Bytes{0}); };
  const Bytes input_sum = sum(best);
  Bytes best_sum = input_sum;
  auto attempt = [&](const std::vector<Bytes>& U, std::int64_t moves) {
    ++r.attempts;
    if (!search.attempt(U, moves, r.moves)) return false;
    ++r.accepted;
    levels = U;
    std::vector<Bytes> top = search.maxima();
    if (sum(top) < best_sum) {
      best_sum = sum(top);
      best = std::move(top);
      best_sets = search.sets();
    }
    return true;
  };
  const std::int64_t messages = static_cast<std::int64_t>(msg.size());
  // Budgets in moves per message, at least kMinMoves (a small matrix still gets a search).
  const std::int64_t full = std::max(kMinMoves, o.effort * messages);
  const std::int64_t probe = std::max(kMinMoves, o.probe * messages);
  if (!o.target.empty()) r.target_met = attempt(o.target, full);
  auto descend = [&](std::int64_t moves) {
    std::vector<char> stuck(static_cast<std::size_t>(P), 0);
    for (;;) {   // the largest level not yet stuck
      std::size_t k = levels.size();
      for (std::size_t j = 0; j < levels.size(); ++j)
        if (!stuck[j] && levels[j] > 0 && (k == levels.size() || levels[j] > levels[k])) k = j;
      if (k == levels.size() || search.spent()) break;
      std::vector<Bytes> U = levels;
      U[k] = std::min(levels[k] - 1, static_cast<Bytes>(static_cast<double>(levels[k]) * (1 - o.step)));
      if (!attempt(U, moves)) stuck[k] = 1;
    }
  };
  descend(probe);
  if (r.accepted > 0) descend(full);
  // Trades: where no level comes down alone, one may by giving part of what it loses to another,
  // the largest level first, against the smallest first; after a trade, the descent again.
  for (bool traded = o.trade > 0; traded && !search.spent();) {
    traded = false;
    std::vector<std::size_t> order(static_cast<std::size_t>(P));
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return levels[a] > levels[b]; });
    for (std::size_t a = 0; a < order.size() && !traded && !search.spent(); ++a)
      for (std::size_t b = order.size(); b-- > 0 && !traded && !search.spent();) {
        const std::size_t k = order[a], j = order[b];
        if (j == k || levels[j] == 0) continue;
        const Bytes down = std::max<Bytes>(2, static_cast<Bytes>(static_cast<double>(levels[k]) * o.step));
        if (down >= levels[k]) continue;
        std::vector<Bytes> U = levels;
        U[k] -= down;
        U[j] += static_cast<Bytes>(static_cast<double>(down) * o.trade);
        traded = attempt(U, probe);
      }
    if (traded) {
      descend(probe);
      descend(full);
    }
  }
  if (best_sum >= input_sum) return s;

  // Cut the best sets under their maxima; phases no piece took are dropped.
  Schedule out;
  out.ranks = s.ranks;
  out.phases = s.phases;
  out.copies = s.copies;
  for (std::size_t e = 0; e < msg.size(); ++e) {
    Bytes offset = 0;
    cut(msg[e].bytes, best_sets[e], best, [&](int k, Bytes x) {
      out.transfers.push_back({static_cast<Phase>(k), msg[e].u, msg[e].v, {msg[e].u, msg[e].v, offset, x}});
      offset += x;
    });
  }
  drop_empty_phases(out);
  canonicalize(out);
  r.applied = true;
  return out;
}

}  // namespace commfit
