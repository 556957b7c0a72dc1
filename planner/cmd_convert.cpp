// commfit convert IN OUT: between the two forms of a plan (docs/FORMAT.md §3).
// A plan directory becomes one binary file (backends/plan_binary.h), a binary file becomes a
// directory. Both are checked completely on the way (every rank file, every checksum) and
// written atomically. Exit 0, or 2 with "commfit: error: FILE: PLACE: problem".
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "planner/commands.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace commfit {
namespace {

struct ConvertCommand {
  std::string in, out;
};

int run_convert(const ConvertCommand& c) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(c.in, ec)) {
    if (fs::is_directory(c.out, ec))
      throw UsageError(c.out + " is a directory: the binary form of plan directory " + c.in + " is one file");
    convert_plan_dir_to_binary(c.in, c.out);
    std::printf("commfit: wrote %s (binary plan, %llu bytes) from %s\n", c.out.c_str(),
                static_cast<unsigned long long>(fs::file_size(c.out)), c.in.c_str());
    return 0;
  }
  if (!fs::exists(c.in, ec)) throw InputError(c.in, "", "no such plan directory or binary plan file");
  check_plan_dir_output(c.out);
  convert_plan_binary_to_dir(c.in, c.out);
  std::printf("commfit: wrote %s (plan directory) from %s\n", c.out.c_str(), c.in.c_str());
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<ConvertCommand>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Convert a plan directory to the single-file binary form (for large p), or back");
  sub->add_option("IN", c->in, "Plan directory or binary plan file (.cfp)")->required();
  sub->add_option("OUT", c->out, "Binary plan file to write (from a directory), or plan directory (from a file)")
      ->required();
  sub->callback([c, &run] { run = [c] { return run_convert(*c); }; });
}

}  // namespace commfit
