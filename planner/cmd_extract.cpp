// commfit extract INPUT (--parts K | --partition FILE) [-o MATRIX]: the communication matrix of a
// real computation (docs/WORKLOADS.md):
//   INPUT.mtx  the x-vector exchange of a sparse matrix-vector product (Matrix Market, square)
//   INPUT.msh  the halo exchange of a gmsh mesh's vertex graph
// The owner of vertex v sends x[v] (--bytes-per-value) once to every other part that reads it.
// The partition is a vector file, or METIS k-way on the symmetrised graph (--parts, --seed).
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "planner/units.h"
#include "workloads/gmsh.h"
#include "workloads/halo.h"
#include "workloads/matrix_output.h"
#include "workloads/mtx_pattern.h"
#include "workloads/partition.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace commfit {
namespace {

struct ExtractCommand {
  std::string format;   // json, mtx; "": by the output name
  std::string input;
  std::string output;
  std::string partition;
  std::int64_t parts = -1;   // -1: not given
  Bytes bytes_per_value = 8;
  std::uint64_t seed = 1;
  bool quiet = false;
};

int run_extract(const ExtractCommand& c) {
  const std::filesystem::path path(c.input);
  const std::string ext = path.extension().string();
  if (ext != ".mtx" && ext != ".msh")
    throw UsageError(c.input + ": cannot tell the input kind from the extension (expected .mtx, a Matrix Market sparse matrix, or .msh, a gmsh mesh)");
  if (c.partition.empty() && c.parts == -1) throw UsageError("give --parts K (partition with METIS) or --partition FILE");
  if (c.parts != -1 && (c.parts < 1 || c.parts > static_cast<std::int64_t>(kMaxRanks)))
    throw UsageError("--parts must be in 1 .. " + std::to_string(kMaxRanks));
  if (c.bytes_per_value < 1) throw UsageError("--bytes-per-value must be at least 1");

  const std::string text = read_text_file(path);
  Pattern pattern;
  std::string what;
  if (ext == ".mtx") {
    pattern = parse_mtx_pattern(text, c.input);
    what = "SpMV halo exchange of a " + std::to_string(pattern.n) + " x " + std::to_string(pattern.n) + " sparse matrix with " +
           std::to_string(pattern.entries()) + " nonzeros";
  } else {
    MeshGraph mesh = parse_msh(text, c.input);
    what = "mesh halo exchange of " + std::to_string(mesh.graph.n) + " vertices of " + std::to_string(mesh.elements) + " " +
           std::to_string(mesh.dimension) + "D elements (gmsh MSH " + mesh.version + ")";
    pattern = std::move(mesh.graph);
  }
  if (static_cast<double>(c.bytes_per_value) * static_cast<double>(pattern.n) > 0x1p53)
    throw UsageError("--bytes-per-value x vertices exceeds the message size limit of 2^53 bytes");

  std::vector<std::int32_t> part;
  std::int32_t parts = 0;
  std::string how;
  if (!c.partition.empty()) {
    PartitionVector pv = parse_partition(read_text_file(c.partition), c.partition, pattern.n, static_cast<std::int32_t>(std::max<std::int64_t>(c.parts, 0)));
    part = std::move(pv.part);
    parts = pv.parts;
    how = "partition " + std::filesystem::path(c.partition).filename().string();
  } else {
    if (c.parts > pattern.n)
      throw UsageError("--parts " + std::to_string(c.parts) + " is more than the " + std::to_string(pattern.n) + " vertices of " + c.input);
    parts = static_cast<std::int32_t>(c.parts);
    // A mesh's vertex graph is symmetric already; a matrix's pattern is symmetrised for METIS.
    part = ext == ".msh" ? partition_metis(pattern, parts, c.seed) : partition_metis(symmetric_graph(pattern), parts, c.seed);
    how = "METIS k-way, seed " + std::to_string(c.seed);
  }

  CommMatrix m = halo_matrix(pattern, part, parts, c.bytes_per_value);
  m.name = path.stem().string() + "_" + std::to_string(parts);
  m.description = "commfit extract " + path.filename().string() + ": " + what + " into " + std::to_string(parts) + " parts (" + how +
                  "), " + std::to_string(c.bytes_per_value) + " bytes per value";
  write_matrix_output(m, c.output, c.format);
  if (!c.quiet && !c.output.empty() && c.output != "-") {
    const HaloCounts hc = halo_counts(pattern, part);
    const TrafficStats s = traffic_stats(m);
    std::printf("%s: %lld vertices, %d parts (%s): %lld boundary vertices, %lld cut edges; %lld messages, h = %lld, t = %llu bytes -> %s\n",
                c.input.c_str(), static_cast<long long>(pattern.n), parts, how.c_str(), static_cast<long long>(hc.boundary_vertices),
                static_cast<long long>(hc.cut_edges), static_cast<long long>(s.messages), static_cast<long long>(s.h),
                static_cast<unsigned long long>(s.t), c.output.c_str());
  }
  return 0;
}

}  // namespace

void add_extract_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<ExtractCommand>();
  CLI::App* sub = app.add_subcommand("extract", "Derive the communication matrix of an SpMV (.mtx) or a mesh halo exchange (.msh)");
  sub->add_option("INPUT", c->input, "A Matrix Market sparse matrix (.mtx) or a gmsh mesh (.msh, ASCII 4.1 or 2.2)")->required();
  sub->add_option("-o,--output", c->output, "Matrix file to write, - or none: standard output (Matrix Market when it ends in .mtx)");
  sub->add_option("--format", c->format, "Write json or mtx (Matrix Market) whatever the file's name")->check(CLI::IsMember({"json", "mtx"}));
  sub->add_option("--parts,-k", c->parts, "Partition into K parts with METIS (with --partition: the part count, checked)");
  sub->add_option("--partition", c->partition, "Partition vector file: one 0-based part per vertex and line (gpmetis's .part.K)");
  sub->add_option("--bytes-per-value", c->bytes_per_value, "Bytes of one x[v] / vertex value")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--seed", c->seed, "METIS seed (METIS_OPTION_SEED)")->capture_default_str();
  sub->add_flag("-q,--quiet", c->quiet, "No summary line");
  sub->callback([c, &run] { run = [c] { return run_extract(*c); }; });
}

}  // namespace commfit
