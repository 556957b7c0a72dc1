// Interrupting `commfit plan` while it writes leaves no plan and no temporary debris.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace fs = std::filesystem;

namespace {

bool has_entry_starting_with(const fs::path& dir, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("interrupt_during_plan_write_leaves_nothing") {
  const fs::path dir = fs::temp_directory_path() / ("commfit-interrupt-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path matrix = dir / "big.json";
  // 20000 ranks: writing 20000 rank files takes long enough to be caught in the act.
  const std::string gen = std::string(COMMFIT_EXE " gen random -n 20000 --density 0.0005 --seed 2 -o ") + matrix.string();
  REQUIRE(std::system(gen.c_str()) == 0);
  for (const char* out : {"out.plan", "out.cfp"}) {
    for (int sig : {SIGINT, SIGTERM}) {
      INFO(out << " signal " << sig);
      const std::string tmp_prefix = std::string(".") + out + ".tmp";
      REQUIRE(!has_entry_starting_with(dir, tmp_prefix));   // no debris from the round before
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        ::chdir(dir.c_str());
        ::execl(COMMFIT_EXE, COMMFIT_EXE, "plan", matrix.c_str(), "-o", out, "-q", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      // Wait until the temporary sibling exists (planning done, writing under way), then interrupt.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      bool caught = false;
      while (std::chrono::steady_clock::now() < deadline) {
        if (has_entry_starting_with(dir, tmp_prefix)) {
          caught = true;
          break;
        }
        int status = 0;
        if (::waitpid(child, &status, WNOHANG) == child) break;   // finished before we caught it
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      if (!caught) {
        MESSAGE("the write finished before it could be interrupted; nothing to check this round");
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        fs::remove_all(dir / out);
        continue;
      }
      ::kill(child, sig);
      int status = 0;
      REQUIRE(::waitpid(child, &status, 0) == child);
      CHECK(WIFSIGNALED(status));
      CHECK(WTERMSIG(status) == sig);
      CHECK(!fs::exists(dir / out));
      CHECK(!has_entry_starting_with(dir, tmp_prefix));
    }
  }
  fs::remove_all(dir);
}
