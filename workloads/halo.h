// The communication of a halo exchange / SpMV x-vector update (commfit extract, docs/WORKLOADS.md):
// vertices (rows = columns of a square sparse matrix, or mesh vertices) are owned by parts; a part
// that owns row u and finds a nonzero in column v of that row needs x[v]; the owner of v sends it
// once to every other part that needs it, so COM(p, q) = bytes_per_value x |{v owned by p that q
// needs}|. The pattern is read from a file (workloads/mtx_pattern.h, workloads/gmsh.h) and the
// owners come from a partition (workloads/partition.h).
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>
#include <vector>

namespace commfit {

// Largest vertex count extract accepts: METIS indexes with 32-bit integers, and every vertex costs
// a few arrays (64 Mi vertices, about 1.5 GiB of working memory before the edges).
inline constexpr std::int64_t kMaxVertices = std::int64_t{1} << 26;
// Largest number of stored (row, column) pairs, directed, after symmetrisation (METIS's 32 bits).
inline constexpr std::int64_t kMaxPatternEntries = (std::int64_t{1} << 31) - 1;

// Compressed rows of an n x n pattern: the columns of row u are cols[offsets[u] .. offsets[u+1]),
// sorted, without repeats. The diagonal may be present.
struct Pattern {
  std::int64_t n = 0;
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int32_t> cols;
  std::int64_t entries() const { return static_cast<std::int64_t>(cols.size()); }
};

// Builds a Pattern from (row, column) pairs (any order, repeats allowed); pairs is consumed.
Pattern pattern_from_pairs(std::int64_t n, std::vector<std::pair<std::int32_t, std::int32_t>> pairs);

// The pattern made symmetric and without its diagonal: the graph METIS partitions.
Pattern symmetric_graph(const Pattern& a);

// COM(p, q) as above; part[v] in 0 .. parts-1 for every vertex. Local entries are not produced.
// Needs bytes_per_value x n <= 2^53 (callers check it).
CommMatrix halo_matrix(const Pattern& a, const std::vector<std::int32_t>& part, std::int32_t parts, Bytes bytes_per_value);

// Vertices of `a` whose column some other part's row reads (the boundary vertices), and the
// edges of symmetric_graph(a) that join two parts: for the summary line and the tests.
struct HaloCounts {
  std::int64_t boundary_vertices = 0;
  std::int64_t cut_edges = 0;
};
HaloCounts halo_counts(const Pattern& a, const std::vector<std::int32_t>& part);

}  // namespace commfit
