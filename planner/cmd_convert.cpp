// commfit convert IN OUT: between the two forms of a plan (docs/FORMAT.md §3), or of a matrix.
// A plan directory becomes one binary file (backends/plan_binary.h), a binary file becomes a
// directory. Both are checked completely on the way (every rank file, every checksum) and
// written atomically. A matrix file (or - for standard input) is written as JSON or Matrix Market
// (by OUT's name, or --format; - for standard output). Exit 0, or 2 with "commfit: error: FILE:
// PLACE: problem".
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "workloads/matrix_output.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace commfit {
namespace {

struct ConvertCommand {
  std::string in, out, format;
};

int run_convert(const ConvertCommand& c) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(c.in, ec)) {
    if (!c.format.empty()) throw UsageError("--format applies to matrices, not plans");
    if (fs::is_directory(c.out, ec))
      throw UsageError(c.out + " is a directory: the binary form of plan directory " + c.in + " is one file");
    convert_plan_dir_to_binary(c.in, c.out);
    std::printf("commfit: wrote %s (binary plan, %llu bytes) from %s\n", c.out.c_str(),
                static_cast<unsigned long long>(fs::file_size(c.out)), c.in.c_str());
    return 0;
  }
  if (!fs::exists(c.in, ec) && c.in != "-") throw InputError(c.in, "", "no such plan directory, binary plan file or matrix file");
  if (c.in == "-" || !is_plan_binary(c.in)) {   // a matrix
    const MatrixFile m = read_matrix(c.in);
    write_matrix_output(m.matrix, c.out, c.format);
    if (c.out != "-")
      std::printf("commfit: wrote %s (matrix, %lld messages) from %s\n", c.out.c_str(), static_cast<long long>(m.matrix.nnz()), c.in.c_str());
    return 0;
  }
  if (!c.format.empty()) throw UsageError("--format applies to matrices, not plans");
  check_plan_dir_output(c.out);
  convert_plan_binary_to_dir(c.in, c.out);
  std::printf("commfit: wrote %s (plan directory) from %s\n", c.out.c_str(), c.in.c_str());
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<ConvertCommand>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Convert a plan directory to the single-file binary form (for large p), or back; or a matrix between JSON and Matrix Market");
  sub->add_option("IN", c->in, "Plan directory, binary plan file (.cfp), or matrix file (- for standard input)")->required();
  sub->add_option("OUT", c->out, "Binary plan file to write (from a directory), plan directory (from a file), or matrix file (.mtx: Matrix Market; - for standard output)")
      ->required();
  sub->add_option("--format", c->format, "Matrices: write json or mtx whatever OUT's name")->check(CLI::IsMember({"json", "mtx"}));
  sub->callback([c, &run] { run = [c] { return run_convert(*c); }; });
}

}  // namespace commfit
