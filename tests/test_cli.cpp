// The commfit command line end to end: plan -> verify, byte-identical reruns, exit statuses,
// no output on failure.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_command.h"

namespace fs = std::filesystem;

namespace {

using commfit::test::slurp;
using Result = commfit::test::CommandRun;

// The scratch directory of this process, removed at exit.
fs::path scratch_dir() { return commfit::test::scratch_dir("cli"); }

// COMMFIT_EXE args, run from the scratch directory.
Result run_cli(const std::string& args) { return commfit::test::run_commfit(args, scratch_dir(), scratch_dir()); }

using commfit::test::example;

}  // namespace

TEST_CASE("cli_plan_verify_examples") {
  for (const char* name : {"stencil2d_16.json", "random_sparse_32.json", "random_sparse_32.mtx", "transport_fig1.json",
                           "transport_fig9.json", "sample_sort_8.json"}) {
    if (!fs::exists(example(name))) continue;
    for (const char* alg : {"optimal", "rs_n", "lp"}) {
      INFO(name << " " << alg);
      const Result plan = run_cli("plan " + example(name) + " -o ex.plan --verify-each --algorithm " + alg);
      CHECK(plan.status == 0);
      CHECK(plan.err.empty());
      CHECK(plan.out.find("phases") != std::string::npos);
      const Result v = run_cli("verify " + example(name) + " ex.plan");
      CHECK(v.status == 0);
      CHECK(v.out.find("verifies") != std::string::npos);
    }
  }
}

TEST_CASE("cli_plans_are_byte_identical") {
  for (const char* alg : {"optimal", "rs_n"}) {
    REQUIRE(run_cli("plan " + example("random_sparse_32.json") + " -o a.plan -q --seed 7 --algorithm " + alg).status == 0);
    REQUIRE(run_cli("plan " + example("random_sparse_32.json") + " -o b.plan -q --seed 7 --algorithm " + alg).status == 0);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(scratch_dir() / "a.plan")) {
      const fs::path other = scratch_dir() / "b.plan" / e.path().filename();
      CHECK(slurp(e.path()) == slurp(other));
      ++files;
    }
    CHECK(files == 33);   // manifest + 32 ranks
  }
}

TEST_CASE("cli_default_output_name") {
  fs::remove_all(scratch_dir() / "stencil2d_16.plan");
  CHECK(run_cli("plan -q " + example("stencil2d_16.json")).status == 0);
  CHECK(fs::exists(scratch_dir() / "stencil2d_16.plan" / "manifest.json"));
  CHECK(fs::exists(scratch_dir() / "stencil2d_16.plan" / "rank-00015.json"));
}

TEST_CASE("cli_usage_errors_exit_2_without_output") {
  fs::remove_all(scratch_dir() / "none.plan");
  Result r = run_cli("plan " + example("stencil2d_16.json") + " -o none.plan --algorithm magic");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: unknown algorithm \"magic\" for strategy direct (choose from: optimal, rs_n, "));
  CHECK(!fs::exists(scratch_dir() / "none.plan"));
  // Options the strategy does not read are refused, not ignored (the strategy table says which).
  r = run_cli("plan " + example("stencil2d_16.json") + " -o none.plan --algorithm optimal --variant bhj");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: --variant does not apply to strategy direct (it applies to: two-stage)\n");
  r = run_cli("plan " + example("stencil2d_16.json") + " -o none.plan --print-after lower");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: --print-after \"lower\" is not a pass that returns a schedule (choose from: decompose, "));
  CHECK(!fs::exists(scratch_dir() / "none.plan"));
  r = run_cli("plan missing.json -o none.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: missing.json: cannot open the file: No such file or directory\n");
  CHECK(!fs::exists(scratch_dir() / "none.plan"));
  // A negative number for an unsigned option used to wrap to 2^64 - 5 and plan with it.
  r = run_cli("plan " + example("stencil2d_16.json") + " -o none.plan --strategy memory --memory=-5");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: plan: --memory: negative value -5: expected a non-negative integer (see commfit plan --help)\n");
  CHECK(!fs::exists(scratch_dir() / "none.plan"));
  r = run_cli("plan --no-such-flag x.json");
  CHECK(r.status == 2);
  r = run_cli("frobnicate");
  CHECK(r.status == 2);
}

// Every error of the parser is one line in the commfit: error: form, exit 2, naming the command,
// with a suggestion for a near miss; `commfit help COMMAND` is `commfit COMMAND --help`, and usage
// lines name commfit, not the path it was run by.
TEST_CASE("cli_parser_errors_are_one_line_with_near_miss_suggestions") {
  const std::string m = example("stencil2d_16.json");
  const std::pair<std::string, std::string> cases[] = {
      {"plna x.json",
       "commfit: error: unknown command \"plna\" (did you mean \"plan\"?) (commands: plan, verify, stats, show, convert, compare, bound, gen, "
       "extract, report)\n"},
      {"frobnicate", "commfit: error: unknown command \"frobnicate\" (commands: plan, verify, stats, show, convert, compare, bound, gen, extract, report)\n"},
      {"--verison", "commfit: error: unknown option \"--verison\" (did you mean \"--version\"?) (see commfit --help)\n"},
      {"plan", "commfit: error: plan: MATRIX is required (see commfit plan --help)\n"},
      {"plan " + m + " --toplogy torus:4x4", "commfit: error: plan: unknown option \"--toplogy\" (did you mean \"--topology\"?) (see commfit plan --help)\n"},
      {"plan " + m + " --toplogy=torus:4x4", "commfit: error: plan: unknown option \"--toplogy\" (did you mean \"--topology\"?) (see commfit plan --help)\n"},
      {"plan " + m + " --frobnicate", "commfit: error: plan: unknown option \"--frobnicate\" (see commfit plan --help)\n"},
      {"stats " + m + " extra.json", "commfit: error: stats: unexpected argument \"extra.json\" (see commfit stats --help)\n"},
      {"plan " + m + " --window=-3", "commfit: error: plan: --window -3: expected a size in bytes (or with a unit: 4MiB) (see commfit plan --help)\n"},
      {"plan " + m + " --rtt-weight nan", "commfit: error: plan: --rtt-weight nan: expected a size in bytes (8775 under smpirun) (see commfit plan --help)\n"},
      {"plan " + m + " --topology torus:0", "commfit: error: plan: --topology torus:0: every dimension size must be at least 1 (see commfit plan --help)\n"},
      {"compare " + m + " --chunk 4", "commfit: error: compare: unknown option \"--chunk\" (see commfit compare --help)\n"},
      // A machine smaller than the matrix: the same one line from bound and compare as from plan.
      {"bound " + m + " --topology torus:2x2x2", "commfit: error: topology torus:2x2x2 has 8 ranks (8 nodes x 1 per node) but the matrix has 16\n"},
      {"compare " + m + " --topology torus:2x2x2", "commfit: error: topology torus:2x2x2 has 8 ranks (8 nodes x 1 per node) but the matrix has 16\n"},
      {"plan " + m + " --strategy autoo",
       "commfit: error: unknown strategy \"autoo\" (did you mean \"auto\"?) (choose from: auto, direct, async, throttled, bounded, two-stage, "
       "memory, node)\n"},
      {"plan " + m + " --algorithm optimall",
       "commfit: error: unknown algorithm \"optimall\" for strategy direct (did you mean \"optimal\"?) (choose from: optimal, rs_n, rs_np, "
       "rs_nl, rs_nlp, rs_nlph, rs_nlh, lp, quantised)\n"},
      {"help frobnicate", "commfit: error: unknown command \"frobnicate\" (commands: plan, verify, stats, show, convert, compare, bound, gen, extract, report)\n"},
  };
  for (const auto& [args_, err] : cases) {
    const auto& args = args_;
    CAPTURE(args);
    fs::remove_all(scratch_dir() / "stencil2d_16.plan");
    const Result r = run_cli(args);
    CHECK(r.status == 2);
    CHECK(r.err == err);
    CHECK(r.out.empty());
    CHECK(!fs::exists(scratch_dir() / "stencil2d_16.plan"));
  }
  // Units: the same plan as plain numbers; a unit that does not fit is one line too.
  CHECK(run_cli("plan " + m + " -o plain.plan --tau 2e-6 --bandwidth 1.25e10 --eager-limit 65536 --overhead 5e-7").status == 0);
  CHECK(run_cli("plan " + m + " -o units.plan --tau 2us --bandwidth 100Gbps --eager-limit 64KiB --overhead 500ns").status == 0);
  CHECK(slurp(scratch_dir() / "plain.plan/manifest.json") == slurp(scratch_dir() / "units.plan/manifest.json"));
  Result r = run_cli("plan " + m + " -o units.plan --tau 2parsecs");
  CHECK(r.status == 2);
  // The command line's reader is in-job planning's (planner/plan_option.h): the same words after the option.
  CHECK(r.err == "commfit: error: plan: --tau 2parsecs: expected a time (2us, 500ns, or seconds) (see commfit plan --help)\n");
  r = run_cli("plan " + m + " -o units.plan --strategy memory --memory 1.5B");
  CHECK(r.err == "commfit: error: plan: --memory: \"1.5B\" is not a whole number of bytes below 2^64 (see commfit plan --help)\n");
  CHECK(run_cli("plan " + m + " -o units.plan --window 0.5e3").status == 0);   // not a unit: the number as before
  for (const char* args : {"help plan", "plan --help"}) {
    const Result r = run_cli(args);
    CHECK(r.status == 0);
    CHECK(r.out.find("Usage: commfit plan [OPTIONS] MATRIX") != std::string::npos);
  }
  const Result top = run_cli("help");
  CHECK(top.status == 0);
  CHECK(top.out.find("Usage: commfit [OPTIONS] [SUBCOMMAND]") != std::string::npos);
}

// Standard input and output, and formats told apart by content: gen | stats -, gen -o x.mtx
// writes Matrix Market, an upper-case .MTX reads as one, JSON in a .mtx file reads as JSON, and
// a plan made from standard input verifies against the same matrix in either format.
TEST_CASE("cli_standard_input_and_matrix_market_output") {
  Result r = run_cli("gen uniform -n 16 -d 4 -q | " COMMFIT_EXE " stats -");
  CHECK(r.status == 0);
  CHECK(r.out.find("messages     64 network") != std::string::npos);
  REQUIRE(run_cli("gen uniform -n 16 -d 4 -q -o u.mtx").status == 0);
  CHECK(slurp(scratch_dir() / "u.mtx").starts_with("%%MatrixMarket matrix coordinate integer general\n"));
  fs::copy_file(scratch_dir() / "u.mtx", scratch_dir() / "U.MTX", fs::copy_options::overwrite_existing);
  REQUIRE(run_cli("gen uniform -n 16 -d 4 -q --format json -o j.mtx").status == 0);
  CHECK(slurp(scratch_dir() / "j.mtx").starts_with("{"));
  REQUIRE(run_cli("gen uniform -n 16 -d 4 -q -o u.json").status == 0);
  for (const char* f : {"u.mtx", "U.MTX", "j.mtx", "u.json"}) {
    CAPTURE(f);
    r = run_cli(std::string("stats ") + f);
    CHECK(r.status == 0);
    CHECK(r.out.find("messages     64 network") != std::string::npos);
  }
  REQUIRE(run_cli("gen uniform -n 16 -d 4 -q --format mtx | " COMMFIT_EXE " plan - -o in.plan").status == 0);
  CHECK(run_cli("verify u.json in.plan").status == 0);
  CHECK(run_cli("gen uniform -n 16 -d 4 -q | " COMMFIT_EXE " verify - in.plan").status == 0);
  // The same plan as from the file.
  REQUIRE(run_cli("plan u.mtx -o file.plan").status == 0);
  CHECK(slurp(scratch_dir() / "in.plan/manifest.json") == slurp(scratch_dir() / "file.plan/manifest.json"));
  r = run_cli("plan - < /dev/null -o none.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: <stdin>: no input\n");
  r = run_cli("gen uniform -n 16 -d 4 -q | " COMMFIT_EXE " plan -");
  CHECK(r.err == "commfit: error: the matrix comes from standard input: name the plan with -o\n");
  r = run_cli("gen uniform -n 16 -d 4 --format xml");
  CHECK(r.status == 2);
  // --input-format forces the reader whatever the content says.
  r = run_cli("stats --input-format json u.mtx");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: u.mtx: line 1"));
  r = run_cli("verify --input-format mtx u.json in.plan");
  CHECK(r.status == 2);
  CHECK(r.err.find("Matrix Market") != std::string::npos);
  CHECK(run_cli("gen uniform -n 16 -d 4 -q --format mtx | " COMMFIT_EXE " stats --input-format mtx -").status == 0);
  CHECK(run_cli("plan --input-format json u.json -o forced.plan -q").status == 0);
  r = run_cli("compare --input-format xml u.json");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: "));
  CHECK(r.err.find('\n') == r.err.size() - 1);
  // convert: a matrix between the formats, the same fingerprint both ways.
  REQUIRE(run_cli("convert " + example("random_sparse_32.json") + " rs.mtx").status == 0);
  REQUIRE(run_cli("convert rs.mtx rs.json").status == 0);
  const std::string want = run_cli("stats " + example("random_sparse_32.json")).out;
  const auto fingerprint = [](const std::string& out) { return out.substr(out.find("fingerprint"), 80); };
  CHECK(fingerprint(run_cli("stats rs.mtx").out) == fingerprint(want));
  CHECK(fingerprint(run_cli("stats rs.json").out) == fingerprint(want));
  CHECK(run_cli("convert rs.json - --format mtx").out.starts_with("%%MatrixMarket"));
  r = run_cli("convert in.plan in.cfp --format mtx");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: --format applies to matrices, not plans\n");
}

// A FIFO nobody writes (as a matrix, a rank file of a plan directory or a binary plan) is
// refused at once with exit 2; it used to block every reader in open().
TEST_CASE("cli_fifo_inputs_are_refused") {
  const fs::path fifo = scratch_dir() / "fifo.json";
  fs::remove(fifo);
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  auto r = run_cli("plan fifo.json -o fifo.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: fifo.json: not a regular file (a FIFO, device or socket is refused)\n");
  CHECK(!fs::exists(scratch_dir() / "fifo.plan"));
  r = run_cli("verify fifo.json " + example("stencil2d_16.json"));
  CHECK(r.status == 2);
  CHECK(r.err.find("not a regular file") != std::string::npos);

  r = run_cli("plan " + example("stencil2d_16.json") + " -o fifodir.plan");
  REQUIRE(r.status == 0);
  const fs::path rank_file = scratch_dir() / "fifodir.plan" / "rank-00003.json";
  fs::remove(rank_file);
  REQUIRE(mkfifo(rank_file.c_str(), 0644) == 0);
  r = run_cli("verify " + example("stencil2d_16.json") + " fifodir.plan");
  CHECK(r.status == 2);
  CHECK(r.err.find("rank-00003.json: not a regular file") != std::string::npos);
  r = run_cli("show fifodir.plan --rank 3");
  CHECK(r.status == 2);
  fs::remove_all(scratch_dir() / "fifodir.plan");
  fs::remove(fifo);
}

// -o replaces only what is a commfit plan, and says why it will not replace anything else (exit 2,
// nothing touched); stale temporaries of dead writers are cleaned by the next write.
TEST_CASE("cli_output_replaces_only_plans") {
  const std::string plan = "plan " + example("stencil2d_16.json") + " -q -o ";
  const fs::path d = scratch_dir();
  // A user's directory that happens to hold a manifest.json.
  fs::remove_all(d / "proj");
  fs::create_directories(d / "proj" / "src");
  std::ofstream(d / "proj" / "manifest.json") << "{\"name\": \"my project\", \"version\": 3}";
  std::ofstream(d / "proj" / "src" / "main.c") << "int main() { return 0; }\n";
  std::ofstream(d / "proj" / "README") << "mine\n";
  auto r = run_cli(plan + "proj");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: proj is not a commfit plan directory (it holds README and 1 more that are not plan files): "
                 "not replacing it (remove it yourself or choose another -o)\n");
  r = run_cli("plan " + example("stencil2d_16.json") + " -q -o p.cfp");
  REQUIRE(r.status == 0);
  r = run_cli("convert p.cfp proj");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: proj is not a commfit plan directory (it holds README"));
  CHECK(slurp(d / "proj" / "src" / "main.c") == "int main() { return 0; }\n");
  CHECK(slurp(d / "proj" / "README") == "mine\n");
  fs::remove(d / "proj" / "README");
  fs::remove_all(d / "proj" / "src");
  r = run_cli(plan + "proj");   // a manifest.json alone that is not a plan's
  CHECK(r.status == 2);
  CHECK(r.err.find("(its manifest.json is not a commfit plan manifest)") != std::string::npos);
  fs::remove_all(d / "proj");

  // A plan directory with a file of the user's in it.
  REQUIRE(run_cli(plan + "good.plan").status == 0);
  REQUIRE(run_cli(plan + "good.plan").status == 0);   // a plan replaces a plan
  std::ofstream(d / "good.plan" / "NOTES.txt") << "keep me\n";
  r = run_cli(plan + "good.plan");
  CHECK(r.status == 2);
  CHECK(r.err.find("(it holds NOTES.txt)") != std::string::npos);
  CHECK(slurp(d / "good.plan" / "NOTES.txt") == "keep me\n");
  fs::remove(d / "good.plan" / "NOTES.txt");

  // Symbolic links, live or dangling, are not followed or replaced; "." and a missing parent.
  fs::remove(d / "link.plan");
  fs::remove(d / "dangling.plan");
  fs::create_directory_symlink("good.plan", d / "link.plan");
  fs::create_directory_symlink("nowhere", d / "dangling.plan");
  for (const char* link : {"link.plan", "dangling.plan"}) {
    r = run_cli(plan + link);
    CHECK(r.status == 2);
    CHECK(r.err == std::string("commfit: error: ") + link +
                       " is a symbolic link: not replacing it (give the directory it points to, or remove the link)\n");
    CHECK(fs::is_symlink(d / link));
  }
  r = run_cli("plan " + example("stencil2d_16.json") + " -q -o link.cfp");
  CHECK(r.status == 0);   // a new name beside the links is fine
  r = run_cli("plan " + example("stencil2d_16.json") + " -q -o dangling.plan/../x.cfp");
  CHECK(r.status == 2);
  r = run_cli("verify " + example("stencil2d_16.json") + " link.plan");   // reading through a link is fine
  CHECK(r.status == 0);
  const Result dot = run_cli("plan " + example("stencil2d_16.json") + " -q -o good.plan/.");
  CHECK(dot.status == 2);
  CHECK(dot.err == "commfit: error: cannot write \"good.plan/.\": give the plan directory a name\n");
  r = run_cli(plan + "nodir/x.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: cannot write nodir/x.plan: nodir does not exist\n");
  r = run_cli(plan + "p.cfp/x.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: cannot write p.cfp/x.plan: p.cfp is not a directory\n");
  r = run_cli(plan + "good.plan.cfp");
  CHECK(r.status == 0);
  r = run_cli("plan " + example("stencil2d_16.json") + " -q -o good.plan/rank-00000.json.cfp");
  CHECK(r.status == 0);   // a file inside a plan directory is the user's business...
  r = run_cli(plan + "good.plan");
  CHECK(r.status == 2);   // ...and the directory is no longer a plan
  fs::remove(d / "good.plan" / "rank-00000.json.cfp");

  // Leftovers of a killed writer on this host are removed; another host's are left alone.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string tag = host[0] ? host : "localhost";
  for (char& c : tag)
    if (c == '/' || c == '-') c = '_';
  const fs::path stale = d / (".good.plan.tmp-" + tag + "-" + std::to_string(dead));
  const fs::path old = d / (".good.plan.old-" + tag + "-" + std::to_string(dead));
  const fs::path other = d / (".good.plan.tmp-elsewhere-" + std::to_string(dead));
  for (const fs::path& p : {stale, old, other}) {
    fs::create_directories(p);
    std::ofstream(p / "rank-00000.json") << "{}";
  }
  REQUIRE(run_cli(plan + "good.plan").status == 0);
  CHECK(!fs::exists(stale));
  CHECK(!fs::exists(old));
  CHECK(fs::exists(other));
  for (const char* name : {"good.plan", "link.plan", "dangling.plan", "p.cfp", "link.cfp", "good.plan.cfp"}) fs::remove_all(d / name);
  fs::remove_all(other);
}

// A plan directory re-planned while others read it: every reader sees one whole plan, old or
// new (a mix used to fail "rank schedule is missing" or "phase count differs"), every writer
// succeeds, and nothing is left behind. `preload` is what the commfit processes run with.
static void replan_while_reading(const std::string& preload) {
  const std::string matrix = example("random_sparse_32.json");
  const fs::path d = scratch_dir();
  const char* before = std::getenv("LD_PRELOAD");
  const std::string saved = before ? before : "";
  if (preload.empty())
    ::unsetenv("LD_PRELOAD");
  else
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
  struct Restore {
    const char* before;
    std::string saved;
    ~Restore() { before ? ::setenv("LD_PRELOAD", saved.c_str(), 1) : ::unsetenv("LD_PRELOAD"); }
  } restore{before, saved};
  REQUIRE(run_cli("plan " + matrix + " -q -o race.plan").status == 0);
  std::vector<pid_t> writers;
  for (int w = 0; w < 3; ++w) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int bad = 0;
      for (int i = 0; i < 15; ++i) {
        const std::string cmd = "cd " + d.string() + " && " COMMFIT_EXE " plan " + matrix + " -q -o race.plan --strategy " +
                                (i % 2 ? "two-stage" : "direct");
        if (std::system(cmd.c_str()) != 0) ++bad;
      }
      ::_exit(bad);
    }
    writers.push_back(pid);
  }
  int failed_reads = 0, reads = 0, failed_writers = 0;
  std::string first_failure;
  std::size_t done = 0;
  auto reap = [&](int flags) {
    for (pid_t& w : writers) {
      int status = 0;
      if (w > 0 && ::waitpid(w, &status, flags) == w) {
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) ++failed_writers;
        w = -1;
        ++done;
      }
    }
  };
  for (; done < writers.size() && reads < 400; ++reads) {
    const Result r = run_cli("verify " + matrix + " race.plan");
    if (r.status != 0 && failed_reads++ == 0) first_failure = r.err;
    reap(WNOHANG);
  }
  reap(0);
  INFO(first_failure);
  CHECK(failed_reads == 0);
  CHECK(failed_writers == 0);
  CHECK(reads > 5);
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find("race.plan.") == std::string::npos);
  fs::remove_all(d / "race.plan");
}

TEST_CASE("cli_replan_while_reading") { replan_while_reading(""); }

// The same where the file system has no RENAME_EXCHANGE: the name is missing for a moment
// between the two renames of a replacement, and readers wait for it.
TEST_CASE("cli_replan_while_reading_without_rename_exchange") { replan_while_reading(COMMFIT_NO_RENAME_EXCHANGE); }

TEST_CASE("cli_print_after_and_verify_each") {
  // --print-after PASS: the schedule that pass returned, on stderr; the plan is written as usual.
  Result r = run_cli("plan " + example("transport_fig1.json") + " -o pa.plan --algorithm rs_n --print-after decompose");
  CHECK(r.status == 0);
  CHECK(r.err.starts_with("commfit: after decompose:\n8 ranks, "));
  CHECK(r.err.find("phase 0:\n  ") != std::string::npos);
  // --verify-each (on in the test suite anyway): every pass result is checked, the CCOM too.
  r = run_cli("plan " + example("transport_fig1.json") + " -o pa.plan -q --algorithm rs_n --verify-each --time-passes");
  CHECK(r.status == 0);
  CHECK(r.err.find("commfit: pass compress: ") != std::string::npos);
  CHECK(r.err.find(" s, verified\ncommfit: pass decompose: ") != std::string::npos);
}

TEST_CASE("cli_verify_rejects_a_tampered_plan") {
  REQUIRE(run_cli("plan -q " + example("stencil2d_16.json") + " -o t.plan").status == 0);
  const fs::path f = scratch_dir() / "t.plan" / "rank-00005.json";
  std::string text = slurp(f);
  const auto at = text.find("\"bytes\": ");
  REQUIRE(at != std::string::npos);
  text.replace(at, 9, "\"bytes\": 1");   // prefix a digit: the piece grows tenfold or more
  std::ofstream(f, std::ios::binary) << text;
  // The plan readers run the one-rank check of ir/plan.h: a piece outside its message is a
  // malformed rank file (exit 2, naming the file and the step), as the executor refuses it.
  const Result r = run_cli("verify " + example("stencil2d_16.json") + " t.plan");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: t.plan/rank-00005.json: /steps/0: bytes [0, 18192) of message 4 -> 5 lie outside the message (8192 bytes)\n");
  // A receive from the wrong peer: well-formed, but the transfer no longer matches (rule 3).
  REQUIRE(run_cli("plan -q " + example("stencil2d_16.json") + " -o t.plan").status == 0);
  text = slurp(f);
  const std::string from4 = "\"op\": \"recv\", \"peer\": 4,";
  const auto peer = text.find(from4);
  REQUIRE(peer != std::string::npos);
  text.replace(peer, from4.size(), "\"op\": \"recv\", \"peer\": 6,");
  std::ofstream(f, std::ios::binary) << text;
  const Result r3 = run_cli("verify " + example("stencil2d_16.json") + " t.plan");
  CHECK(r3.status == 1);
  CHECK(r3.err.find("rule 3: receive without a matching send: phase 0, 6 -> 5") != std::string::npos);
  // A plan verified against another matrix: the fingerprint differs.
  REQUIRE(run_cli("plan -q " + example("stencil2d_16.json") + " -o u.plan").status == 0);
  const Result other = run_cli("verify " + example("random_sparse_32.json") + " u.plan");
  CHECK(other.status == 1);
  CHECK(other.err.find("plan is for 16 ranks, matrix has 32") != std::string::npos);
}

TEST_CASE("cli_show_and_stats") {
  REQUIRE(run_cli("plan -q " + example("stencil2d_16.json") + " -o s.plan").status == 0);
  Result r = run_cli("show s.plan");
  CHECK(r.status == 0);
  CHECK(r.out.find("phase 0:") != std::string::npos);
  r = run_cli("show s.plan --rank 5");
  CHECK(r.status == 0);
  CHECK(r.out.find("rank 5:") != std::string::npos);
  r = run_cli("show s.plan --rank 16");
  CHECK(r.status == 2);
  CHECK(r.out.empty());   // the header is not printed before the error
  CHECK(r.err == "commfit: error: --rank 16 is out of range (the plan has 16 ranks)\n");
  r = run_cli("stats " + example("stencil2d_16.json"));
  CHECK(r.status == 0);
  CHECK(r.out.find("h = max(f, g) = 4 messages") != std::string::npos);
  r = run_cli("--list-passes");
  CHECK(r.status == 0);
  CHECK(r.out.find("rs_n") != std::string::npos);
}

TEST_CASE("cli_gen_compare_auto") {
  REQUIRE(run_cli("gen uniform -n 32 -d 6 --bytes 512 --seed 3 -o u.json").status == 0);
  Result r = run_cli("stats u.json");
  CHECK(r.out.find("f (fan-out)               6            6.0            6.0              6") != std::string::npos);
  CHECK(r.out.find("g (fan-in)                6            6.0            6.0              6") != std::string::npos);
  REQUIRE(run_cli("gen uniform -n 32 -d 6 --bytes 512 --seed 3 -o v.json").status == 0);
  CHECK(slurp(scratch_dir() / "u.json") == slurp(scratch_dir() / "v.json"));
  r = run_cli("compare u.json");
  CHECK(r.status == 0);
  CHECK(r.out.find("direct/optimal") != std::string::npos);
  CHECK(r.out.find("async") != std::string::npos);
  r = run_cli("plan u.json --strategy auto -o auto.plan");
  CHECK(r.status == 0);
  CHECK(r.out.find("--strategy auto chose") != std::string::npos);
  // The summary names the term that sets the bound (ExchangeBound::binding), for auto's plan too.
  CHECK(std::regex_search(r.out, std::regex(R"(, bound [0-9.e+-]+ s \((posting|port|link|ib-node|ib-flows|latency)\), estimate/bound )")));
  CHECK(run_cli("verify u.json auto.plan").status == 0);
  CHECK(run_cli("gen uniform -n 4 -d 4").status == 2);
  // -d defaults to 8, or ranks - 1 when that is less (it used to fail on its own default).
  r = run_cli("gen uniform -n 8");
  CHECK(r.status == 0);
  CHECK(r.out.find("commfit gen uniform -n 8 -d 7 --bytes 1024") != std::string::npos);
  // A summary line like extract's, unless -q; none when the matrix goes to standard output.
  r = run_cli("gen moe -n 16 -o moe.json");
  CHECK(r.status == 0);
  CHECK(r.out == "moe_16: 16 ranks, 240 messages, h = 15, t = 32964608 bytes -> moe.json\n");
  CHECK(run_cli("gen moe -n 16 -q -o moe.json").out.empty());
  // Options the kind does not read are refused, not ignored.
  r = run_cli("gen uniform -n 16 --grid 4x4 --zipf 3 -o bad.json");
  CHECK(r.status == 2);
  CHECK(r.err == "commfit: error: --grid does not apply to gen uniform (it applies to: stencil)\n");
  CHECK(!fs::exists(scratch_dir() / "bad.json"));
  r = run_cli("gen moe -n 16 --key-bytes 8 -o bad.json");
  CHECK(r.err == "commfit: error: --key-bytes does not apply to gen moe (it applies to: bader, sample-sort)\n");
  CHECK(run_cli("gen stencil --grid 4x4 -n 16 -o st.json").status == 0);   // stencil reads -n (checked against --grid)
}

TEST_CASE("cli_matrix_defaults_and_command_line_overrides") {
  std::ofstream(scratch_dir() / "costly.json") << R"({"format": "commfit-matrix", "version": 1, "ranks": 4,
    "cost": {"tau_s": 0.001}, "topology": "hypercube:2", "messages": [[0, 3, 100], [1, 2, 100]]})";
  REQUIRE(run_cli("plan -q costly.json -o c1.plan").status == 0);
  std::string manifest = slurp(scratch_dir() / "c1.plan" / "manifest.json");
  CHECK(manifest.find("\"tau_s\": 0.001") != std::string::npos);
  CHECK(manifest.find("\"topology\": \"hypercube:2\"") != std::string::npos);
  REQUIRE(run_cli("plan -q costly.json -o c2.plan --tau 5e-6 --topology full").status == 0);
  manifest = slurp(scratch_dir() / "c2.plan" / "manifest.json");
  CHECK(manifest.find("\"tau_s\": 5e-06") != std::string::npos);
  CHECK(manifest.find("hypercube") == std::string::npos);
  CHECK(run_cli("compare costly.json").out.find("tau 0.001 s") != std::string::npos);
  CHECK(run_cli("compare costly.json --tau 5e-6").out.find("tau 5e-06 s") != std::string::npos);
  std::ofstream(scratch_dir() / "badtopo.json") << R"({"format": "commfit-matrix", "version": 1, "ranks": 4,
    "topology": "cube:2", "messages": [[0, 3, 100]]})";
  const Result r = run_cli("plan badtopo.json -o bad.plan");
  CHECK(r.status == 2);
  CHECK(r.err.starts_with("commfit: error: badtopo.json: /topology: "));
}

namespace {

// The output of plan --strategy auto --time-passes without what is timed: the comparison table's
// last column (plan s) and the passes' seconds.
std::string untimed(const std::string& text) {
  static const std::regex seconds(R"(: [0-9.]+ s)");
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const bool row = (line.rfind("  ", 0) == 0 || line.rfind("* ", 0) == 0) && line.find("skipped:") == std::string::npos;
    if (const std::size_t end = line.find_last_not_of(' '); row && end != std::string::npos) {
      line.erase(line.find_last_of(' ', end) + 1);   // the time, then the padding its width set
      line.erase(line.find_last_not_of(' ') + 1);
    }
    out += std::regex_replace(line, seconds, ": s") + "\n";
  }
  return out;
}

// Every file of a plan directory (or the one binary file), by name.
std::map<std::string, std::string> plan_files(const fs::path& plan) {
  std::map<std::string, std::string> files;
  if (!fs::is_directory(plan)) return {{"", slurp(plan)}};
  for (const auto& e : fs::recursive_directory_iterator(plan))
    if (e.is_regular_file()) files[e.path().lexically_relative(plan).string()] = slurp(e.path());
  return files;
}

}  // namespace

// --threads: auto and compare plan their candidates in parallel with the serial result: the plan
// byte for byte, the table but for its times, the pass log in candidate order, compare's JSON.
TEST_CASE("cli_auto_threads_give_the_serial_result") {
  // Many candidates with near-ties (async, throttled/16, throttled/32, bounded/32 price the same),
  // two-stage ones included; and memory limits, where the memory methods compete.
  REQUIRE(run_cli("gen lognormal -n 48 --density 0.2 --median 4096 --sigma 2 --seed 3 -o threads_ln.json").status == 0);
  REQUIRE(run_cli("gen random -n 64 --density 0.2 --max-bytes 65536 --seed 2 -o threads_r.json").status == 0);
  std::string limited = slurp(scratch_dir() / "threads_r.json");   // the same with 1 MiB free on every rank
  std::string memory = "\"memory\": [1048576";
  for (int k = 1; k < 64; ++k) memory += ", 1048576";
  limited.replace(limited.find("\"ranks\""), 0, memory + "], ");
  std::ofstream(scratch_dir() / "threads_m.json") << limited;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"threads_ln.json", "tp.plan"}, {"threads_m.json", "tp.cfp"}, {"threads_r.json --tau 1e-4", "tp.plan"}};
  for (const auto& [args_, out] : cases) {
    const auto& args = args_;
    std::map<std::string, std::string> serial_files;
    std::string serial_out, serial_err, serial_json;
    for (const char* threads : {"1", "3"}) {
      CAPTURE(args);
      CAPTURE(threads);
      const Result r = run_cli("plan " + args + " --strategy auto --time-passes -o " + out + " --threads " + threads);
      REQUIRE(r.status == 0);
      CHECK(r.out.find("--strategy auto chose") != std::string::npos);
      const std::map<std::string, std::string> files = plan_files(scratch_dir() / out);
      const Result json = run_cli("compare " + args + " --json --threads " + std::string(threads));
      REQUIRE(json.status == 0);
      if (serial_files.empty()) {
        CHECK(files.begin()->second.size() > 100);
        serial_files = files, serial_out = untimed(r.out), serial_err = untimed(r.err), serial_json = json.out;
        continue;
      }
      CHECK(files == serial_files);
      CHECK(untimed(r.out) == serial_out);
      CHECK(untimed(r.err) == serial_err);
      CHECK(json.out == serial_json);
    }
  }
}

TEST_CASE("cli_threads_must_be_positive") {
  REQUIRE(run_cli("gen uniform -n 8 -d 3 -o threads_u.json").status == 0);
  for (const char* n : {"0", "-2"}) {
    for (const std::string cmd : {"plan threads_u.json --strategy auto -o none.plan", "compare threads_u.json"}) {
      const Result r = run_cli(cmd + " --threads " + n);
      CHECK(r.status == 2);
      CHECK(r.err == "commfit: error: --threads must be at least 1 (got " + std::string(n) + ")\n");
      CHECK(r.out.empty());
    }
  }
  CHECK(!fs::exists(scratch_dir() / "none.plan"));
  CHECK(run_cli("compare threads_u.json --threads 3").status == 0);
}

// --node-map FILE: host names one per rank (round robin here), planned for full+map:..., verified
// against the plan's own topology; the same map as numbers gives the same plan; bad maps exit 2
// naming the file and the line, with no plan written.
TEST_CASE("cli_node_map") {
  std::ofstream(scratch_dir() / "hosts.txt") << "# rank -> host, as mpirun --map-by node places 8 ranks on 2 nodes\n"
                                                "cn017\ncn018\ncn017\ncn018\ncn017 cn018\ncn017\ncn018  # the last\n";
  std::ofstream(scratch_dir() / "numbers.txt") << "0 1 0 1 0 1 0 1\n";
  std::ofstream(scratch_dir() / "dense8.json") << R"({"format": "commfit-matrix", "version": 1, "ranks": 8, "messages": [)"
                                                  R"([0,1,64],[0,2,64],[0,3,64],[1,0,64],[1,5,64],[2,7,64],[3,4,64],[4,1,64],[5,6,64],[6,0,64],[7,2,64],[7,3,64]]})";
  REQUIRE(run_cli("plan -q dense8.json --strategy node --node-map hosts.txt -o map1.plan").status == 0);
  const std::string manifest = slurp(scratch_dir() / "map1.plan" / "manifest.json");
  CHECK(manifest.find("\"topology\": \"full+map:0,1,0,1,0,1,0,1\"") != std::string::npos);
  CHECK(manifest.find("\"ranks_per_node\": 4") != std::string::npos);
  CHECK(run_cli("verify dense8.json map1.plan").status == 0);
  REQUIRE(run_cli("plan -q dense8.json --strategy node --node-map numbers.txt -o map2.plan").status == 0);
  CHECK(plan_files(scratch_dir() / "map1.plan") == plan_files(scratch_dir() / "map2.plan"));
  REQUIRE(run_cli("plan -q dense8.json --strategy node --topology full+map:0,1,0,1,0,1,0,1 -o map3.plan").status == 0);
  CHECK(plan_files(scratch_dir() / "map1.plan") == plan_files(scratch_dir() / "map3.plan"));
  CHECK(run_cli("plan -q dense8.json --node-map hosts.txt -o auto.plan").status == 0);
  // Errors: a missing file, a device, a map of another length, +nodeN and a map at once, a host beyond a network's.
  std::ofstream(scratch_dir() / "short.txt") << "0 1 0\n";
  std::ofstream(scratch_dir() / "long.txt") << "0\n" << std::string(300, 'x') << "\n";
  const std::pair<const char*, const char*> bad[] = {
      {"--node-map nowhere.txt", "commfit: error: nowhere.txt: cannot open the file"},
      {"--node-map /dev/zero", "commfit: error: /dev/zero: not a regular file"},   // not read forever
      {"--node-map short.txt", "commfit: error: short.txt: the node map places 3 ranks but the matrix dense8.json has 8"},
      {"--node-map long.txt", "commfit: error: long.txt: line 2: an entry longer than 255 characters"},
      {"--node-map numbers.txt --topology full+node2", "commfit: error: numbers.txt: the machine full+node2 already places its ranks"},
      {"--node-map numbers.txt --topology torus:1", "commfit: error: numbers.txt: rank 1 is on node 1, but torus:1 has nodes 0 to 0"},
  };
  for (const auto& [args_, message] : bad) {
    const auto& args = args_;
    CAPTURE(args);
    const Result r = run_cli(std::string("plan dense8.json --strategy node -o bad.plan ") + args);
    CHECK(r.status == 2);
    CHECK(r.err.starts_with(message));
    CHECK(!fs::exists(scratch_dir() / "bad.plan"));
  }
}

// Above 4096 ranks the default output is the binary form, and the summary says so.
TEST_CASE("cli_default_output_is_binary_above_4096_ranks") {
  REQUIRE(run_cli("gen uniform -n 4097 -d 1 --bytes 8 -o wide.json").status == 0);
  fs::remove_all(scratch_dir() / "wide.cfp");
  const Result r = run_cli("plan wide.json --strategy direct");
  REQUIRE(r.status == 0);
  CHECK(fs::is_regular_file(scratch_dir() / "wide.cfp"));
  CHECK(!fs::exists(scratch_dir() / "wide.plan"));
  CHECK(r.out.find("wrote wide.cfp (binary: the default above 4096 ranks; -o NAME.plan writes a directory)") != std::string::npos);
  CHECK(run_cli("verify wide.json wide.cfp").status == 0);
  REQUIRE(run_cli("gen uniform -n 4096 -d 1 --bytes 8 -o narrow.json").status == 0);
  REQUIRE(run_cli("plan -q narrow.json --strategy direct").status == 0);
  CHECK(fs::is_directory(scratch_dir() / "narrow.plan"));
}

// A plan directory's rank files written by several threads are the files one thread writes.
TEST_CASE("cli_plan_directory_written_by_threads_is_the_same") {
  REQUIRE(run_cli("gen uniform -n 300 -d 7 --bytes 100 -o many.json").status == 0);
  REQUIRE(run_cli("plan -q many.json --strategy direct --threads 1 -o many1.plan").status == 0);
  REQUIRE(run_cli("plan -q many.json --strategy direct --threads 2 -o many2.plan").status == 0);
  REQUIRE(run_cli("plan -q many.json --strategy direct --threads 5 -o many5.plan").status == 0);
  const auto one = plan_files(scratch_dir() / "many1.plan");
  CHECK(one.size() == 301);
  CHECK(plan_files(scratch_dir() / "many2.plan") == one);
  CHECK(plan_files(scratch_dir() / "many5.plan") == one);
}
