#include "passes/posting_order.h"

#include "ir/error.h"
#include "passes/decompose_optimal.h"

#include <algorithm>
#include <bit>

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

PostingOrder refine_by_routes(const CommMatrix& m, PostingOrder order, const RouteTiming& t, std::int64_t work) {
  const std::size_t p = static_cast<std::size_t>(m.ranks);
  // The messages in each sender's order: receiver, latency + bytes / bandwidth, eager.
  struct Msg {
    Rank to;
    double flight;
    bool eager;
    std::int32_t slot;
  };
  std::vector<std::vector<Msg>> out(p);
  std::vector<std::vector<std::pair<Rank, std::int32_t>>> in(p);   // per receiver: (sender, index in out[sender])
  for (std::size_t s = 0; s < p; ++s) {
    for (Rank j : order.peers[s]) {
      const Rank i = static_cast<Rank>(s);
      const Bytes b = m.at(i, j);
      const double latency = t.latency_s(i, j);
      const double rate = t.window_bytes > 0 && latency > 0 ? std::min(t.bandwidth_Bps, t.window_bytes / (2 * latency)) : t.bandwidth_Bps;
      out[s].push_back({j, latency + static_cast<double>(b) / rate, static_cast<double>(b) < t.eager_limit,
                        static_cast<std::int32_t>(out[s].size())});
      in[static_cast<std::size_t>(j)].emplace_back(i, static_cast<std::int32_t>(out[s].size() - 1));
    }
  }
  const double o = t.overhead_s;
  std::vector<std::pair<double, bool>> arrivals;
  // When receiver r is done in the model: its own sends posted, then its messages in order of
  // arrival (an eager one costs o).
  auto done = [&](std::size_t r) {
    arrivals.clear();
    for (const auto& [s, k] : in[r]) {
      const Msg& x = out[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
      arrivals.emplace_back(static_cast<double>(x.slot + 1) * o + x.flight, x.eager);
    }
    std::sort(arrivals.begin(), arrivals.end());
    work -= static_cast<std::int64_t>(arrivals.size()) * (1 + static_cast<std::int64_t>(std::bit_width(arrivals.size()))) + 1;
    double cpu = static_cast<double>(out[r].size()) * o, end = cpu;
    for (const auto& [a, eager] : arrivals) {
      if (eager) end = cpu = std::max(cpu, a) + o;
      else end = std::max(end, a);
    }
    return std::max(end, cpu);
  };
  std::vector<double> finish(p);   // each receiver's time in the model, as the order stands
  for (std::size_t r = 0; r < p; ++r) finish[r] = done(r);
  for (bool improved = true; improved && work > 0;) {
    improved = false;
    for (std::size_t s = 0; s < p && work > 0; ++s) {
      std::vector<Msg>& ms = out[s];
      for (std::size_t a = 0; a < ms.size() && work > 0; ++a)
        for (std::size_t b = a + 1; b < ms.size() && work > 0; ++b) {
          const std::size_t ra = static_cast<std::size_t>(ms[a].to), rb = static_cast<std::size_t>(ms[b].to);
          const double da = finish[ra], db = finish[rb];
          std::swap(ms[a].slot, ms[b].slot);
          const double na = done(ra), nb = done(rb);
          const double before = std::max(da, db), after = std::max(na, nb);
          if (after < before - 1e-15 || (after <= before && na + nb < da + db - 1e-15)) {
            improved = true;
            finish[ra] = na, finish[rb] = nb;
          } else {
            std::swap(ms[a].slot, ms[b].slot);
          }
        }
    }
  }
  for (std::size_t s = 0; s < p; ++s) {
    std::vector<Msg> ms = out[s];
    std::sort(ms.begin(), ms.end(), [](const Msg& x, const Msg& y) { return x.slot < y.slot; });
    for (std::size_t k = 0; k < ms.size(); ++k) order.peers[s][k] = ms[k].to;
  }
  return order;
}

}  // namespace commfit
