#include "passes/decompose_optimal.h"

#include "ir/error.h"
#include "passes/edge_colouring_detail.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace commfit {
namespace {

using detail::Colour;
using detail::Vertex;

struct Edge {
  std::uint64_t key;   // ~bytes: ascending key = descending size
  Vertex u, v;         // sender, receiver (as vertex ids: receivers are offset by p)
};

// Stable LSD radix sort by key, one byte per pass; passes in which every key has the same
// digit are skipped (with equal sizes nothing moves at all). Stability keeps the (src, dst)
// order of equal sizes.
void sort_by_key(std::vector<Edge>& edges) {
  std::array<std::array<std::size_t, 256>, 8> count{};
  for (const Edge& e : edges)
    for (int d = 0; d < 8; ++d) ++count[d][(e.key >> (8 * d)) & 255];
  std::vector<Edge> tmp;
  for (int d = 0; d < 8; ++d) {
    auto& c = count[d];
    if (std::any_of(c.begin(), c.end(), [&](std::size_t k) { return k == edges.size(); })) continue;
    std::size_t sum = 0;
    for (std::size_t& k : c) sum += std::exchange(k, sum);
    tmp.resize(edges.size());
    for (const Edge& e : edges) tmp[c[(e.key >> (8 * d)) & 255]++] = e;
    edges.swap(tmp);
  }
}

// Colours every edge (in the given order) with a colour < h, then emits the transfers in
// canonical order: by colour, then by sender (one transfer per sender and colour).
template <class Table>
void colour_and_emit(Table& table, std::vector<std::int32_t> width, std::vector<Edge>& edges,
                     const CommMatrix& m, Colour h, Schedule& s) {
  {
    detail::FreeColours free(width);
    detail::KempeColouring<Table> kempe(table, free);
    for (const Edge& e : edges) kempe.colour(e.u, e.v);
  }
  const std::size_t count = edges.size();
  std::vector<Edge>().swap(edges);
  const Rank p = m.ranks;
  std::vector<std::size_t> first(static_cast<std::size_t>(h) + 1, 0);
  for (Vertex u = 0; u < p; ++u) table.for_each(u, [&](Colour c, Vertex) { ++first[c + 1]; });
  for (Colour c = 0; c < h; ++c) first[c + 1] += first[c];
  commfit_assert(first[h] == count, "decompose_optimal", "an edge lost its colour");
  s.transfers.resize(count);
  std::vector<Bytes> row_bytes(static_cast<std::size_t>(p), 0);   // row u of COM, by receiver
  for (Vertex u = 0; u < p; ++u) {
    for (SparseCom::InnerIterator it(m.com, u); it; ++it) row_bytes[it.col()] = it.value();
    table.for_each(u, [&](Colour c, Vertex w) {
      const Rank v = w - p;
      commfit_assert(v != u && row_bytes[v] > 0, "decompose_optimal", "coloured edge is not a message");
      s.transfers[first[c]++] = {static_cast<Phase>(c), u, v, {u, v, 0, row_bytes[v]}};
    });
    for (SparseCom::InnerIterator it(m.com, u); it; ++it) row_bytes[it.col()] = 0;
  }
}

}  // namespace

Schedule decompose_optimal(const CommMatrix& m) {
  const Rank p = m.ranks;
  Schedule s;
  s.ranks = p;
  s.copies = local_copies(m);

  // Degrees of the bipartite multigraph, whose vertices are the ports (ir/types.h).
  std::vector<std::int32_t> degree(2 * static_cast<std::size_t>(p), 0);
  std::vector<Edge> edges;
  edges.reserve(static_cast<std::size_t>(m.nnz()));
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    const Port u = Port::sender(i), v = Port::receiver(p, j);
    edges.push_back({~b, u.value(), v.value()});
    ++degree[u.index()];
    ++degree[v.index()];
  });
  const Colour h = degree.empty() ? 0 : *std::max_element(degree.begin(), degree.end());
  s.phases = static_cast<Phase>(h);
  if (edges.empty()) return s;

  // Largest message first, ties in (src, dst) order.
  sort_by_key(edges);

  // A dense (vertex, colour) table while it is within a small factor of the edge count;
  // otherwise per-vertex hash maps, O(m + p) whatever h is.
  const auto m_net = static_cast<std::int64_t>(edges.size());
  const std::int64_t dense_entries = 2 * static_cast<std::int64_t>(p) * h;
  if (dense_entries <= 4 * m_net + (std::int64_t{1} << 22)) {
    detail::DenseTable table(2 * static_cast<std::int64_t>(p), h);
    colour_and_emit(table, std::vector<std::int32_t>(degree.size(), h), edges, m, h, s);
  } else {
    detail::HashedTable table(degree);
    colour_and_emit(table, std::move(degree), edges, m, h, s);
  }
  return s;
}

}  // namespace commfit
