// Every hostile input of the corpus through the command line:
// each gets exit status 2, one line `commfit: error: FILE: PLACE: problem` naming the input (or a
// file inside it), writes nothing, and stays under 2 s of wall time and 1 GiB of resident memory.
// The corpus: tests/fixtures/matrix/bad, tests/fixtures/mtx/bad (`commfit plan`, as the error
// goldens run them), tests/fixtures/plan/bad (each file put into a copy of a good plan directory)
// and tests/fixtures/plandir (whole plan directories and binary plans; `show`, `verify`,
// `convert`). Readable plans that break the verifier's rules (plandir/verify_fails) make `verify`
// exit 1 with every problem on its own line. The 2 s and 1 GiB are limits, not speed targets:
// the slowest and largest runs are printed (the margin, docs/HARDENING.md has the numbers).
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"

#include <doctest/doctest.h>

#include "support/run_command.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using commfit::test::source_dir;
const std::string kMatrix = "tests/fixtures/matrix/good/sparse_small.json";   // what plandir/good was planned from
const std::string kGoodPlan = "tests/fixtures/plandir/good";
constexpr double kWallLimitS = 2.0;
constexpr long kRssLimitKiB = 1024 * 1024;

using commfit::test::slurp;

struct Child {
  int status = -1;   // exit status; -1 when killed by a signal
  double seconds = 0;
  long max_rss_kib = 0;
  std::string out, err;
};

// Runs commfit with `args` from the repository root; stdout and stderr go to files in `scratch`.
// The child's peak resident set comes from wait4. A watchdog alarm (30 s) ends a hung child.
Child run_child(const std::vector<std::string>& args, const fs::path& scratch, const std::string& omp_threads = "") {
  const fs::path out = scratch / "stdout", err = scratch / "stderr", root = source_dir();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(root.c_str()) != 0) ::_exit(126);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int n = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0) ::_exit(126);
    ::dup2(n, 0), ::dup2(o, 1), ::dup2(e, 2);
    std::vector<char*> argv{const_cast<char*>(COMMFIT_EXE)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!omp_threads.empty()) ::setenv("OMP_NUM_THREADS", omp_threads.c_str(), 1);
    ::alarm(30);
    ::execv(COMMFIT_EXE, argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  REQUIRE(::wait4(pid, &status, 0, &ru) == pid);
  Child c;
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.max_rss_kib = ru.ru_maxrss;
  if (WIFEXITED(status)) c.status = WEXITSTATUS(status);
  c.out = slurp(out);
  c.err = slurp(err);
  return c;
}

// The slowest and largest run of a test case, printed at its end: the margin below the limits.
struct Margin {
  double seconds = 0;
  long rss_kib = 0;
  std::string slowest, largest;
  int runs = 0;
  void add(const Child& c, const std::string& what) {
    ++runs;
    if (c.seconds > seconds) seconds = c.seconds, slowest = what;
    if (c.max_rss_kib > rss_kib) rss_kib = c.max_rss_kib, largest = what;
  }
  ~Margin() {
    MESSAGE(runs << " runs; slowest " << seconds << " s (" << slowest << "), largest " << rss_kib / 1024 << " MiB (" << largest
                 << "); limits " << kWallLimitS << " s, " << kRssLimitKiB / 1024 << " MiB");
  }
};

// FILE: PLACE: problem. PLACE is a JSON pointer, a line (and column) of a text file, a part of a
// binary plan, or the whole matrix (the memory estimate); a few problems concern a whole file.
const std::regex kPlaced(
    R"(^commfit: error: ([^ ]+): (/[^ ]*|line [0-9]+(, column [0-9]+)?|header|byte [0-9]+|manifest|index entry [0-9]+|rank [0-9]+ slice|rank [0-9]+ step [0-9]+|whole matrix): [^ ].*\n$)");
const std::regex kWholeFile(
    R"(^commfit: error: ([^ ]+): (file is empty|file is [0-9]+ bytes, over the limit of [0-9]+|rank schedule is missing|not a plan directory \(no manifest.json\))\n$)");

// Everything a hostile run must show. `input` is what the message must name: the file itself or,
// for a plan directory, a file inside it.
void check_refused(const Child& c, const std::string& input, const fs::path& work, Margin& margin, const std::string& what) {
  INFO(what);
  INFO("stderr: " << c.err);
  margin.add(c, what);
  CHECK(c.status == 2);
  CHECK(c.out.empty());
  std::smatch m;
  const bool ok = std::regex_match(c.err, m, kPlaced) || std::regex_match(c.err, m, kWholeFile);
  CHECK_MESSAGE(ok, "not one line `commfit: error: FILE: PLACE: problem`");
  if (ok) {
    const std::string file = m[1].str();
    CHECK_MESSAGE((file == input || file.rfind(input + "/", 0) == 0), "the message names " << file << ", not " << input);
  }
  CHECK_MESSAGE(fs::is_empty(work), "a refused run left output behind in " << work);
  CHECK(c.seconds < kWallLimitS);
  CHECK(c.max_rss_kib < kRssLimitKiB);
}

struct HostileScratch {
  fs::path dir, work;
  explicit HostileScratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("commfit-hostile-" + name + "-" + std::to_string(::getpid()))), work(dir / "work") {
    fs::remove_all(dir);
    fs::create_directories(work);
  }
  ~HostileScratch() { fs::remove_all(dir); }
};

std::vector<std::string> entries(const std::string& dir, const std::string& ext, bool dirs = false) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(source_dir() / dir))
    if (dirs ? e.is_directory() : (e.is_regular_file() && e.path().extension() == ext))
      out.push_back(dir + "/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The three commands that read a plan, each refusing it.
void check_plan_refused(const std::string& plan, bool binary, const HostileScratch& s, Margin& margin) {
  const std::string converted = (s.work / (binary ? "out.plan" : "out.cfp")).string();
  check_refused(run_child({"show", plan}, s.dir), plan, s.work, margin, "show " + plan);
  check_refused(run_child({"verify", kMatrix, plan}, s.dir), plan, s.work, margin, "verify " + plan);
  check_refused(run_child({"convert", plan, converted}, s.dir), plan, s.work, margin, "convert " + plan);
}

}  // namespace

TEST_CASE("hostile matrices: commfit plan refuses each in one line, writes nothing, within 2 s and 1 GiB") {
  HostileScratch s("matrix");
  Margin margin;
  std::vector<std::string> fixtures = entries("tests/fixtures/matrix/bad", ".json");
  const auto mtx = entries("tests/fixtures/mtx/bad", ".mtx");
  fixtures.insert(fixtures.end(), mtx.begin(), mtx.end());
  REQUIRE(fixtures.size() >= 60);
  for (const std::string& f : fixtures)
    check_refused(run_child({"plan", f, "-o", (s.work / "out.plan").string()}, s.dir), f, s.work, margin, "plan " + f);
}

TEST_CASE("hostile matrices: the memory a plan would need is estimated and refused up front") {
  HostileScratch s("memory");
  Margin margin;
  const std::string out = (s.work / "out.plan").string();
  // 2^53 one-byte pieces: more than any machine has, refused under the default limit.
  const std::string huge = "tests/fixtures/matrix/good/max_size.json";
  Child c = run_child({"plan", huge, "--algorithm", "quantised", "--chunk", "1", "-o", out}, s.dir);
  check_refused(c, huge, s.work, margin, "plan max_size.json --chunk 1");
  CHECK(c.err.find("whole matrix: planning needs about") != std::string::npos);
  // The default limit names its source: the physical memory, a cgroup's file or Slurm's variable.
  CHECK(std::regex_search(c.err, std::regex(R"(\((physical memory|cgroup /\S+|SLURM_MEM_PER_\w+( x SLURM_CPUS_ON_NODE)?); see --max-memory\))")));
  // An explicit limit below what a small plan needs, and the same plan under the default limit.
  c = run_child({"plan", kMatrix, "--max-memory", "1000000", "-o", out}, s.dir);
  check_refused(c, kMatrix, s.work, margin, "plan --max-memory 1000000");
  CHECK(c.err.find("more than the limit of 976.6 KiB (--max-memory)") != std::string::npos);
  c = run_child({"plan", kMatrix, "-q", "-o", out}, s.dir);
  CHECK(c.status == 0);
  CHECK(fs::exists(s.work / "out.plan" / "manifest.json"));
  fs::remove_all(s.work / "out.plan");
  // 3 messages among 2^21 ranks: a schedule per rank, gigabytes for three messages, refused as out
  // of proportion; an explicit --max-memory lifts that rule (here to meet the limit's own).
  const fs::path idle = s.dir / "idle.json";
  { std::ofstream(idle) << R"({"format": "commfit-matrix", "version": 1, "ranks": 2097152, "messages": [[0, 2097151, 100], [5, 7, 10], [2097151, 0, 64]]})"; }
  c = run_child({"plan", idle.string(), "-o", out}, s.dir);
  check_refused(c, idle.string(), s.work, margin, "plan of 3 messages among 2^21 ranks");
  CHECK(c.err.find("whole matrix: planning needs about 2.0 GiB for 3 messages: 4 of its 2097152 ranks send or receive") != std::string::npos);
  c = run_child({"plan", idle.string(), "--max-memory", "1000000", "-o", out}, s.dir);
  check_refused(c, idle.string(), s.work, margin, "plan of 3 messages among 2^21 ranks --max-memory 1000000");
  CHECK(c.err.find("more than the limit of 976.6 KiB (--max-memory)") != std::string::npos);
  // A file over the 4 GiB limit (sparse: it takes no disk) is refused before it is read.
  const fs::path big = s.dir / "big.json";
  { std::ofstream(big) << "{"; }
  fs::resize_file(big, (std::uintmax_t{1} << 32) + 1);
  c = run_child({"plan", big.string(), "-o", out}, s.dir);
  check_refused(c, big.string(), s.work, margin, "plan of a 4 GiB + 1 file");
  CHECK(c.err.find("file is 4294967297 bytes, over the limit of 4294967296") != std::string::npos);
}

// 256 MiB of white space between two fields of a matrix and 256 MiB after it, and 64 MiB of white
// space alone: the
// JSON reader streams the file and hands the parser one blank per run, so its memory does not
// grow with the blanks (docs/HARDENING.md has the prlimit run of a 2 GiB file). Peak RSS from wait4, so that the check holds under the sanitizers.
TEST_CASE("hostile matrices: white space is read in memory independent of its size") {
  HostileScratch s("blanks");
  const fs::path padded = s.dir / "padded.json", blank = s.dir / "blank.json";
  {
    std::ofstream out(padded, std::ios::binary);
    out << R"({"format": "commfit-matrix", "version": 1, "ranks": 4, "name": "padded")";
    const std::string chunk(std::size_t{1} << 20, ' ');
    for (int k = 0; k < 256; ++k) out << chunk << std::string(k % 2 ? "\n" : "\t");
    out << R"(, "messages": [[0, 1, 5], [2, 3, 7]]})" << std::string(chunk.size() * 256, '\n');
    std::ofstream(blank, std::ios::binary) << std::string(std::size_t{64} << 20, ' ');
  }
  const Child ok = run_child({"stats", padded.string()}, s.dir);
  INFO("stderr: " << ok.err);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("messages     2 network") != std::string::npos);
  CHECK(ok.max_rss_kib < 256 * 1024);
  const Child bad = run_child({"stats", blank.string()}, s.dir);
  CHECK(bad.status == 2);
  CHECK(bad.err == "commfit: error: " + blank.string() + ": line 1, column 67108865: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal\n");
  CHECK(bad.max_rss_kib < 256 * 1024);
  MESSAGE("512 MiB of blanks around a matrix: " << ok.seconds << " s, " << ok.max_rss_kib / 1024 << " MiB peak; 64 MiB of blanks only: " << bad.seconds
                                << " s, " << bad.max_rss_kib / 1024 << " MiB");
}

// The same for the plan readers: 256 MiB of blanks inside the manifest and inside a rank file,
// then a syntax error behind 64 MiB of blanks, named by its byte in the file.
TEST_CASE("hostile plan files: white space is read in memory independent of its size") {
  HostileScratch s("planblanks");
  const fs::path plan = s.dir / "p";
  fs::copy(source_dir() / kGoodPlan, plan);
  const std::string chunk(std::size_t{1} << 20, ' ');
  auto pad = [&](const std::string& name, std::size_t mib, const std::string& insert) {
    const std::string text = slurp(plan / name);
    const std::size_t at = text.find(',') + 1;
    std::ofstream out(plan / name, std::ios::binary | std::ios::trunc);
    out << text.substr(0, at);
    for (std::size_t k = 0; k < mib; ++k) out << chunk << (k % 2 ? "\n" : "\t");
    out << insert << text.substr(at);
    return at + mib * (chunk.size() + 1) + 1;   // the byte (from 1) just after the blanks
  };
  pad("manifest.json", 256, "");
  pad("rank-00001.json", 256, "");
  const std::string matrix = kMatrix;
  const Child ok = run_child({"verify", matrix, plan.string()}, s.dir);
  INFO("stderr: " << ok.err);
  CHECK(ok.status == 0);
  CHECK(ok.max_rss_kib < 256 * 1024);
  const std::size_t byte = pad("rank-00002.json", 64, "x");
  const Child bad = run_child({"verify", matrix, plan.string()}, s.dir);
  CHECK(bad.status == 2);
  CHECK(bad.err.find(": byte " + std::to_string(byte) + ": invalid JSON: syntax error while parsing object key") != std::string::npos);
  CHECK(bad.max_rss_kib < 256 * 1024);
  MESSAGE("a plan with 512 MiB of blanks: verified in " << ok.seconds << " s, " << ok.max_rss_kib / 1024 << " MiB peak");
}

TEST_CASE("hostile plan files: show, verify and convert refuse each in one line, write nothing, within 2 s and 1 GiB") {
  HostileScratch s("planfile");
  Margin margin;
  const auto fixtures = entries("tests/fixtures/plan/bad", ".json");
  REQUIRE(fixtures.size() >= 30);
  for (const std::string& f : fixtures) {
    // A manifest fixture replaces the manifest of a good plan, a rank fixture the file of rank 0.
    const fs::path plan = s.dir / "p";
    fs::remove_all(plan);
    fs::copy(source_dir() / kGoodPlan, plan);
    const bool manifest = fs::path(f).filename().string().rfind("manifest_", 0) == 0;
    fs::copy_file(source_dir() / f, plan / (manifest ? "manifest.json" : "rank-00000.json"), fs::copy_options::overwrite_existing);
    INFO(f);
    check_plan_refused(plan.string(), false, s, margin);
  }
}

TEST_CASE("hostile plan directories and binary plans: show, verify and convert refuse each in one line") {
  HostileScratch s("plandir");
  Margin margin;
  const auto dirs = entries("tests/fixtures/plandir/bad", "", true);
  REQUIRE(dirs.size() >= 10);
  for (const std::string& d : dirs) check_plan_refused(d, false, s, margin);
  const auto binaries = entries("tests/fixtures/plandir/bad_binary", ".cfp");
  REQUIRE(binaries.size() >= 6);
  for (const std::string& b : binaries) check_plan_refused(b, true, s, margin);
}

TEST_CASE("plans that break the verifier's rules: verify exits 1 naming each problem; the good plans pass") {
  HostileScratch s("verifyfails");
  Margin margin;
  for (const std::string& d : entries("tests/fixtures/plandir/verify_fails", "", true)) {
    INFO(d);
    const Child c = run_child({"verify", kMatrix, d}, s.dir);
    margin.add(c, "verify " + d);
    CHECK(c.status == 1);
    std::istringstream lines(c.err);
    std::string line, last;
    int problems = 0;
    const std::regex problem("^commfit: error: " + d + ": (format|rule [1-7]): .+$");
    while (std::getline(lines, line)) {
      if (!last.empty()) {
        CHECK_MESSAGE(std::regex_match(last, problem), last);
        ++problems;
      }
      last = line;
    }
    CHECK(problems >= 1);
    CHECK(last == "commfit: " + d + " does not verify against " + kMatrix);
    CHECK(c.seconds < kWallLimitS);
    CHECK(c.max_rss_kib < kRssLimitKiB);
  }
  // The plans the hostile ones were made from are fine, so the refusals above are theirs.
  for (const std::string& good : {kGoodPlan, std::string("tests/fixtures/plandir/good.cfp")}) {
    INFO(good);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"verify", kMatrix, good}, {"show", good}}) {
      const Child c = run_child(args, s.dir);
      margin.add(c, args[0] + " " + good);
      CHECK(c.status == 0);
      CHECK(c.err.empty());
      CHECK(c.seconds < kWallLimitS);
      CHECK(c.max_rss_kib < kRssLimitKiB);
    }
  }
}

// Plans that declare more than their steps use (rule 7): `plandir/good` with rank 1's staging area
// (and the manifest's maximum) edited to 3 GiB, and `plandir/limit/phases_at_limit` (`good` with
// 2^24 phases), each as a directory and as a binary plan. `verify` exits 1 with the rule 7 line
// as the only problem (the goldens below), fast and within 1 MiB of the honest plan's peak
// resident set; `show` still reads them (it allocates nothing per declared figure).
TEST_CASE("plans that declare more than their steps use: verify names rule 7 in both forms, fast and small") {
  HostileScratch s("declared");
  Margin margin;
  const fs::path staged = s.dir / "staging_3gib";
  fs::copy(source_dir() / kGoodPlan, staged);
  auto edit = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = slurp(staged / name);
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    std::ofstream(staged / name, std::ios::binary | std::ios::trunc) << text.replace(at, from.size(), to);
  };
  edit("rank-00001.json", "\"staging_bytes\": 2201", "\"staging_bytes\": 3221225472");
  edit("manifest.json", "\"staging_bytes_max\": 3072", "\"staging_bytes_max\": 3221225472");
  const std::string phases = "tests/fixtures/plandir/limit/phases_at_limit";
  const fs::path staged_cfp = s.dir / "staging_3gib.cfp", phases_cfp = s.dir / "phases_2e24.cfp";
  commfit::write_plan_binary(commfit::read_plan_dir(staged, false), staged_cfp);
  commfit::write_plan_binary(commfit::read_plan_dir(source_dir() / phases, false), phases_cfp);
  MESSAGE("the binary plans: 3 GiB of staging in " << fs::file_size(staged_cfp) << " bytes, 2^24 phases in " << fs::file_size(phases_cfp) << " bytes");

  const long honest_kib = run_child({"verify", kMatrix, kGoodPlan}, s.dir).max_rss_kib;
  const std::string staging_line = ": rule 7: rank 1: staging_bytes 3221225472 but the steps use at most 2201\n";
  const std::string phases_line = ": rule 7: phases 16777216 but the steps use at most 6 (the phases after the last step are empty on every rank)\n";
  for (const auto& [plan_, line] : {std::pair{staged.string(), staging_line}, {staged_cfp.string(), staging_line}, {phases, phases_line},
                                   {phases_cfp.string(), phases_line}}) {
    const auto& plan = plan_;
    INFO(plan);
    const Child c = run_child({"verify", kMatrix, plan}, s.dir);
    margin.add(c, "verify " + plan);
    CHECK(c.status == 1);
    CHECK(c.out.empty());
    CHECK(c.err == "commfit: error: " + plan + line + "commfit: " + plan + " does not verify against " + kMatrix + "\n");
    CHECK(c.seconds < kWallLimitS);
    CHECK(c.max_rss_kib <= honest_kib + 1024);
    const Child shown = run_child({"show", plan}, s.dir);
    margin.add(shown, "show " + plan);
    CHECK(shown.status == 0);
    CHECK(shown.seconds < kWallLimitS);
    CHECK(shown.max_rss_kib < kRssLimitKiB);
  }
}

// Same input and options, byte-identical plan: across runs and across thread counts. Nothing in
// commfit is threaded (no OpenMP, no std::thread, Eigen built without -fopenmp), so
// OMP_NUM_THREADS must change nothing; the test keeps it that way if a pass ever gets threads.
TEST_CASE("plans are byte-identical across runs and OMP_NUM_THREADS, for every strategy and both forms") {
  HostileScratch s("determinism");
  const std::string matrix = kMatrix;
  for (const std::string strategy : {"direct", "async", "two-stage", "memory", "auto"}) {
    for (const std::string form : {".plan", ".cfp"}) {
      INFO(strategy << " " << form);
      std::vector<std::string> files;
      for (const std::string threads : {"1", "4", "1"}) {
        const fs::path out = s.work / ("t" + threads + "-" + std::to_string(files.size()) + form);
        std::vector<std::string> args{"plan", matrix, "--strategy", strategy, "-q", "-o", out.string()};
        if (strategy == "memory") args.insert(args.end(), {"--memory", "9000"});   // rank 1 needs 4096 + room to forward
        const Child c = run_child(args, s.dir, threads);
        REQUIRE_MESSAGE(c.status == 0, c.err);
        std::string all = fs::is_directory(out) ? "" : slurp(out);   // a directory: every file, in name order
        if (fs::is_directory(out)) {
          std::vector<fs::path> parts;
          for (const auto& e : fs::directory_iterator(out)) parts.push_back(e.path());
          std::sort(parts.begin(), parts.end());
          for (const fs::path& p : parts) all += p.filename().string() + "\n" + slurp(p);
        }
        files.push_back(all);
        fs::remove_all(out);
      }
      CHECK(files[0].size() > 100);
      CHECK(files[1] == files[0]);
      CHECK(files[2] == files[0]);
    }
  }
}
