#include "support/run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace commfit::test {
namespace {

struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(std::filesystem::path d) : dir(std::move(d)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

std::filesystem::path source_dir() { return std::filesystem::path(COMMFIT_SOURCE_DIR).lexically_normal(); }

std::string example(const std::string& name) { return COMMFIT_SOURCE_DIR "/examples/" + name; }

std::filesystem::path scratch_dir(const std::string& what) {
  static std::map<std::string, std::unique_ptr<Scratch>> dirs;   // destroyed at exit
  auto& s = dirs[what];
  if (!s) s = std::make_unique<Scratch>(std::filesystem::temp_directory_path() / ("commfit-" + what + "-" + std::to_string(::getpid())));
  return s->dir;
}

std::filesystem::path fresh_path(const std::string& what) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / ("commfit-test-" + std::to_string(::getpid()) + "-" + what);
  std::filesystem::remove_all(p);
  return p;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandRun run_commfit(const std::string& args, const std::filesystem::path& cwd, const std::filesystem::path& scratch) {
  const auto out = scratch / "stdout", err = scratch / "stderr";
  const std::string cmd = "cd '" + cwd.string() + "' && '" COMMFIT_EXE "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

}  // namespace commfit::test
