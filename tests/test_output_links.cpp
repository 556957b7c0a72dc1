// Files the command line writes are never written through a symbolic link planted where it will
// write. Another user who can write in the output's directory can predict the temporary names
// (.NAME.tmp-HOST-PID, .NAME.old-HOST-PID: the PIDs the next processes get) and the output name:
// links to a victim's file are planted at all of them, commfit runs, and the victim keeps its
// bytes and its mode. commfit either writes its output as a new regular file beside the links or
// refuses with one line naming the path.
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace commfit;

namespace {

fs::path dir() { return test::scratch_dir("links"); }

test::CommandRun run(const std::string& args) { return test::run_commfit(args, dir(), dir()); }

using commfit::test::example;

std::string host_tag() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string tag = host[0] ? host : "localhost";
  for (char& c : tag)
    if (c == '/' || c == '-') c = '_';
  return tag;
}

long read_number(const char* file) {
  std::ifstream in(file);
  long x = 0;
  in >> x;
  return x;
}

// The PIDs the next `n` processes are likely to get: from the last one handed out on.
std::vector<long> next_pids(int n) {
  const long last = read_number("/proc/sys/kernel/ns_last_pid"), max = read_number("/proc/sys/kernel/pid_max");
  std::vector<long> pids;
  for (long k = 1; k <= n; ++k) {
    long pid = (last + k) % (max > 0 ? max : 32768);
    if (pid < 300) pid += 300;   // the kernel wraps to 300, not 0
    pids.push_back(pid);
  }
  return pids;
}

// A file of someone else's that an attacker wants overwritten: a secret, mode 0600.
struct Victim {
  fs::path file = dir() / "victim" / "secret.txt";
  Victim() {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "the victim's secret\n";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  }
  void check_untouched() const {
    CHECK(fs::is_regular_file(fs::symlink_status(file)));
    CHECK(test::slurp(file) == "the victim's secret\n");
    CHECK(fs::status(file).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
    for (const auto& e : fs::directory_iterator(file.parent_path())) CHECK(e.path() == file);   // nothing created beside it
  }
};

// Links at every temporary name of `name` (in dir()) for the next PIDs: to `tmp` at the
// .tmp- names, to `old` at the .old- names.
void plant(const std::string& name, const fs::path& tmp, const fs::path& old) {
  const std::string tag = host_tag();
  for (const long pid : next_pids(3000)) {
    std::error_code ec;
    fs::create_symlink(tmp, dir() / ("." + name + ".tmp-" + tag + "-" + std::to_string(pid)), ec);
    fs::create_symlink(old, dir() / ("." + name + ".old-" + tag + "-" + std::to_string(pid)), ec);
  }
}

// Removes the links plant() left; anything else of `name`'s siblings is commfit's debris.
std::vector<std::string> unplant(const std::string& name) {
  std::vector<std::string> debris;
  std::vector<fs::path> links;
  for (const auto& e : fs::directory_iterator(dir())) {
    const std::string f = e.path().filename().string();
    if (f.rfind("." + name + ".", 0) != 0) continue;
    if (fs::is_symlink(e.symlink_status())) links.push_back(e.path());
    else debris.push_back(f);
  }
  for (const fs::path& l : links) fs::remove(l);
  return debris;
}

// Runs `args`, which writes `name` (in dir()), with links planted at its temporary names (to the
// victim's file, or to its directory when `to_directory`): it must succeed, `name` must be a new
// regular file or directory, and the victim untouched.
void writes_beside_the_links(const std::string& args, const std::string& name, bool to_directory = false) {
  const Victim victim;
  fs::remove_all(dir() / name);
  const fs::path victim_dir = victim.file.parent_path();
  plant(name, to_directory ? victim_dir : victim.file, victim_dir);
  const test::CommandRun r = run(args);
  CHECK_MESSAGE(r.status == 0, args, ": ", r.err);
  const fs::file_status st = fs::symlink_status(dir() / name);
  CHECK_MESSAGE((fs::is_regular_file(st) || fs::is_directory(st)), name, " is not a new file or directory");
  victim.check_untouched();
  CHECK(unplant(name).empty());
}

// Runs `args` with `name` itself a link to the victim: it must refuse with one line naming it.
void refuses_a_link_as_the_output(const std::string& args, const std::string& name) {
  const Victim victim;
  fs::remove_all(dir() / name);
  fs::create_symlink(victim.file, dir() / name);
  const test::CommandRun r = run(args);
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: " + name + " is a symbolic link: not replacing it"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(fs::is_symlink(dir() / name));
  victim.check_untouched();
  fs::remove(dir() / name);
}

}  // namespace

TEST_CASE("output_links_gen") {
  writes_beside_the_links("gen uniform -n 8 -d 2 -o out.json", "out.json");
  CHECK(test::slurp(dir() / "out.json").find("\"format\"") != std::string::npos);
  refuses_a_link_as_the_output("gen uniform -n 8 -d 2 -o link.json", "link.json");
}

TEST_CASE("output_links_plan_binary") {
  writes_beside_the_links("plan " + example("stencil2d_16.json") + " -q -o out.cfp", "out.cfp");
  CHECK(run("verify " + example("stencil2d_16.json") + " out.cfp").status == 0);
  refuses_a_link_as_the_output("plan " + example("stencil2d_16.json") + " -q -o link.cfp", "link.cfp");
}

TEST_CASE("output_links_plan_directory") {
  writes_beside_the_links("plan " + example("stencil2d_16.json") + " -q -o out.plan", "out.plan");
  CHECK(run("verify " + example("stencil2d_16.json") + " out.plan").status == 0);
  writes_beside_the_links("plan " + example("stencil2d_16.json") + " -q -o out.plan", "out.plan", true);   // replacing one
  refuses_a_link_as_the_output("plan " + example("stencil2d_16.json") + " -q -o link.plan", "link.plan");
}

TEST_CASE("output_links_convert") {
  REQUIRE(run("plan " + example("stencil2d_16.json") + " -q -o src.plan").status == 0);
  REQUIRE(run("plan " + example("stencil2d_16.json") + " -q -o src.cfp").status == 0);
  writes_beside_the_links("convert src.plan conv.cfp", "conv.cfp");
  writes_beside_the_links("convert src.cfp conv.plan", "conv.plan", true);
  writes_beside_the_links("convert " + example("stencil2d_16.json") + " conv.mtx", "conv.mtx");
  refuses_a_link_as_the_output("convert src.plan link.cfp", "link.cfp");
  refuses_a_link_as_the_output("convert src.cfp link.plan", "link.plan");
  refuses_a_link_as_the_output("convert " + example("stencil2d_16.json") + " link.mtx", "link.mtx");
}

TEST_CASE("output_links_report") {
  REQUIRE(run("plan " + example("stencil2d_16.json") + " -q -o page.cfp").status == 0);
  writes_beside_the_links("report page.cfp -q -o page.html", "page.html");
  refuses_a_link_as_the_output("report page.cfp -q -o link.html", "link.html");
}
