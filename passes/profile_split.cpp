#include "passes/profile_split.h"

#include "passes/bipartite_matching.h"

#include "ir/error.h"
#include "passes/level_search.h"

#include <algorithm>
#include <limits>

namespace commfit {
namespace {

// A piece of a message: bytes [offset, offset + bytes) of src -> dst.
struct Item {
  Rank u, v;
  Bytes offset, bytes;
};

// Ports: senders 0..p-1, receivers p..2p-1.
using Profile = std::vector<Bytes>;   // a port's piece sizes, largest first

// Does the sorted profile r fit under the template T (r_j <= T_j, no more pieces than levels)?
bool under(const Profile& r, const std::vector<Bytes>& T) {
  if (r.size() > T.size()) return false;
  for (std::size_t j = 0; j < r.size(); ++j)
    if (r[j] > T[j]) return false;
  return true;
}

// Is r with its piece at position i cut into x and y (x + y = r[i]) still under T? A merge of
// the two new pieces into r's order, without building the profile.
bool under_cut(const Profile& r, std::size_t i, Bytes x, Bytes y, const std::vector<Bytes>& T) {
  if (r.size() + 1 > T.size()) return false;
  const Bytes big = std::max(x, y), small = std::min(x, y);
  std::size_t at = 0, pos = 0;
  int cut = 0;   // new pieces placed so far
  while (pos < r.size() + 1) {
    if (at == i) ++at;
    const Bytes next_new = cut == 0 ? big : cut == 1 ? small : 0;
    const bool take_new = cut < 2 && (at >= r.size() || next_new >= r[at]);
    const Bytes piece = take_new ? next_new : r[at];
    if (piece > T[pos]) return false;
    if (take_new) ++cut;
    else ++at;
    ++pos;
  }
  return true;
}

Profile with_cut(const Profile& r, std::size_t i, Bytes a) {
  Profile out = r;
  const Bytes s = out[i];
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
  for (Bytes piece : {a, s - a}) out.insert(std::upper_bound(out.begin(), out.end(), piece, std::greater<>()), piece);
  return out;
}

// Does r fit under T, after one message is cut in two if `cut`? Only a piece at or above the first
// position over its level can help (cutting a smaller one leaves that position as it is), and one
// of the two new pieces can be taken to fill a level exactly. *fit gets a fitting profile.
bool fits(const Profile& r, const std::vector<Bytes>& T, bool cut, Profile* fit) {
  if (r.size() > T.size()) return false;
  std::size_t over = r.size();
  for (std::size_t j = 0; j < r.size(); ++j)
    if (r[j] > T[j]) {
      over = j;
      break;
    }
  if (over == r.size()) {
    if (fit) *fit = r;
    return true;
  }
  if (!cut || r.size() == T.size()) return false;
  for (std::size_t i = 0; i <= over; ++i) {
    if (i > 0 && r[i] == r[i - 1]) continue;
    const Bytes s = r[i];
    for (std::size_t j = 0; j < T.size(); ++j) {
      if (j > 0 && T[j] == T[j - 1]) continue;
      for (Bytes a : {T[j], s - std::min(s, T[j])})
        if (a > 0 && a < s && under_cut(r, i, a, s - a, T)) {
          if (fit) *fit = with_cut(r, i, a);
          return true;
        }
    }
  }
  return false;
}

// A matching of a bipartite multigraph (senders x receivers) that covers every "tight" port,
// using only "usable" edges: from each uncovered tight port an augmenting path
// (BipartiteMatching::augment) that may end at a free port or at one that is not tight (which
// then gives up its edge): the Mendelsohn-Dulmage exchange, so a matching covering the tight
// senders and then the tight receivers is found if one exists. Edges are tried in the given
// order (largest piece first), and the optional greedy start takes them in that order too.
class CoverMatching {
 public:
  CoverMatching(Rank p, const std::vector<Item>& items, const std::vector<std::int64_t>& order) : g_(p, ends(items, true), ends(items, false), order) {}

  // Forget the edges `keep` rejects (pieces already coloured), in `order` and in every port's list.
  template <class Keep>
  void prune(std::vector<std::int64_t>& order, Keep keep) {
    g_.prune(order, keep);
  }

  // match(x): the edge covering port x, or -1.
  std::int64_t match(Port x) const { return g_.match(x); }

  template <class Usable, class Tight>
  bool run(const std::vector<std::int64_t>& order, Usable usable, Tight tight, bool greedy) {
    g_.clear();
    if (greedy)
      for (std::int64_t e : order)
        if (usable(e) && g_.match(g_.sender_port(e)) < 0 && g_.match(g_.receiver_port(e)) < 0) g_.take(e);
    auto loose = [&](Port x) { return !tight(x); };   // a port that may go without
    for (std::size_t k = 0; k < g_.ports(); ++k) {
      const Port x{static_cast<std::int32_t>(k)};
      if (tight(x) && g_.match(x) < 0 && !g_.augment(x, usable, loose)) return false;
    }
    return true;
  }

 private:
  static std::vector<Rank> ends(const std::vector<Item>& items, bool senders) {
    std::vector<Rank> out;
    out.reserve(items.size());
    for (const Item& it : items) out.push_back(senders ? it.u : it.v);
    return out;
  }
  BipartiteMatching g_;
};

std::vector<std::int64_t> largest_first(const std::vector<Item>& items) {
  std::vector<std::int64_t> order(items.size());
  for (std::size_t e = 0; e < items.size(); ++e) order[e] = static_cast<std::int64_t>(e);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return items[static_cast<std::size_t>(a)].bytes > items[static_cast<std::size_t>(b)].bytes;
  });
  return order;
}

std::vector<Profile> profiles(Rank p, const std::vector<Item>& items) {
  std::vector<Profile> port(static_cast<std::size_t>(2 * p));
  for (const Item& it : items) {
    port[Port::sender(it.u).index()].push_back(it.bytes);
    port[Port::receiver(p, it.v).index()].push_back(it.bytes);
  }
  for (Profile& r : port) std::sort(r.begin(), r.end(), std::greater<>());
  return port;
}

// Step 3 of the header: colours items with P colours, levels T (largest first; empty: none),
// phase by phase from the smallest level. A phase's matching is left in `cover_`; rest_[x] holds
// port x's uncoloured pieces, largest first (its size is the port's remaining degree).
class TemplateColouring {
 public:
  TemplateColouring(Rank p, std::int64_t P, const std::vector<Item>& items, const std::vector<Bytes>& T, int lookahead)
      : p_(p), P_(P), items_(items), T_(T), lookahead_(lookahead), order_(largest_first(items)),
        alive_(items.size(), 1), colour_(items.size(), -1), cover_(p, items, order_), rest_(profiles(p, items)),
        lo_(rest_.size()), hi_(rest_.size()), forced_(rest_.size()) {}

  std::vector<std::int32_t> run() {
    for (std::int64_t k = P_; k >= 1; --k) {   // k phases left, this one is colour P - k
      if (k < P_) cover_.prune(order_, [&](std::int64_t e) { return alive_[static_cast<std::size_t>(e)] != 0; });
      Bytes cap = 0;
      bool templated = false;
      if (!phase(k, cap, templated)) break;   // nothing left
      if (lookahead_ > 0 && k >= 2) cap = look_ahead(k, cap, templated);
      take(colour_of(k));
    }
    for (std::int32_t c : colour_) commfit_assert(c >= 0, "profile_split", "a piece left uncoloured");
    return colour_;
  }

 private:
  std::size_t port_u(const Item& it) const { return Port::sender(it.u).index(); }
  std::size_t port_v(const Item& it) const { return Port::receiver(p_, it.v).index(); }
  std::int32_t colour_of(std::int64_t k) const { return static_cast<std::int32_t>(P_ - k); }

  // Remaining levels after the phase with k left: the k - 1 largest. A port whose remaining
  // pieces do not fit under them is forced; it may give up the piece at position i only if
  // positions < i already fit (i <= first position over) and every later piece fits one level up.
  void classify(std::int64_t k) {
    const std::size_t left = static_cast<std::size_t>(k - 1);
    for (std::size_t x = 0; x < rest_.size(); ++x) {
      const Profile& r = rest_[x];
      std::size_t over = r.size();
      for (std::size_t j = 0; j < r.size(); ++j)
        if (j >= left || r[j] > T_[j]) {
          over = j;
          break;
        }
      forced_[x] = over < r.size();
      lo_[x] = 0;
      hi_[x] = std::numeric_limits<Bytes>::max();
      if (!forced_[x]) continue;
      std::size_t from = r.size() - 1;
      while (from > 0 && from - 1 < left && r[from] <= T_[from - 1]) --from;
      lo_[x] = from > over ? 1 : r[over];   // [1, 0]: nothing it can give up keeps it fitting
      hi_[x] = from > over ? 0 : r[from];
    }
  }

  // A matching for the phase with k left at cap c: under the template (forced ports covered,
  // each giving up an allowed piece) or, without it, covering the ports with k pieces left.
  bool test(std::int64_t k, Bytes c, bool templated) {
    if (templated)
      return cover_.run(order_, [&](std::int64_t e) {
        const Item& it = items_[static_cast<std::size_t>(e)];
        const std::size_t a = port_u(it), b = port_v(it);
        return alive_[static_cast<std::size_t>(e)] && it.bytes <= c && it.bytes >= lo_[a] && it.bytes <= hi_[a] && it.bytes >= lo_[b] && it.bytes <= hi_[b];
      }, [&](Port x) { return forced_[x.index()] != 0; }, true);
    return cover_.run(order_, [&](std::int64_t e) { return alive_[static_cast<std::size_t>(e)] && items_[static_cast<std::size_t>(e)].bytes <= c; },
                      [&](Port x) { return static_cast<std::int64_t>(rest_[x.index()].size()) == k; }, true);
  }

  // Distinct sizes of the pieces left, at least floor, ascending.
  void sizes_from(Bytes floor) {
    sizes_.clear();
    for (std::size_t e = 0; e < items_.size(); ++e)
      if (alive_[e] && items_[e].bytes >= floor) sizes_.push_back(items_[e].bytes);
    std::sort(sizes_.begin(), sizes_.end());
    sizes_.erase(std::unique(sizes_.begin(), sizes_.end()), sizes_.end());
  }

  // The least cap with a matching for the phase with k left (left in cover_); false if no piece
  // is left. The template's level first, then the least size above it, then without the template.
  bool phase(std::int64_t k, Bytes& cap, bool& templated) {
    if (!T_.empty()) {
      classify(k);
      templated = true;
      cap = T_[static_cast<std::size_t>(k - 1)];
      if (test(k, cap, true)) return true;
      sizes_from(cap);
      if (least(k, true, cap)) return true;
    }
    templated = false;
    sizes_from(0);
    if (sizes_.empty()) return false;
    const bool found = least(k, false, cap);
    commfit_assert(found, "profile_split", "no matching covers the ports of largest degree");
    return true;
  }

  bool least(std::int64_t k, bool templated, Bytes& cap) {
    if (sizes_.empty() || !test(k, sizes_.back(), templated)) return false;
    std::size_t a = 0, b = sizes_.size() - 1;
    while (a < b) {
      const std::size_t mid = a + (b - a) / 2;
      if (test(k, sizes_[mid], templated)) b = mid;
      else a = mid + 1;
    }
    cap = sizes_[b];
    return test(k, cap, templated);
  }

  std::vector<std::int64_t> matched() const {
    std::vector<std::int64_t> out;
    for (Rank u = 0; u < p_; ++u)
      if (cover_.match(Port::sender(u)) >= 0) out.push_back(cover_.match(Port::sender(u)));
    return out;
  }

  void take(std::int32_t colour) {
    for (std::int64_t e : matched()) set(e, colour);
  }
  void set(std::int64_t e, std::int32_t colour) {
    const Item& it = items_[static_cast<std::size_t>(e)];
    alive_[static_cast<std::size_t>(e)] = colour >= 0 ? 0 : 1;
    colour_[static_cast<std::size_t>(e)] = colour;
    for (Profile* r : {&rest_[port_u(it)], &rest_[port_v(it)]}) {
      if (colour >= 0) r->erase(std::lower_bound(r->begin(), r->end(), it.bytes, std::greater<>()));
      else r->insert(std::upper_bound(r->begin(), r->end(), it.bytes, std::greater<>()), it.bytes);
    }
  }

  // One step of lookahead: a few caps above the least, each priced as its largest piece plus the
  // least cap of the next phase; leaves the chosen cap's matching in cover_.
  Bytes look_ahead(std::int64_t k, Bytes least_cap, bool templated) {
    std::vector<Bytes> caps{least_cap};
    sizes_from(least_cap + 1);
    for (std::size_t i = 0; i < sizes_.size() && static_cast<int>(caps.size()) <= lookahead_; ++i) caps.push_back(sizes_[i]);
    Bytes best_cap = least_cap;
    double best = -1;
    for (Bytes c : caps) {
      if (templated) classify(k);
      if (!test(k, c, templated)) continue;
      const std::vector<std::int64_t> m = matched();
      Bytes top = 0;
      for (std::int64_t e : m) top = std::max(top, items_[static_cast<std::size_t>(e)].bytes);
      for (std::int64_t e : m) set(e, 0);
      Bytes next = 0;
      bool next_templated = false;
      phase(k - 1, next, next_templated);
      for (std::int64_t e : m) set(e, -1);
      const double score = static_cast<double>(top) + static_cast<double>(next);
      if (best < 0 || score < best) {
        best = score;
        best_cap = c;
      }
    }
    if (templated) classify(k);
    test(k, best_cap, templated);
    return best_cap;
  }

  Rank p_;
  std::int64_t P_;
  const std::vector<Item>& items_;
  const std::vector<Bytes>& T_;
  int lookahead_;
  std::vector<std::int64_t> order_;
  std::vector<char> alive_;
  std::vector<std::int32_t> colour_;
  CoverMatching cover_;
  std::vector<Profile> rest_;
  std::vector<Bytes> lo_, hi_, sizes_;
  std::vector<char> forced_;
};

std::vector<std::int32_t> colour(Rank p, std::int64_t P, const std::vector<Item>& items, const std::vector<Bytes>& T, int lookahead) {
  return TemplateColouring(p, P, items, T, lookahead).run();
}

// Step 1: candidate templates for P levels, cheapest first, each admitting one more cut per port
// with a spare slot.
std::vector<std::vector<Bytes>> templates(std::int64_t P, const std::vector<Profile>& port) {
  const std::size_t levels = static_cast<std::size_t>(P);
  std::vector<Bytes> envelope(levels, 0);
  Bytes top = 0;
  for (const Profile& r : port)
    for (std::size_t j = 0; j < r.size() && j < levels; ++j) {
      envelope[j] = std::max(envelope[j], r[j]);
      top = std::max(top, r[j]);
    }
  if (top == 0) return {};
  // fit[x]: the last fitting profile of port x, a fast yes. Within one descent every template
  // tried is the current one with one level j lowered, and every fit[x] lies under the current
  // one, so only position j needs a look (changed = j); at a descent's start all of it does.
  std::vector<Profile> fit(port.size());
  std::size_t last_failed = 0;
  constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
  auto feasible = [&](const std::vector<Bytes>& T, std::size_t changed) {
    auto ok = [&](std::size_t x) {
      const Profile& f = fit[x];
      if (!f.empty() && (changed == kAll ? under(f, T) : f.size() <= changed || f[changed] <= T[changed])) return true;
      return fits(port[x], T, static_cast<std::int64_t>(port[x].size()) < P, &fit[x]);
    };
    if (!ok(last_failed)) return false;
    for (std::size_t x = 0; x < port.size(); ++x)
      if (!ok(x)) {
        last_failed = x;
        return false;
      }
    return true;
  };
  const Bytes step = std::max<Bytes>(1, top / 1024);
  std::vector<std::pair<Bytes, std::vector<Bytes>>> found;
  for (int trial = 0; trial <= 25; ++trial)
    for (int bottom_up = 0; bottom_up < 2; ++bottom_up) {
      const Bytes extra = top / 50 * static_cast<Bytes>(trial);
      std::vector<Bytes> T = envelope;
      for (Bytes& level : T)
        if (level == 0) level = extra;
      std::sort(T.begin(), T.end(), std::greater<>());
      if (!feasible(T, kAll)) continue;
      auto lower = [&](std::size_t j) {   // as far as every port still fits, in steps
        Bytes a = j + 1 < levels ? T[j + 1] : 0, b = T[j];
        while (a + step <= b) {
          const Bytes mid = a + (b - a) / (2 * step) * step;
          std::vector<Bytes> U = T;
          U[j] = mid;
          if (feasible(U, j)) b = mid;
          else a = mid + step;
        }
        const bool moved = b < T[j];
        T[j] = b;
        return moved;
      };
      // First every level but the trial one (in one of two orders), then all of them.
      for (bool moved = true; moved;) {
        moved = false;
        for (std::size_t i = 0; i < levels; ++i) {
          const std::size_t j = bottom_up ? levels - 1 - i : i;
          if (j == levels - 1 && T[j] == extra) continue;
          moved |= lower(j);
        }
      }
      for (bool moved = true; moved;) {
        moved = false;
        for (std::size_t j = 0; j < levels; ++j) moved |= lower(j);
      }
      Bytes sum = 0;
      for (Bytes level : T) sum += level;
      found.push_back({sum, T});
    }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::vector<std::vector<Bytes>> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// Step 2: one cut per port that needs one, consistent at both ends; empty if there is none.
std::vector<Item> cut_to(Rank p, std::int64_t P, const std::vector<Item>& items, const std::vector<Profile>& port,
                         const std::vector<Bytes>& T, std::int64_t& cuts) {
  std::vector<char> needs(port.size());
  bool any = false;
  for (std::size_t x = 0; x < port.size(); ++x) {
    needs[x] = !under(port[x], T);
    any = any || needs[x];
  }
  cuts = 0;
  if (!any) return items;
  std::vector<Bytes> at(items.size(), 0);   // the first piece's size if this message may be cut
  std::vector<std::int64_t> order;
  for (std::size_t e = 0; e < items.size(); ++e) {
    const std::size_t a = Port::sender(items[e].u).index(), b = Port::receiver(p, items[e].v).index();
    if (!needs[a] && !needs[b]) continue;
    if (static_cast<std::int64_t>(port[a].size()) >= P || static_cast<std::int64_t>(port[b].size()) >= P) continue;
    const Bytes s = items[e].bytes;
    const auto index = [&](const Profile& r) {
      return static_cast<std::size_t>(std::find(r.begin(), r.end(), s) - r.begin());
    };
    const std::size_t ia = index(port[a]), ib = index(port[b]);
    for (std::size_t j = 0; j < T.size() && at[e] == 0; ++j)
      for (Bytes piece : {T[j], s - std::min(s, T[j])})
        if (piece > 0 && piece < s && under_cut(port[a], ia, piece, s - piece, T) && under_cut(port[b], ib, piece, s - piece, T)) {
          at[e] = piece;
          break;
        }
    if (at[e] > 0) order.push_back(static_cast<std::int64_t>(e));
  }
  CoverMatching cover(p, items, order);
  if (!cover.run(order, [&](std::int64_t e) { return at[static_cast<std::size_t>(e)] > 0; },
                 [&](Port x) { return needs[x.index()] != 0; }, false))
    return {};
  std::vector<Item> out;
  out.reserve(items.size() + port.size());
  for (std::size_t e = 0; e < items.size(); ++e) {
    const Item& it = items[e];
    if (cover.match(Port::sender(it.u)) == static_cast<std::int64_t>(e)) {
      out.push_back({it.u, it.v, it.offset, at[e]});
      out.push_back({it.u, it.v, it.offset + at[e], it.bytes - at[e]});
      ++cuts;
    } else {
      out.push_back(it);
    }
  }
  return out;
}

// The P-phase schedule of pieces `items`, piece e in phase colour[e] (empty phases kept).
Schedule assemble(Rank p, std::int64_t P, const std::vector<Item>& items, const std::vector<std::int32_t>& colour) {
  Schedule s;
  s.ranks = p;
  s.phases = static_cast<Phase>(P);
  s.transfers.reserve(items.size());
  for (std::size_t e = 0; e < items.size(); ++e) {
    const Item& it = items[e];
    s.transfers.push_back({static_cast<Phase>(colour[e]), it.u, it.v, {it.u, it.v, it.offset, it.bytes}});
  }
  return s;
}

// Step 4 (passes/level_search.h) on a coloured stage, toward its template T if it has one.
Schedule searched(const CommMatrix& m, Schedule s, const std::vector<Bytes>& T, const ProfileSplitOptions& o) {
  if (o.search_effort == 0) return s;
  LevelSearchOptions lo;
  lo.target = T;
  lo.effort = o.search_effort;
  lo.seed = static_cast<std::uint64_t>(s.phases);
  return level_search(m, s, lo);
}

}  // namespace

Schedule profile_split(const CommMatrix& m, const ProfileSplitOptions& o, ProfileSplitReport* report) {
  commfit_assert(o.extra_phases >= 0 && o.templates >= 1 && o.lookahead >= 0, "profile_split", "bad options");
  const Rank p = m.ranks;
  std::vector<Item> items;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j && b > 0) items.push_back({i, j, 0, b});
  });
  std::int64_t d = 0;
  Bytes t = 0;   // the busiest port's bytes
  for (const Profile& r : profiles(p, items)) {
    d = std::max(d, static_cast<std::int64_t>(r.size()));
    Bytes sum = 0;
    for (Bytes b : r) sum += b;
    t = std::max(t, sum);
  }

  ProfileSplitReport local;
  ProfileSplitReport& r = report ? *report : local;
  r = {};
  Schedule best;
  double best_cost = -1;
  // The cheapest schedule of every stage so far is kept.
  auto keep = [&](Schedule s, double cost) {
    if (best_cost >= 0 && cost >= best_cost) return false;
    best_cost = cost;
    best = std::move(s);
    return true;
  };
  {
    Schedule s = assemble(p, d, items, colour(p, d, items, {}, static_cast<int>(o.lookahead)));
    const double cost = schedule_estimate_s(s, o.cost);
    r.stages.push_back({d, 0, cost, cost, 0});
    keep(std::move(s), cost);
  }
  for (std::int64_t P = d + 1; d > 0 && P <= d + o.extra_phases; ++P) {
    const double floor = lower_bound_s(P, t, o.cost);
    if (floor >= best_cost || (o.to_beat_s > 0 && floor >= o.to_beat_s)) break;   // no P-phase schedule can win
    const std::vector<Profile> port = profiles(p, items);
    std::int64_t tried = 0;
    ProfileSplitReport::Stage stage{P, 0, 0, 0, 0};
    Schedule coloured;
    std::vector<Bytes> target;
    std::vector<Item> next;
    for (const std::vector<Bytes>& T : templates(P, port)) {
      std::int64_t cuts = 0;
      std::vector<Item> cut = cut_to(p, P, items, port, T, cuts);
      if (cut.empty()) continue;
      Schedule s = assemble(p, P, cut, colour(p, P, cut, T, static_cast<int>(o.lookahead)));
      const double cost = schedule_estimate_s(s, o.cost);
      if (next.empty() || cost < stage.coloured_s) {
        stage = {P, synchronous_cost_s(T, o.cost), cost, cost, cuts};
        coloured = std::move(s);
        target = T;
        next = std::move(cut);
      }
      if (++tried == o.templates) break;
    }
    if (next.empty()) break;   // no template admits consistent cuts: stop here
    Schedule s = searched(m, std::move(coloured), target, o);   // step 4 on the cheapest colouring
    stage.estimate_s = schedule_estimate_s(s, o.cost);
    if (keep(std::move(s), stage.estimate_s)) r.chosen = r.stages.size();
    r.stages.push_back(stage);
    items = std::move(next);
  }

  drop_empty_phases(best);
  best.copies = local_copies(m);
  canonicalize(best);
  return best;
}

}  // namespace commfit
