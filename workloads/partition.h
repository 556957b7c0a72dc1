// Owners of the vertices for commfit extract: read from a partition vector file, or computed with
// METIS (METIS_PartGraphKway, METIS 5 API from Debian's libmetis-dev).
#pragma once

#include "workloads/halo.h"

#include <string>
#include <string_view>

namespace commfit {

// A partition vector file: one 0-based part number per line for each of the n vertices, in vertex
// order — the format gpmetis and mpmetis write (GRAPH.part.K). Blank lines and lines starting with
// '%' or '#' are skipped. `parts` > 0: every entry must be below it; parts == 0: the part count is
// the largest entry + 1. Throws InputError (FILE: line N: problem) on anything else, including a
// count of entries other than n.
struct PartitionVector {
  std::vector<std::int32_t> part;
  std::int32_t parts = 0;
};
PartitionVector parse_partition(std::string_view text, const std::string& file, std::int64_t n, std::int32_t parts);

// Partitions symmetric_graph-style `graph` (symmetric, no diagonal) into `parts` parts with
// METIS_PartGraphKway (default options, METIS_OPTION_SEED = seed mod 2^31, unit weights), so the
// same graph, parts and seed give the same partition. parts == 1, and a graph without edges, are
// handled here without METIS (vertices in parts of consecutive blocks). Needs 1 <= parts <= n.
std::vector<std::int32_t> partition_metis(const Pattern& graph, std::int32_t parts, std::uint64_t seed);

}  // namespace commfit
