// commfit report (backends/report.h) through the command line: a self-contained, deterministic
// page; the block rule for large p; bad plans exit 2 with one line and no page. Also the progress
// line of commfit plan: never on a pipe, only on a terminal, silenced by --quiet. The page in a
// real browser: tests/report/.
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using Run = commfit::test::CommandRun;
using commfit::test::slurp;

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

const fs::path& work() {
  static const fs::path dir = commfit::test::scratch_dir("report");
  return dir;
}

// Runs `commfit ARGS` in the work directory; `prefix` goes before the command (env, script).
Run sh(const std::string& cmd) {
  const fs::path out = work() / "stdout", err = work() / "stderr";
  const std::string line = "cd " + work().string() + " && " + cmd + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(line.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}
Run cli(const std::string& args) { return sh(std::string(COMMFIT_EXE) + " " + args); }

using commfit::test::example;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t k = s.find(what); k != std::string::npos; k = s.find(what, k + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report_self_contained_and_deterministic") {
  REQUIRE(cli("plan " + example("random_sparse_32.json") + " --strategy auto -o auto.plan -q").status == 0);
  REQUIRE(cli("convert auto.plan auto.cfp").status == 0);
  const Run a = cli("report auto.plan -o a.html");
  REQUIRE_MESSAGE(a.status == 0, a.err);
  REQUIRE(cli("report auto.cfp -o b.html -q").status == 0);
  const std::string html = slurp(work() / "a.html");
  // Both plan forms give the same page but for the plan's name in the title; reruns are identical.
  std::string b = slurp(work() / "b.html");
  for (std::size_t at; (at = b.find("auto.cfp")) != std::string::npos;) b.replace(at, 8, "auto.plan");
  CHECK(html == b);
  REQUIRE(cli("report auto.plan -o c.html -q").status == 0);
  CHECK(html == slurp(work() / "c.html"));
  CHECK(html.find("id=\"heatmap\"") != std::string::npos);
  CHECK(html.find("id=\"gantt\"") != std::string::npos);
  CHECK(html.find("id=\"utilisation\"") != std::string::npos);
  // The candidate table of auto: every candidate of the manifest, the chosen one starred.
  const std::string manifest = slurp(work() / "auto.plan/manifest.json");
  const std::size_t candidates = count(manifest, "\"name\"");
  CHECK(candidates >= 5);
  CHECK(count(html, "<tr") == candidates + 3);   // + the plan table's two rows and the header
  CHECK(count(html, "class=\"chosen\"") == 1);
  // Nothing outside the page.
  for (const char* bad : {"http://", "https://", "src=", "href=", "url(", "@import"}) CHECK_MESSAGE(html.find(bad) == std::string::npos, bad);
  // Heatmap: one cell per nonzero rank pair (p = 32 is below the block size): 148 messages.
  CHECK(html.find("data-cells=\"148\"") != std::string::npos);
  CHECK(count(html, "<rect class=\"c\"") == 148);
}

TEST_CASE("report_blocks_for_large_p") {
  REQUIRE(cli("gen uniform -n 200 -d 3 -o u200.json").status == 0);
  REQUIRE(cli("plan u200.json --topology hypercube:8 -o u200.plan -q").status == 0);
  REQUIRE(cli("report u200.plan -o u200.html -q").status == 0);
  const std::string html = slurp(work() / "u200.html");
  // 200 ranks: blocks of ceil(200 / 64) = 4 ranks, 50 x 50 cells at most.
  CHECK(html.find("blocks of 4 consecutive ranks (50 x 50 cells)") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(html, m, std::regex("data-cells=\"([0-9]+)\"")));
  CHECK(std::stoi(m[1]) <= 2500);
  CHECK(std::stoi(m[1]) > 0);
  CHECK(html.find("id=\"links\"") != std::string::npos);   // hypercube: the most loaded links
  // Rows of the Gantt chart: blocks of 4 ranks too (ceil(200 / 64)).
  CHECK(html.find("Rows are blocks of 4 consecutive ranks") != std::string::npos);
}

// The report's figures: an async plan's fill cannot pass 100 %, a mesh
// counts the links it has (48 on mesh:4x4, not the 64 ids), "1 phase", and every link of the
// machine appears in the load histogram, idle ones included.
TEST_CASE("report_fill_link_counts_and_histogram") {
  REQUIRE(cli("plan " + example("random_sparse_32.json") + " --strategy async -o async.plan -q").status == 0);
  REQUIRE(cli("report async.plan -o async.html -q").status == 0);
  std::string html = slurp(work() / "async.html");
  std::smatch m;
  REQUIRE(std::regex_search(html, m, std::regex("the phases move ([0-9.]+)% of what their senders could")));
  CHECK(std::stod(m[1]) <= 100.0);
  CHECK(std::stod(m[1]) > 0.0);
  CHECK(html.find("1 phase;") != std::string::npos);
  for (const auto& [topology_, links] : {std::pair{"mesh:4x4", 48}, std::pair{"torus:4x4", 64}, std::pair{"mesh:4x2x2", 56}}) {
    const auto& topology = topology_;
    CAPTURE(topology);
    REQUIRE(cli("plan " + example("stencil2d_16.json") + " --topology " + topology + " -o mesh.plan -q").status == 0);
    REQUIRE(cli("report mesh.plan -o mesh.html -q").status == 0);
    html = slurp(work() / "mesh.html");
    CHECK(html.find("<code>" + std::string(topology) + "</code>: " + std::to_string(links) + " links") != std::string::npos);
    CHECK(html.find("<svg id=\"linkhist\" data-links=\"" + std::to_string(links) + "\"") != std::string::npos);
  }
}

TEST_CASE("report_bad_plans") {
  REQUIRE(cli("plan " + example("stencil2d_16.json") + " -o s.plan -q").status == 0);
  // A copy of s.plan with one file's text replaced.
  auto edited = [](const std::string& name, const std::string& file, const std::string& from, const std::string& to) {
    fs::remove_all(work() / name);
    fs::copy(work() / "s.plan", work() / name, fs::copy_options::recursive);
    std::string text = slurp(work() / name / file);
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    write_text(work() / name / file, text.substr(0, at) + to + text.substr(at + from.size()));
  };
  edited("renamed.plan", "rank-00001.json", "\"sends\"", "\"sendz\"");             // the strict reader's
  edited("resized.plan", "rank-00001.json", "\"sends\": [[0, 8192]", "\"sends\": [[0, 8191]");   // sends vs steps or fingerprint
  edited("candidates.plan", "manifest.json", "\"options\": {", "\"options\": {\"candidates\": [{\"name\": 3}], ");
  // A phase count far beyond the steps (every file agrees), within the readers' 2^24 limit:
  // refused before any per-phase table.
  fs::remove_all(work() / "phases.plan");
  fs::copy(work() / "s.plan", work() / "phases.plan", fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(work() / "phases.plan")) {
    std::string text = slurp(e.path());
    const std::size_t at = text.find("\"phases\": 4,");
    REQUIRE(at != std::string::npos);
    text = text.substr(0, at) + "\"phases\": 16000000," + text.substr(at + 12);
    // Without the manifest's plan hash (as in a plan from before it), which would refuse the edit first.
    if (const std::size_t h = text.find(",\n \"plan_hash\": \"h64:"); h != std::string::npos)
      text.erase(h, text.find('"', h + 21) + 1 - h);
    write_text(e.path(), text);
  }
  for (const char* plan : {"renamed.plan", "resized.plan", "candidates.plan", "phases.plan", "missing.plan"}) {
    const Run r = cli(std::string("report ") + plan + " -o bad.html");
    CHECK(r.status == 2);
    CHECK(count(r.err, "\n") == 1);
    CHECK_MESSAGE(r.err.rfind("commfit: error: ", 0) == 0, r.err);
    CHECK(!fs::exists(work() / "bad.html"));
  }
  CHECK(cli("report phases.plan -o bad.html").err.find("manifest.json: /phases: 16000000 phases for ") != std::string::npos);
  CHECK(cli("report candidates.plan -o bad.html").err.find("manifest.json: /options/candidates/0/name: expected a string") != std::string::npos);
  // No temporary left behind either.
  for (const auto& e : fs::directory_iterator(work())) CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("plan_progress_only_on_a_terminal") {
  // COMMFIT_PROGRESS_MESSAGES=1 makes this small plan count as long (the default is 1e6 messages).
  const std::string env = "env COMMFIT_PROGRESS_MESSAGES=1 ";
  const std::string plan = std::string(COMMFIT_EXE) + " plan " + example("random_sparse_32.json") + " --strategy auto -o p.plan";
  // stderr a file: nothing on it; --time-passes prints its lines and nothing else.
  const Run pipe = sh(env + plan);
  CHECK(pipe.status == 0);
  CHECK(pipe.err.empty());
  const Run timed = sh(env + std::string(COMMFIT_EXE) + " plan " + example("random_sparse_32.json") + " -o t.plan --time-passes");
  CHECK(timed.status == 0);
  CHECK(!timed.err.empty());
  std::istringstream lines(timed.err);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.rfind("commfit: pass ", 0) == 0, line);
  CHECK(timed.err.find('\r') == std::string::npos);
  // With --strategy auto, every candidate's passes, named.
  const Run timed_auto = sh(env + plan + " --time-passes");
  CHECK(timed_auto.err.find("commfit: pass direct/optimal: decompose: ") != std::string::npos);
  CHECK(timed_auto.err.find("commfit: pass async: verify: ") != std::string::npos);
  // On a terminal (script(1) gives the command a pty): the progress line, erased at the end;
  // --quiet silences it.
  if (::access("/usr/bin/script", X_OK) != 0) {
    MESSAGE("script(1) not found: the terminal case is not checked");
    return;
  }
  const Run tty = sh("script -qec '" + env + plan + "' /dev/null");
  CHECK(tty.status == 0);
  CHECK_MESSAGE(tty.out.find("\r\x1b[Kcommfit: ") != std::string::npos, tty.out, tty.err);
  CHECK(tty.out.find("pass direct/optimal: decompose") != std::string::npos);
  CHECK(tty.out.find("\r\x1b[K") != std::string::npos);
  const Run quiet = sh("script -qec '" + env + plan + " -q' /dev/null");
  CHECK(quiet.status == 0);
  CHECK(quiet.out.empty());
  // Below the threshold nothing shows on a terminal either.
  const Run small = sh("script -qec '" + plan + " -q' /dev/null");
  CHECK(small.out.empty());
}

// --machine: the page prices the plan on a machine file's figures, as `plan --machine` would have
// priced the same schedule; a bad machine file is refused with one line and no page.
TEST_CASE("report_priced_on_a_machine_file") {
  const std::string machine = std::string(COMMFIT_SOURCE_DIR) + "/tests/fixtures/machine/good/flow_cluster.json";
  REQUIRE(cli("plan " + example("random_sparse_32.json") + " --strategy async -o made.plan -q").status == 0);
  const Run priced = cli("plan " + example("random_sparse_32.json") + " --strategy async --machine " + machine + " -o priced.plan");
  REQUIRE_MESSAGE(priced.status == 0, priced.err);
  std::smatch m;
  const std::string manifest = slurp(work() / "priced.plan/manifest.json");
  REQUIRE(std::regex_search(manifest, m, std::regex("\"estimate_s\": ([0-9.e+-]+)")));
  const double estimate = std::stod(m[1]);
  REQUIRE(cli("report made.plan -o made.html -q").status == 0);
  REQUIRE(cli("report priced.plan -o priced.html -q").status == 0);
  const Run r = cli("report made.plan --machine " + machine + " -o remade.html -q");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string made = slurp(work() / "made.html"), remade = slurp(work() / "remade.html"), direct = slurp(work() / "priced.html");
  CHECK(made.find("id=\"machine\"") == std::string::npos);
  CHECK(remade.find("id=\"machine\"") != std::string::npos);
  CHECK(remade.find("flow_cluster.json") != std::string::npos);
  // The cost table's first row: the same estimate and bound as the plan made on that machine.
  auto first_row = [](const std::string& html) {
    const std::size_t at = html.find("<table class=\"cost\">");
    return html.substr(at, html.find("</table>", at) - at);
  };
  CHECK(first_row(remade) == first_row(direct));
  CHECK(first_row(remade) != first_row(made));
  CHECK(estimate > 0);
  // A machine file that is not one: one line, no page.
  const Run bad = cli("report made.plan --machine " + std::string(COMMFIT_SOURCE_DIR) + "/tests/fixtures/machine/bad/zero_tau.json -o bad.html");
  CHECK(bad.status == 2);
  CHECK(count(bad.err, "\n") == 1);
  CHECK(bad.err.find("zero_tau.json") != std::string::npos);
  CHECK(!fs::exists(work() / "bad.html"));
}
