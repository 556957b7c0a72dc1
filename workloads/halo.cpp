#include "workloads/halo.h"

#include "ir/error.h"

#include <algorithm>

namespace commfit {

Pattern pattern_from_pairs(std::int64_t n, std::vector<std::pair<std::int32_t, std::int32_t>> pairs) {
  commfit_assert(n >= 0 && n <= kMaxVertices, "pattern_from_pairs", "vertex count out of range");
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  Pattern out;
  out.n = n;
  out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  out.cols.reserve(pairs.size());
  for (const auto& [u, v] : pairs) {
    commfit_assert(u >= 0 && u < n && v >= 0 && v < n, "pattern_from_pairs", "index out of range");
    ++out.offsets[static_cast<std::size_t>(u) + 1];
    out.cols.push_back(v);
  }
  for (std::size_t u = 0; u < static_cast<std::size_t>(n); ++u) out.offsets[u + 1] += out.offsets[u];
  return out;
}

Pattern symmetric_graph(const Pattern& a) {
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(2 * a.cols.size());
  for (std::int64_t u = 0; u < a.n; ++u)
    for (std::int64_t k = a.offsets[u]; k < a.offsets[u + 1]; ++k) {
      const auto r = static_cast<std::int32_t>(u);
      const std::int32_t c = a.cols[k];
      if (r == c) continue;
      pairs.emplace_back(r, c);
      pairs.emplace_back(c, r);
    }
  return pattern_from_pairs(a.n, std::move(pairs));
}

CommMatrix halo_matrix(const Pattern& a, const std::vector<std::int32_t>& part, std::int32_t parts, Bytes bytes_per_value) {
  commfit_assert(static_cast<std::int64_t>(part.size()) == a.n && parts >= 1, "halo_matrix", "partition does not fit the pattern");
  // (v, q): part q reads x[v] and does not own it. Sorted and made unique, each is one value sent.
  std::vector<std::uint64_t> need;
  for (std::int64_t u = 0; u < a.n; ++u) {
    const std::int32_t q = part[u];
    for (std::int64_t k = a.offsets[u]; k < a.offsets[u + 1]; ++k) {
      const std::int32_t v = a.cols[k];
      if (part[v] != q) need.push_back(static_cast<std::uint64_t>(v) * static_cast<std::uint64_t>(parts) + static_cast<std::uint64_t>(q));
    }
  }
  std::sort(need.begin(), need.end());
  need.erase(std::unique(need.begin(), need.end()), need.end());
  // Re-key by (owner, reader) and count.
  for (std::uint64_t& key : need) {
    const auto v = static_cast<std::size_t>(key / static_cast<std::uint64_t>(parts));
    const std::uint64_t q = key % static_cast<std::uint64_t>(parts);
    key = static_cast<std::uint64_t>(part[v]) * static_cast<std::uint64_t>(parts) + q;
  }
  std::sort(need.begin(), need.end());
  std::vector<Message> msgs;
  for (std::size_t k = 0; k < need.size();) {
    std::size_t e = k;
    while (e < need.size() && need[e] == need[k]) ++e;
    msgs.push_back({static_cast<Rank>(need[k] / static_cast<std::uint64_t>(parts)),
                    static_cast<Rank>(need[k] % static_cast<std::uint64_t>(parts)), static_cast<Bytes>(e - k) * bytes_per_value});
    k = e;
  }
  return make_matrix(parts, std::move(msgs));
}

HaloCounts halo_counts(const Pattern& a, const std::vector<std::int32_t>& part) {
  HaloCounts out;
  std::vector<char> boundary(static_cast<std::size_t>(a.n), 0);
  for (std::int64_t u = 0; u < a.n; ++u)
    for (std::int64_t k = a.offsets[u]; k < a.offsets[u + 1]; ++k)
      if (part[a.cols[k]] != part[u]) boundary[a.cols[k]] = 1;
  out.boundary_vertices = std::count(boundary.begin(), boundary.end(), 1);
  const Pattern g = symmetric_graph(a);
  for (std::int64_t u = 0; u < g.n; ++u)
    for (std::int64_t k = g.offsets[u]; k < g.offsets[u + 1]; ++k)
      if (g.cols[k] > u && part[g.cols[k]] != part[u]) ++out.cut_edges;
  return out;
}

}  // namespace commfit
