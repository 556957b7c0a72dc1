#include "workloads/partition.h"

#include "ir/error.h"
#include "ir/matrix_io.h"

#include <metis.h>

#include <charconv>

namespace commfit {

PartitionVector parse_partition(std::string_view text, const std::string& file, std::int64_t n, std::int32_t parts) {
  PartitionVector out;
  out.part.reserve(static_cast<std::size_t>(std::min<std::int64_t>(n, static_cast<std::int64_t>(text.size() / 2 + 1))));
  std::size_t pos = 0, line_no = 0;
  std::int32_t largest = -1;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line[0] == '%' || line[0] == '#') continue;
    const std::string place = "line " + std::to_string(line_no);
    if (static_cast<std::int64_t>(out.part.size()) == n)
      throw InputError(file, place, "more entries than the " + std::to_string(n) + " vertices of the input");
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || p != line.data() + line.size())
      throw InputError(file, place, "expected one part number per line, got \"" + std::string(line.substr(0, 40)) + "\"");
    if (v < 0) throw InputError(file, place, "part " + std::to_string(v) + " is negative (parts are numbered from 0)");
    if (parts > 0 && v >= parts)
      throw InputError(file, place, "part " + std::to_string(v) + " is out of range (--parts " + std::to_string(parts) + ": 0 .. " +
                                        std::to_string(parts - 1) + ")");
    if (v >= static_cast<std::int64_t>(kMaxRanks))
      throw InputError(file, place, "part " + std::to_string(v) + " is over the limit of " + std::to_string(kMaxRanks) + " ranks");
    largest = std::max(largest, static_cast<std::int32_t>(v));
    out.part.push_back(static_cast<std::int32_t>(v));
  }
  if (static_cast<std::int64_t>(out.part.size()) != n)
    throw InputError(file, "line " + std::to_string(line_no), "the partition has " + std::to_string(out.part.size()) +
                                                                  " entries, the input has " + std::to_string(n) + " vertices");
  out.parts = parts > 0 ? parts : largest + 1;
  return out;
}

std::vector<std::int32_t> partition_metis(const Pattern& graph, std::int32_t parts, std::uint64_t seed) {
  commfit_assert(parts >= 1 && parts <= graph.n && graph.n <= kMaxVertices && graph.entries() <= kMaxPatternEntries,
                 "partition_metis", "bad arguments");
  std::vector<std::int32_t> part(static_cast<std::size_t>(graph.n), 0);
  if (parts == 1) return part;
  if (graph.entries() == 0) {   // no edges: nothing to cut, consecutive blocks of vertices
    for (std::int64_t v = 0; v < graph.n; ++v) part[v] = static_cast<std::int32_t>(v * parts / graph.n);
    return part;
  }
  static_assert(sizeof(idx_t) == 4, "extract expects METIS built with 32-bit idx_t (Debian's libmetis-dev)");
  idx_t nvtxs = static_cast<idx_t>(graph.n), ncon = 1, nparts = parts, objval = 0;
  std::vector<idx_t> xadj(graph.offsets.begin(), graph.offsets.end());
  std::vector<idx_t> adjncy(graph.cols.begin(), graph.cols.end());
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % (std::uint64_t{1} << 31));
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> where(static_cast<std::size_t>(graph.n), 0);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr, &nparts, nullptr,
                                         nullptr, options, &objval, where.data());
  if (status == METIS_ERROR_MEMORY) throw std::bad_alloc();
  commfit_assert(status == METIS_OK, "partition_metis", "METIS_PartGraphKway failed with status " + std::to_string(status));
  for (std::size_t v = 0; v < where.size(); ++v) {
    commfit_assert(where[v] >= 0 && where[v] < parts, "partition_metis", "METIS returned a part out of range");
    part[v] = where[v];
  }
  return part;
}

}  // namespace commfit
