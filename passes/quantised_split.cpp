#include "passes/quantised_split.h"

#include "ir/error.h"

#include <algorithm>
#include <numeric>

namespace commfit {
namespace {

struct Edge {
  Rank u, v;        // sender, receiver
  Piece piece;
};

// Bipartite multigraph edge colouring with D colours by alternating-path flips. at[x * D + c] is
// the edge of colour c at vertex x (senders 0..p-1, receivers p..2p-1), or -1.
class MultiColouring {
 public:
  MultiColouring(Rank p, std::int64_t colours, std::vector<Edge>& edges)
      : p_(p), d_(colours), edges_(edges), colour_(edges.size(), -1),
        at_(static_cast<std::size_t>(2 * static_cast<std::int64_t>(p) * colours), -1),
        hint_(2 * static_cast<std::size_t>(p), 0) {}

  void colour_all() {
    for (std::size_t e = 0; e < edges_.size(); ++e) colour_one(static_cast<std::int64_t>(e));
  }
  std::int32_t colour(std::size_t e) const { return colour_[e]; }

 private:
  std::int64_t& at(std::int64_t x, std::int64_t c) { return at_[static_cast<std::size_t>(x * d_ + c)]; }
  std::int64_t first_free(std::int64_t x) {
    for (std::int64_t c = hint_[x]; c < d_; ++c)
      if (at(x, c) < 0) {
        hint_[x] = c;
        return c;
      }
    internal_error("quantised_split", "no free colour: degree above D");
  }
  std::int64_t other_end(std::int64_t e, std::int64_t x) const {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    return x == ed.u ? p_ + ed.v : ed.u;
  }
  void set(std::int64_t e, std::int64_t c) {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    colour_[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(c);
    at(ed.u, c) = e;
    at(p_ + ed.v, c) = e;
  }
  void clear(std::int64_t e) {
    const Edge& ed = edges_[static_cast<std::size_t>(e)];
    const std::int64_t c = colour_[static_cast<std::size_t>(e)];
    at(ed.u, c) = -1;
    at(p_ + ed.v, c) = -1;
    hint_[ed.u] = std::min(hint_[ed.u], c);
    hint_[p_ + ed.v] = std::min(hint_[p_ + ed.v], c);
  }

  void colour_one(std::int64_t e) {
    const std::int64_t u = edges_[static_cast<std::size_t>(e)].u, v = p_ + edges_[static_cast<std::size_t>(e)].v;
    const std::int64_t a = first_free(u);
    if (at(v, a) < 0) {
      set(e, a);
      return;
    }
    const std::int64_t b = first_free(v);
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
  std::int64_t d_;
  std::vector<Edge>& edges_;
  std::vector<std::int32_t> colour_;
  std::vector<std::int64_t> at_;
  std::vector<std::int64_t> hint_;
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

Schedule quantised_split(const CommMatrix& m, Bytes q) {
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
  MultiColouring colouring(m.ranks, d, edges);
  colouring.colour_all();

  Schedule s;
  s.ranks = m.ranks;
  s.phases = static_cast<Phase>(d);
  s.transfers.reserve(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e)
    s.transfers.push_back({static_cast<Phase>(colouring.colour(e)), edges[e].u, edges[e].v, edges[e].piece});
  s.copies = local_copies(m);
  canonicalize(s);
  return s;
}

}  // namespace commfit
