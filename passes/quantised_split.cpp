#include "passes/quantised_split.h"

#include "ir/error.h"
#include "passes/bipartite_matching.h"
#include "passes/edge_colouring_detail.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

namespace commfit {
namespace {

struct CutEdge {
  Rank u, v;        // sender, receiver
  Piece piece;
};

// First fit with Kempe flips (passes/edge_colouring_detail.h) on the pieces, largest first: each
// piece gets the smallest colour below the cap free at both its ends, so the largest pieces share
// the low colours and a phase's cost is set by pieces of similar size. When no colour below the
// cap is free at both ends, the textbook alternating-path flip of König's theorem frees one (it
// holds for multigraphs); with a cap of 2D - 1 one always is free (each end uses at most D - 1
// colours), so no flip is needed. Returns each piece's colour.
std::vector<std::int32_t> first_fit_colours(Rank p, std::int64_t cap, const std::vector<CutEdge>& edges) {
  commfit_assert(edges.size() < (std::size_t{1} << 31) && cap < (std::int64_t{1} << 31), "quantised_split",
                 "too many pieces for the colour table");
  using Table = detail::DenseTableOf<detail::Linked>;
  const auto width = static_cast<detail::Colour>(cap);
  Table table(2 * static_cast<std::int64_t>(p), width);
  {
    detail::FreeColours free(std::vector<std::int32_t>(2 * static_cast<std::size_t>(p), width));
    detail::KempeColouring<Table> kempe(table, free, detail::KempeColouring<Table>::Walk::textbook);
    for (std::size_t e = 0; e < edges.size(); ++e)
      kempe.colour(Port::sender(edges[e].u).value(), Port::receiver(p, edges[e].v).value(), static_cast<std::int32_t>(e));
  }
  std::vector<std::int32_t> colour(edges.size(), -1);
  for (Rank u = 0; u < p; ++u)
    table.for_each(u, [&](detail::Colour c, detail::Linked w) { colour[static_cast<std::size_t>(w.edge)] = c; });
  return colour;
}

// Bottleneck peeling (the min-bottleneck perfect matching heuristic of SS/TDMA time-slot
// assignment, weighted edge colouring): pad the multigraph to D-regular with 0-byte dummy pieces
// between ranks below D (sender and receiver sides are apart, so a dummy may join a rank to
// itself); a D-regular bipartite multigraph is D perfect
// matchings (König). Peel them off one at a time, each the perfect matching whose largest piece
// is smallest: binary search over the remaining piece sizes, from the largest of the ranks'
// smallest pieces (every rank is matched) up, each test a Hopcroft–Karp maximum matching on the
// pieces at or below the size, warm-started from the last perfect one. Removing a perfect matching
// leaves a (D-1)-regular multigraph, so every step succeeds. Pieces of similar size end up in
// one phase: on Ranka–Wang's non-uniform sets Σ phase max is within 1 % of the sorted-profile
// bound, where first fit pays 25 %.
class BottleneckPeeling {
 public:
  BottleneckPeeling(Rank p, std::int64_t d, const std::vector<CutEdge>& edges) : p_(p), d_(d) {
    std::vector<Rank> from, to;
    std::vector<std::int64_t> out(static_cast<std::size_t>(p), 0), in(static_cast<std::size_t>(p), 0);
    for (const CutEdge& e : edges) {
      from.push_back(e.u);
      to.push_back(e.v);
      w_.push_back(e.piece.bytes);
      ++out[static_cast<std::size_t>(e.u)];
      ++in[static_cast<std::size_t>(e.v)];
    }
    // Dummies: the i-th missing sender slot with the i-th missing receiver slot (both sum to pD - E).
    Rank v = 0;
    for (Rank u = 0; u < p; ++u)
      for (; out[static_cast<std::size_t>(u)] < d; ++out[static_cast<std::size_t>(u)]) {
        while (in[static_cast<std::size_t>(v)] >= d) ++v;
        ++in[static_cast<std::size_t>(v)];
        from.push_back(u);
        to.push_back(v);
        w_.push_back(0);
      }
    alive_.assign(w_.size(), 1);
    // Each port's pieces lightest first: a size threshold cuts its list.
    std::vector<std::int64_t> order(w_.size());
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return w_[a] < w_[b]; });
    matching_.emplace(p, std::move(from), std::move(to), order);
  }

  // colour[e] for the first `real` edges (the pieces); the dummies are dropped.
  std::vector<std::int32_t> run(std::size_t real) {
    BipartiteMatching& g = *matching_;
    std::vector<std::int32_t> colour(real, -1);
    std::vector<Bytes> sizes;
    std::vector<Bytes> low_out(static_cast<std::size_t>(p_)), low_in(static_cast<std::size_t>(p_));
    std::vector<std::int64_t> best;
    for (std::int64_t k = 0; k < d_; ++k) {
      // Every rank must be matched: its lightest remaining piece bounds the bottleneck below.
      sizes.clear();
      std::fill(low_out.begin(), low_out.end(), kNone);
      std::fill(low_in.begin(), low_in.end(), kNone);
      for (std::size_t e = 0; e < w_.size(); ++e) {
        if (!alive_[e]) continue;
        sizes.push_back(w_[e]);
        const auto x = static_cast<std::size_t>(g.sender(static_cast<std::int64_t>(e))), y = static_cast<std::size_t>(g.receiver(static_cast<std::int64_t>(e)));
        low_out[x] = std::min(low_out[x], w_[e]);
        low_in[y] = std::min(low_in[y], w_[e]);
      }
      std::sort(sizes.begin(), sizes.end());
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
      Bytes floor = 0;
      for (Rank r = 0; r < p_; ++r) floor = std::max({floor, low_out[static_cast<std::size_t>(r)], low_in[static_cast<std::size_t>(r)]});
      std::size_t lo = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), floor) - sizes.begin());
      std::size_t hi = sizes.size() - 1;
      g.clear();
      commfit_assert(perfect(sizes[hi]), "quantised_split", "a regular bipartite multigraph without a perfect matching");
      best = g.matching();
      while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        restrict_to(sizes[mid]);
        if (perfect(sizes[mid])) {
          hi = mid;
          best = g.matching();
        } else {
          lo = mid + 1;
          g.restore(best);
        }
      }
      for (Rank u = 0; u < p_; ++u) {   // the senders' edges of the perfect matching
        const std::int64_t e = best[Port::sender(u).index()];
        alive_[static_cast<std::size_t>(e)] = 0;
        if (static_cast<std::size_t>(e) < real) colour[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(k);
      }
    }
    return colour;
  }

 private:
  static constexpr Bytes kNone = std::numeric_limits<Bytes>::max();

  // Unmatch the pieces above cap (the warm start of a lower threshold).
  void restrict_to(Bytes cap) {
    for (Rank u = 0; u < p_; ++u) {
      const std::int64_t e = matching_->match(Port::sender(u));
      if (e >= 0 && w_[static_cast<std::size_t>(e)] > cap) matching_->drop(e);
    }
  }

  // A perfect matching on the live pieces of at most cap bytes, from the current one.
  bool perfect(Bytes cap) {
    return matching_->hopcroft_karp([&](std::int64_t e) {
      using Use = BipartiteMatching::Use;
      if (w_[static_cast<std::size_t>(e)] > cap) return Use::stop;   // the lists are lightest first
      return alive_[static_cast<std::size_t>(e)] ? Use::yes : Use::no;
    });
  }

  Rank p_;
  std::int64_t d_;
  std::vector<Bytes> w_;
  std::vector<char> alive_;
  std::optional<BipartiteMatching> matching_;
};

}  // namespace

std::int64_t quantised_degree(const CommMatrix& m, Bytes q) {
  commfit_assert(q >= 1, "quantised_split", "chunk size must be at least 1");
  std::vector<std::int64_t> out(static_cast<std::size_t>(m.ranks), 0), in(static_cast<std::size_t>(m.ranks), 0);
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    const auto k = static_cast<std::int64_t>((b - 1) / q + 1);
    out[i] += k;
    in[j] += k;
  });
  std::int64_t d = 0;
  for (Rank r = 0; r < m.ranks; ++r) d = std::max({d, out[r], in[r]});
  return d;
}

namespace {

// ceil(b / q) near-equal pieces per message (the first b mod k carry one byte more), largest
// first, ties in (src, dst, offset) order.
std::vector<CutEdge> cut(const CommMatrix& m, Bytes q) {
  std::vector<CutEdge> edges;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    const Bytes k = (b - 1) / q + 1, base = b / k, extra = b % k;
    Bytes offset = 0;
    for (Bytes x = 0; x < k; ++x) {
      const Bytes len = base + (x < extra ? 1 : 0);
      edges.push_back({i, j, {i, j, offset, len}});
      offset += len;
    }
  });
  std::stable_sort(edges.begin(), edges.end(), [](const CutEdge& a, const CutEdge& b) { return a.piece.bytes > b.piece.bytes; });
  return edges;
}

Schedule assemble(const CommMatrix& m, const std::vector<CutEdge>& edges, const std::vector<std::int32_t>& colour,
                  std::int64_t phases) {
  Schedule s;
  s.ranks = m.ranks;
  s.phases = static_cast<Phase>(phases);
  s.transfers.reserve(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e)
    s.transfers.push_back({static_cast<Phase>(colour[e]), edges[e].u, edges[e].v, edges[e].piece});
  s.copies = local_copies(m);
  canonicalize(s);
  return s;
}

}  // namespace

Schedule quantised_split(const CommMatrix& m, Bytes q, std::int64_t slack) {
  const std::int64_t d = quantised_degree(m, q);
  std::vector<CutEdge> edges = cut(m, q);
  commfit_assert(slack >= 0, "quantised_split", "negative colour slack");
  // More than D - 1 extra colours are never needed: first fit alone stays within 2D - 1.
  const std::vector<std::int32_t> colour = first_fit_colours(m.ranks, d + std::min(slack, std::max<std::int64_t>(d - 1, 0)), edges);
  const std::int32_t top = colour.empty() ? -1 : *std::max_element(colour.begin(), colour.end());
  return assemble(m, edges, colour, std::max<std::int64_t>(d, top + 1));
}

Schedule quantised_split_bottleneck(const CommMatrix& m, Bytes q) {
  const std::int64_t d = quantised_degree(m, q);
  const std::vector<CutEdge> edges = cut(m, q);
  BottleneckPeeling peeling(m.ranks, d, edges);
  return assemble(m, edges, peeling.run(edges.size()), d);
}

}  // namespace commfit
