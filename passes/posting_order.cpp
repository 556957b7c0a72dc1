#include "passes/posting_order.h"

#include "ir/error.h"
#include "passes/decompose_optimal.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace commfit {

PostingOrder coloured_posting_order(const CommMatrix& m) { return posting_order_of(decompose_optimal(m)); }

PostingOrder posting_order_of(const Schedule& coloured) {
  // decompose_optimal's phases are the colours, its transfers sorted by (colour, sender): each
  // sender's peers come out in colour order.
  PostingOrder out;
  out.colours = static_cast<std::int32_t>(coloured.phases);
  out.peers.resize(static_cast<std::size_t>(coloured.ranks));
  for (const Transfer& t : coloured.transfers) {
    commfit_assert(t.piece.offset == 0 && t.from == t.piece.src && t.to == t.piece.dst, "posting_order",
                   "the colouring split or forwarded a message");
    out.peers[static_cast<std::size_t>(t.from)].push_back(t.to);
  }
  return out;
}

namespace {

// spread_over_links keeps a load per link and slot: at most this many.
constexpr std::size_t kSpreadCells = std::size_t{1} << 22;

// The post-all model refine_by_routes and spread_over_links share: every message in its sender's
// order (a slot per position), each receiver's messages, and when a receiver is done.
class PostAllModel {
 public:
  struct Msg {
    Rank to;
    double flight;
    bool eager;
    std::int32_t slot;
  };

  PostAllModel(const CommMatrix& m, const PostingOrder& order, const RouteTiming& t) : o_(t.overhead_s) {
    const std::size_t p = static_cast<std::size_t>(m.ranks);
    out.resize(p), in_.resize(p);
    for (std::size_t s = 0; s < p; ++s) {
      for (Rank j : order.peers[s]) {
        const Rank i = static_cast<Rank>(s);
        const Bytes b = m.at(i, j);
        const double latency = t.latency_s(i, j);
        const double rate = t.window_bytes > 0 && latency > 0 ? std::min(t.bandwidth_Bps, t.window_bytes / (2 * latency)) : t.bandwidth_Bps;
        out[s].push_back({j, latency + static_cast<double>(b) / rate, static_cast<double>(b) < t.eager_limit,
                          static_cast<std::int32_t>(out[s].size())});
        in_[static_cast<std::size_t>(j)].emplace_back(i, static_cast<std::int32_t>(out[s].size() - 1));
      }
    }
  }

  // When receiver r is done in the model: its own sends posted, then its messages in order of
  // arrival (an eager one costs o). Charges the work it does to `work`.
  double done(std::size_t r, std::int64_t& work) {
    arrivals_.clear();
    for (const auto& [s, k] : in_[r]) {
      const Msg& x = out[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
      arrivals_.emplace_back(static_cast<double>(x.slot + 1) * o_ + x.flight, x.eager);
    }
    std::sort(arrivals_.begin(), arrivals_.end());
    work -= static_cast<std::int64_t>(arrivals_.size()) * (1 + static_cast<std::int64_t>(std::bit_width(arrivals_.size()))) + 1;
    double cpu = static_cast<double>(out[r].size()) * o_, end = cpu;
    for (const auto& [a, eager] : arrivals_) {
      if (eager) end = cpu = std::max(cpu, a) + o_;
      else end = std::max(end, a);
    }
    return std::max(end, cpu);
  }

  // The order the slots now say.
  PostingOrder order(PostingOrder base) const {
    for (std::size_t s = 0; s < out.size(); ++s) {
      std::vector<Msg> ms = out[s];
      std::sort(ms.begin(), ms.end(), [](const Msg& x, const Msg& y) { return x.slot < y.slot; });
      for (std::size_t k = 0; k < ms.size(); ++k) base.peers[s][k] = ms[k].to;
    }
    return base;
  }

  std::vector<std::vector<Msg>> out;   // per sender, in the order given (slot: its position now)

 private:
  double o_;
  std::vector<std::vector<std::pair<Rank, std::int32_t>>> in_;   // per receiver: (sender, index in out[sender])
  std::vector<std::pair<double, bool>> arrivals_;
};

// Tries every pair of one sender's messages, sender by sender, while `keep(s, a, b)` (which swaps
// them and says whether the swap stays) keeps some, until a round keeps none or the work is spent.
template <class Keep>
void sweep_swaps(PostAllModel& model, const std::int64_t& work, Keep keep) {
  for (bool improved = true; improved && work > 0;) {
    improved = false;
    for (std::size_t s = 0; s < model.out.size() && work > 0; ++s)
      for (std::size_t a = 0; a < model.out[s].size() && work > 0; ++a)
        for (std::size_t b = a + 1; b < model.out[s].size() && work > 0; ++b) improved = keep(s, a, b) || improved;
  }
}

}  // namespace

PostingOrder refine_by_routes(const CommMatrix& m, PostingOrder order, const RouteTiming& t, std::int64_t work) {
  const std::size_t p = static_cast<std::size_t>(m.ranks);
  PostAllModel model(m, order, t);
  std::vector<double> finish(p);   // each receiver's time in the model, as the order stands
  for (std::size_t r = 0; r < p; ++r) finish[r] = model.done(r, work);
  sweep_swaps(model, work, [&](std::size_t s, std::size_t a, std::size_t b) {
    std::vector<PostAllModel::Msg>& ms = model.out[s];
    const std::size_t ra = static_cast<std::size_t>(ms[a].to), rb = static_cast<std::size_t>(ms[b].to);
    const double da = finish[ra], db = finish[rb];
    std::swap(ms[a].slot, ms[b].slot);
    const double na = model.done(ra, work), nb = model.done(rb, work);
    const double before = std::max(da, db), after = std::max(na, nb);
    if (after < before - 1e-15 || (after <= before && na + nb < da + db - 1e-15)) {
      finish[ra] = na, finish[rb] = nb;
      return true;
    }
    std::swap(ms[a].slot, ms[b].slot);
    return false;
  });
  return model.order(std::move(order));
}

PostingOrder spread_over_links(const CommMatrix& m, PostingOrder order, const RouteTiming& t, const LinkRoutes& routes,
                               std::int64_t work) {
  const std::size_t p = static_cast<std::size_t>(m.ranks);
  std::size_t slots = 0;
  for (const std::vector<Rank>& peers : order.peers) slots = std::max(slots, peers.size());
  const auto links = static_cast<std::size_t>(routes.link_count);
  if (slots == 0 || links == 0 || links > kSpreadCells / slots) return order;
  PostAllModel model(m, order, t);
  // Each message's links, with the time its bytes hold each (bytes / the link's bandwidth).
  struct Held {
    std::size_t link;
    double s;
  };
  std::vector<std::vector<std::vector<Held>>> held(p);
  std::vector<Link> route;
  for (std::size_t s = 0; s < p; ++s) {
    held[s].resize(model.out[s].size());
    for (std::size_t k = 0; k < model.out[s].size(); ++k) {
      const Rank j = model.out[s][k].to;
      routes.route(static_cast<Rank>(s), j, route);
      work -= static_cast<std::int64_t>(route.size()) + 1;
      for (Link l : route)
        held[s][k].push_back({static_cast<std::size_t>(l.index()),
                              static_cast<double>(m.at(static_cast<Rank>(s), j)) / (t.bandwidth_Bps * routes.link_width(l))});
    }
  }
  // load[link * slots + slot]: the time the messages of that slot hold the link. The objective is
  // the sum of the squares, lowest where every link's bytes are spread evenly over the slots.
  std::vector<double> load(links * slots, 0.0);
  double delta = 0;
  auto move = [&](std::size_t s, std::size_t k, std::int32_t slot, double sign) {
    for (const Held& h : held[s][k]) {
      double& v = load[h.link * slots + static_cast<std::size_t>(slot)];
      const double x = sign * h.s;
      delta += 2 * v * x + x * x;
      v += x;
    }
  };
  for (std::size_t s = 0; s < p; ++s)
    for (std::size_t k = 0; k < model.out[s].size(); ++k) move(s, k, model.out[s][k].slot, 1);
  // No receiver may end later in the model than the latest does now.
  double latest = 0, smallest = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < p; ++r) latest = std::max(latest, model.done(r, work));
  for (const auto& per_sender : held)
    for (const auto& hs : per_sender)
      for (const Held& h : hs) smallest = std::min(smallest, h.s);
  // A swap counts when it lowers the objective by more than rounding: a fraction of the smallest
  // change one message can make.
  const double threshold = std::isfinite(smallest) ? 1e-6 * smallest * smallest : 0;
  auto swap_two = [&](std::size_t s, std::size_t a, std::size_t b) {
    std::vector<PostAllModel::Msg>& ms = model.out[s];
    const std::int32_t ka = ms[a].slot, kb = ms[b].slot;
    delta = 0;
    move(s, a, ka, -1), move(s, b, kb, -1), move(s, a, kb, 1), move(s, b, ka, 1);
    work -= static_cast<std::int64_t>(2 * (held[s][a].size() + held[s][b].size()));
    if (delta < -threshold) {
      std::swap(ms[a].slot, ms[b].slot);
      if (model.done(static_cast<std::size_t>(ms[a].to), work) <= latest && model.done(static_cast<std::size_t>(ms[b].to), work) <= latest)
        return true;
      std::swap(ms[a].slot, ms[b].slot);
    }
    move(s, a, kb, -1), move(s, b, ka, -1), move(s, a, ka, 1), move(s, b, kb, 1);
    return false;
  };
  // A swap of two of one sender's messages gives their receivers a position twice and another not
  // at all; on a regular pattern, where each receiver needs one message per position, the model
  // refuses most. Swapping two positions c and d over a whole component instead (the messages at c
  // or d linked by a shared sender or receiver: on a proper colouring an alternating path or
  // cycle, Kempe's chain) leaves every sender and receiver the positions it had.
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> into(p);   // per receiver: (sender, index)
  for (std::size_t s = 0; s < p; ++s)
    for (std::size_t k = 0; k < model.out[s].size(); ++k) into[static_cast<std::size_t>(model.out[s][k].to)].emplace_back(s, k);
  std::vector<std::vector<char>> seen(p);
  std::vector<std::pair<std::size_t, std::size_t>> component, stack;
  auto swap_component = [&](std::int32_t c, std::int32_t d) {
    bool kept = false;
    for (std::size_t s = 0; s < p; ++s) seen[s].assign(model.out[s].size(), 0);
    for (std::size_t s0 = 0; s0 < p && work > 0; ++s0)
      for (std::size_t k0 = 0; k0 < model.out[s0].size() && work > 0; ++k0) {
        if (seen[s0][k0] || (model.out[s0][k0].slot != c && model.out[s0][k0].slot != d)) continue;
        component.clear(), stack.assign(1, {s0, k0});
        seen[s0][k0] = 1;
        while (!stack.empty()) {
          const auto [s, k] = stack.back();
          stack.pop_back();
          component.emplace_back(s, k);
          auto visit = [&](std::size_t s2, std::size_t k2) {
            const std::int32_t slot = model.out[s2][k2].slot;
            if (!seen[s2][k2] && (slot == c || slot == d)) seen[s2][k2] = 1, stack.emplace_back(s2, k2);
          };
          for (std::size_t k2 = 0; k2 < model.out[s].size(); ++k2) visit(s, k2);
          for (const auto& [s2, k2] : into[static_cast<std::size_t>(model.out[s][k].to)]) visit(s2, k2);
          work -= static_cast<std::int64_t>(model.out[s].size() + into[static_cast<std::size_t>(model.out[s][k].to)].size());
        }
        // Moves every message of the component to the other position; twice restores it.
        auto flip = [&] {
          delta = 0;
          for (const auto& [s, k] : component) {
            std::int32_t& slot = model.out[s][k].slot;
            const std::int32_t to = slot == c ? d : c;
            move(s, k, slot, -1), move(s, k, to, 1);
            slot = to;
            work -= static_cast<std::int64_t>(2 * held[s][k].size());
          }
        };
        flip();
        bool keep = delta < -threshold;
        for (std::size_t i = 0; keep && i < component.size(); ++i)
          keep = model.done(static_cast<std::size_t>(model.out[component[i].first][component[i].second].to), work) <= latest;
        if (keep) kept = true;
        else flip();
      }
    return kept;
  };
  for (bool improved = true; improved && work > 0;) {
    sweep_swaps(model, work, swap_two);
    improved = false;
    for (std::int32_t c = 0; c < static_cast<std::int32_t>(slots); ++c)
      for (std::int32_t d = c + 1; d < static_cast<std::int32_t>(slots); ++d) improved = swap_component(c, d) || improved;
  }
  return model.order(std::move(order));
}

PostingOrder busiest_links_first(const CommMatrix& m, PostingOrder order, const LinkRoutes& routes) {
  const std::size_t p = static_cast<std::size_t>(m.ranks);
  // Each link's bytes over its width: the time the whole exchange holds it.
  std::vector<double> load(static_cast<std::size_t>(routes.link_count), 0.0);
  std::vector<Link> route;
  for (std::size_t s = 0; s < p; ++s)
    for (Rank j : order.peers[s]) {
      routes.route(static_cast<Rank>(s), j, route);
      for (Link l : route) load[static_cast<std::size_t>(l.index())] += static_cast<double>(m.at(static_cast<Rank>(s), j)) / routes.link_width(l);
    }
  std::vector<std::pair<double, Rank>> keyed;
  for (std::size_t s = 0; s < p; ++s) {
    keyed.clear();
    for (Rank j : order.peers[s]) {
      routes.route(static_cast<Rank>(s), j, route);
      double busiest = 0;
      for (Link l : route) busiest = std::max(busiest, load[static_cast<std::size_t>(l.index())]);
      keyed.emplace_back(busiest, j);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (std::size_t k = 0; k < keyed.size(); ++k) order.peers[s][k] = keyed[k].second;
  }
  return order;
}

}  // namespace commfit
