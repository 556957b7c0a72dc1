#include "passes/link_check.h"

#include "ir/error.h"

#include <algorithm>
#include <bit>
#include <tuple>

namespace commfit {
namespace {

// Open-addressing set of 64-bit keys (linear probing, load <= 1/2): (phase, link) and
// (phase, rank) claims, whatever the number of phases and links.
class KeySet {
 public:
  bool contains(std::uint64_t key) const {
    if (slots_.empty()) return false;
    for (std::size_t s = slot_of(key);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == 0) return false;
      if (slots_[s] == key + 1) return true;
    }
  }
  void insert(std::uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t s = slot_of(key);
    while (slots_[s] != 0 && slots_[s] != key + 1) s = (s + 1) & (slots_.size() - 1);
    if (slots_[s] == 0) ++size_;
    slots_[s] = key + 1;
  }

 private:
  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> (64 - std::countr_zero(slots_.size())));
  }
  void grow() {
    std::vector<std::uint64_t> old;
    old.swap(slots_);
    slots_.assign(std::max<std::size_t>(64, 2 * old.size()), 0);
    size_ = 0;
    for (std::uint64_t k : old)
      if (k != 0) insert(k - 1);
  }
  std::vector<std::uint64_t> slots_;
  std::size_t size_ = 0;
};

struct Unit {                 // one MPI message: transfers [first, last) of the input
  std::size_t first, last;
  Rank from, to;
  Bytes bytes;                // total of its pieces (what the phase's largest piece compares with)
  Phase phase;
};

}  // namespace

Schedule link_check(const Schedule& s, const Topology& topo, LinkCheckReport* report) {
  topo.check_ranks(s.ranks);
  const auto links_n = static_cast<std::uint64_t>(std::max<std::int64_t>(topo.link_count(), 1));
  const auto ranks_n = static_cast<std::uint64_t>(std::max<Rank>(s.ranks, 1));

  // Units, in the canonical order of the input (by phase, then from, to).
  std::vector<Unit> units;
  for (std::size_t t = 0; t < s.transfers.size(); ++t) {
    const Transfer& x = s.transfers[t];
    commfit_assert(t == 0 || std::tie(s.transfers[t - 1].phase, s.transfers[t - 1].from, s.transfers[t - 1].to) <=
                                 std::tie(x.phase, x.from, x.to),
                   "link_check", "transfers are not in canonical order");
    if (units.empty() || units.back().phase != x.phase || units.back().from != x.from || units.back().to != x.to)
      units.push_back({t, t, x.from, x.to, 0, x.phase});
    units.back().last = t + 1;
    units.back().bytes += x.piece.bytes;
  }

  KeySet link_used, send_used, recv_used;
  std::vector<Bytes> phase_max(s.phases, 0);
  std::vector<Link> route;
  auto route_free = [&](Phase p) {   // the route in `route`
    return std::none_of(route.begin(), route.end(), [&](Link l) {
      return link_used.contains(p * links_n + static_cast<std::uint64_t>(l.value()));
    });
  };
  auto claim = [&](Unit& u, Phase p) {   // u's route is in `route`
    for (Link l : route) link_used.insert(p * links_n + static_cast<std::uint64_t>(l.value()));
    send_used.insert(p * ranks_n + static_cast<std::uint64_t>(u.from));
    recv_used.insert(p * ranks_n + static_cast<std::uint64_t>(u.to));
    if (p >= phase_max.size()) phase_max.resize(p + 1, 0);
    phase_max[p] = std::max(phase_max[p], u.bytes);
    u.phase = p;
  };

  // Keep a maximal link-disjoint set per phase, largest first.
  std::vector<std::size_t> order(units.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(units[a].phase, units[b].bytes) < std::tie(units[b].phase, units[a].bytes);
  });
  std::vector<std::size_t> evicted;
  for (std::size_t k : order) {
    Unit& u = units[k];
    topo.route(u.from, u.to, route);
    if (route_free(u.phase)) claim(u, u.phase);
    else evicted.push_back(k);
  }

  // Re-place the evicted ones, largest first.
  std::stable_sort(evicted.begin(), evicted.end(), [&](std::size_t a, std::size_t b) { return units[a].bytes > units[b].bytes; });
  const Phase existing = s.phases;
  std::int64_t moved = 0;
  for (std::size_t k : evicted) {
    Unit& u = units[k];
    topo.route(u.from, u.to, route);
    auto fits = [&](Phase p) {
      return !send_used.contains(p * ranks_n + static_cast<std::uint64_t>(u.from)) &&
             !recv_used.contains(p * ranks_n + static_cast<std::uint64_t>(u.to)) && route_free(p);
    };
    std::int64_t best = -1;
    Bytes best_increase = 0;
    for (Phase p = 0; p < existing; ++p) {
      const Bytes increase = u.bytes > phase_max[p] ? u.bytes - phase_max[p] : 0;
      if ((best < 0 || increase < best_increase) && fits(p)) {
        best = p;
        best_increase = increase;
        if (increase == 0) break;
      }
    }
    if (best >= 0) {
      ++moved;
    } else {
      best = existing;
      while (static_cast<std::size_t>(best) < phase_max.size() && !fits(static_cast<Phase>(best))) ++best;
    }
    claim(u, static_cast<Phase>(best));
  }

  Schedule out;
  out.ranks = s.ranks;
  out.copies = s.copies;
  out.phases = std::max<Phase>(s.phases, static_cast<Phase>(phase_max.size()));
  out.transfers.reserve(s.transfers.size());
  for (const Unit& u : units)
    for (std::size_t t = u.first; t < u.last; ++t) {
      Transfer x = s.transfers[t];
      x.phase = u.phase;
      out.transfers.push_back(x);
    }
  canonicalize(out);
  if (report) {
    *report = {s.phases, out.phases, static_cast<std::int64_t>(evicted.size()), moved, 0};
    // Distinct (from, to) pairs per sender, receiver and directed link.
    std::vector<std::pair<Rank, Rank>> pairs;
    pairs.reserve(units.size());
    for (const Unit& u : units) pairs.emplace_back(u.from, u.to);
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::vector<std::int64_t> per_link(static_cast<std::size_t>(topo.link_count()), 0), out_n(ranks_n, 0), in_n(ranks_n, 0);
    std::int64_t floor = 0;
    for (const auto& [from, to] : pairs) {
      floor = std::max({floor, ++out_n[from], ++in_n[to]});
      topo.route(from, to, route);
      for (Link l : route) floor = std::max(floor, ++per_link[l.index()]);
    }
    report->phase_lower_bound = static_cast<Phase>(floor);
  }
  return out;
}

}  // namespace commfit
