// Running the commfit binary from a test: a scratch directory per test process (removed at exit),
// a shell command's exit status and captured output, whole-file reads, the source tree.
#pragma once

#include <filesystem>
#include <string>

namespace commfit::test {

// The source tree (COMMFIT_SOURCE_DIR), lexically normal.
std::filesystem::path source_dir();

// The path of examples/`name` in the source tree.
std::string example(const std::string& name);

// A directory of this test process under the system temporary directory, named after `what`
// and the process id; created on first use, removed when the process exits.
std::filesystem::path scratch_dir(const std::string& what);

// A path of this test process under the system temporary directory, named after `what` and the
// process id, with nothing at it (removed if there was): for the code under test to create.
std::filesystem::path fresh_path(const std::string& what);

std::string slurp(const std::filesystem::path& p);

struct CommandRun {
  int status = -1;   // exit status, -1 when killed by a signal
  std::string out, err;
};

// Runs `COMMFIT_EXE args` through the shell from directory `cwd`, capturing stdout and stderr
// into files of `scratch`.
CommandRun run_commfit(const std::string& args, const std::filesystem::path& cwd, const std::filesystem::path& scratch);

}  // namespace commfit::test
