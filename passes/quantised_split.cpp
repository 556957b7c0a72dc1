#include "passes/quantised_split.h"

#include "ir/error.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace commfit {
namespace {

struct Edge {
  Rank u, v;        // sender, receiver
  Piece piece;
};

// Bipartite multigraph edge colouring, pieces taken largest first. Each piece gets the smallest
// colour free at both its ends (first fit), so the largest pieces share the low colours and a
// phase's cost is set by pieces of similar size. When no colour below the cap is free at both
// ends, the alternating-path (Kempe) flip of König's theorem frees one below D; with a cap of
// 2D - 1 one always is (each end uses at most D - 1 colours), so no flip is needed.
// at[x * cap + c] is the edge of colour c at vertex x (senders 0..p-1, receivers p..2p-1), or -1;
// used_ holds the same as one bit per colour, for the first-fit scan.
class MultiColouring {
 public:
  MultiColouring(Rank p, std::int64_t cap, std::vector<Edge>& edges)
      : p_(p), cap_(cap), words_((cap + 63) / 64), edges_(edges), colour_(edges.size(), -1),
        at_(static_cast<std::size_t>(2 * static_cast<std::int64_t>(p) * cap), -1),
        used_(static_cast<std::size_t>(2 * static_cast<std::int64_t>(p) * words_), 0) {}

  void colour_all() {
    for (std::size_t e = 0; e < edges_.size(); ++e) colour_one(static_cast<std::int64_t>(e));
  }
  std::int32_t colour(std::size_t e) const { return colour_[e]; }
  std::int64_t colours_used() const {
    std::int32_t top = -1;
    for (std::int32_t c : colour_) top = std::max(top, c);
    return top + 1;
  }

 private:
  std::int64_t& at(std::int64_t x, std::int64_t c) { return at_[static_cast<std::size_t>(x * cap_ + c)]; }
  std::uint64_t* used(std::int64_t x) { return used_.data() + x * words_; }
  // Smallest colour free at x and (if y >= 0) at y, or -1.
  std::int64_t first_free(std::int64_t x, std::int64_t y) {
    const std::uint64_t* ux = used(x);
    const std::uint64_t* uy = y >= 0 ? used(y) : nullptr;
    for (std::int64_t w = 0; w < words_; ++w) {
      const std::uint64_t taken = ux[w] | (uy ? uy[w] : 0);
      if (taken != ~std::uint64_t{0}) {
        const std::int64_t c = w * 64 + std::countr_one(taken);
        return c < cap_ ? c : -1;
      }
    }
    return -1;
  }
  std::int64_t other_end(std::int64_t e, std::int64_t x) const {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    return x == ed.u ? p_ + ed.v : ed.u;
  }
  void mark(std::int64_t x, std::int64_t c, std::int64_t e) {
    at(x, c) = e;
    std::uint64_t& word = used(x)[c / 64];
    const std::uint64_t bit = std::uint64_t{1} << (c % 64);
    word = e >= 0 ? word | bit : word & ~bit;
  }
  void set(std::int64_t e, std::int64_t c) {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    colour_[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(c);
    mark(ed.u, c, e);
    mark(p_ + ed.v, c, e);
  }
  void clear(std::int64_t e) {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    const std::int64_t c = colour_[static_cast<std::size_t>(e)];
    mark(ed.u, c, -1);
    mark(p_ + ed.v, c, -1);
  }

  void colour_one(std::int64_t e) {
    const std::int64_t u = edges_[static_cast<std::size_t>(e)].u, v = p_ + edges_[static_cast<std::size_t>(e)].v;
    const std::int64_t common = first_free(u, v);
    if (common >= 0) {
      set(e, common);
      return;
    }
    const std::int64_t a = first_free(u, -1), b = first_free(v, -1);
    commfit_assert(a >= 0 && b >= 0, "quantised_split", "no free colour: degree above the colour cap");
    // Walk the a/b alternating path from v (it cannot reach u in a bipartite graph) and swap
    // its colours; then a is free at v.
    path_.clear();
    std::int64_t x = v, c = a;
    while (true) {
      const std::int64_t f = at(x, c);
      if (f < 0) break;
      path_.push_back(f);
      x = other_end(f, x);
      c = c == a ? b : a;
    }
    for (std::int64_t f : path_) clear(f);
    for (std::int64_t f : path_) set(f, colour_[static_cast<std::size_t>(f)] == a ? b : a);
    set(e, a);
  }

  Rank p_;
  std::int64_t cap_, words_;
  std::vector<Edge>& edges_;
  std::vector<std::int32_t> colour_;
  std::vector<std::int64_t> at_;
  std::vector<std::uint64_t> used_;
  std::vector<std::int64_t> path_;
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

Schedule quantised_split(const CommMatrix& m, Bytes q, std::int64_t slack) {
  const std::int64_t d = quantised_degree(m, q);
  std::vector<Edge> edges;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    // ceil(b / q) near-equal pieces: the first b mod k carry one byte more.
    const Bytes k = (b - 1) / q + 1, base = b / k, extra = b % k;
    Bytes offset = 0;
    for (Bytes x = 0; x < k; ++x) {
      const Bytes len = base + (x < extra ? 1 : 0);
      edges.push_back({i, j, {i, j, offset, len}});
      offset += len;
    }
  });
  // Largest pieces first (ties in (src, dst, offset) order): full-size pieces share phases.
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.piece.bytes > b.piece.bytes; });
  commfit_assert(slack >= 0, "quantised_split", "negative colour slack");
  // More than D - 1 extra colours are never needed: first fit alone stays within 2D - 1.
  MultiColouring colouring(m.ranks, d + std::min(slack, std::max<std::int64_t>(d - 1, 0)), edges);
  colouring.colour_all();

  Schedule s;
  s.ranks = m.ranks;
  s.phases = static_cast<Phase>(std::max(d, colouring.colours_used()));
  s.transfers.reserve(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e)
    s.transfers.push_back({static_cast<Phase>(colouring.colour(e)), edges[e].u, edges[e].v, edges[e].piece});
  s.copies = local_copies(m);
  canonicalize(s);
  return s;
}

}  // namespace commfit
