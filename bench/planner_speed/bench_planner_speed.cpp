// Planner speed at scale against Boost's edge_coloring (docs/PERFORMANCE.md "Planner speed against
// Boost"). For each case the matrix is generated once (not timed); then, in the same program and
// one after the other, each measured in a fork()ed child of it (so that each peak memory is its
// own; time is wall clock, CPU time reported too):
//   commfit  decompose_optimal(m): the optimal edge colouring, exactly h phases (König)
//   plan     make_plan(m, {}): the whole `commfit plan` pipeline (direct, optimal, lowered, verified)
//   boost    boost::edge_coloring on the same bipartite multigraph-free graph (senders 0..p-1,
//            receivers p..2p-1): Misra-Gries, at most h+1 colours; graph construction included
// The ratio is commfit / boost (decomposition vs colouring). Boost's colouring is O(m * p) in
// the worst case: a child that runs over --timeout seconds is stopped and reported as timed out,
// and the cases after it (larger) do not run Boost at all (reported as timed out too).
//
// --end-to-end: instead, `commfit plan MATRIX -o DIR/plan.cfp` end to end (direct strategy, the
// binary form: the default above 4096 ranks) on random matrices of 10^5, 10^6 and (without
// --quick) 10^7 messages at p = 16384 and the tight regular case (p = 65536, d = 152, 9.96 10^6
// messages); --huge adds 10^8 random messages when the machine has the memory (about 12 GB for
// the plan, 8 more to write the matrix). The matrix is written to a file first (not timed); then
//   run     the commfit binary (--commfit PATH, default ../../commfit beside this program) as a
//           child process: its CPU time (user + system), wall time and peak RSS (wait4), what a
//           user sees;
//   stages  in a fork()ed child, the same steps one by one, CPU and wall each: parse
//           (read_matrix), plan and write (make_plan streaming into PlanBinaryWriter: passes,
//           lower, verify, cost, the file); decompose, lower and verify are the wall times of
//           make_plan's pass log.
//
//   bench_planner_speed [--quick] [--timeout S] [--csv FILE] [--end-to-end [--huge] [--commfit PATH] [--dir DIR]]
#include "backends/plan_binary.h"
#include "ir/comm_matrix.h"
#include "ir/matrix_io.h"
#include "passes/decompose_optimal.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"
#include "workloads/matrix_output.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/edge_coloring.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace commfit;

namespace {

struct Result {
  double wall_s = -1, cpu_s = -1;
  double peak_mb = -1;   // growth of the child's peak RSS over its RSS at fork
  long long colours = -1;
  bool timed_out = false;
};

long rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Runs f in a fork()ed child with a time limit and returns what it computed (a trivially copyable
// struct, through a pipe); nullopt when the child died or ran out of time (`alarmed` says which).
template <class T, class F>
std::optional<T> in_fork(F f, int timeout_s, bool* alarmed = nullptr) {
  static_assert(std::is_trivially_copyable_v<T>);
  int fd[2];
  if (pipe(fd) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    alarm(static_cast<unsigned>(timeout_s));
    const T r = f();
    if (write(fd[1], &r, sizeof r) != ssize_t(sizeof r)) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  T r{};
  const ssize_t n = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (alarmed) *alarmed = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  if (n != ssize_t(sizeof r)) return std::nullopt;
  return r;
}

// Runs f in a child; f returns the number of colours/phases.
Result in_child(const std::function<long long()>& f, int timeout_s) {
  bool alarmed = false;
  const std::optional<Result> r = in_fork<Result>(
      [&] {
        const long base = rss_kb();
        const auto t0 = std::chrono::steady_clock::now();
        const std::clock_t c0 = std::clock();
        Result out;
        out.colours = f();
        out.cpu_s = double(std::clock() - c0) / CLOCKS_PER_SEC;
        out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        out.peak_mb = double(rss_kb() - base) / 1024.0;
        return out;
      },
      timeout_s, &alarmed);
  if (r) return *r;
  Result failed;
  failed.timed_out = alarmed;
  return failed;
}

long long boost_colouring(const CommMatrix& m) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, std::size_t>;
  Graph g(2 * std::size_t(m.ranks));
  m.for_each([&](Rank i, Rank j, Bytes) {
    if (i != j) boost::add_edge(std::size_t(i), std::size_t(m.ranks) + j, g);
  });
  return static_cast<long long>(boost::edge_coloring(g, boost::get(boost::edge_bundle, g)));
}

struct Case {
  std::string name;
  std::function<CommMatrix()> make;
};

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double wall_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// `commfit plan` as a user runs it: CPU (user + system), wall, peak RSS of the child process.
struct Run {
  double cpu_s = -1, user_s = -1, wall_s = -1, peak_mb = -1;
  bool ok = false;
};
Run run_commfit(const std::string& commfit, const std::string& matrix, const std::string& out, int timeout_s) {
  std::filesystem::remove_all(out);
  const double t0 = wall_now();
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(static_cast<unsigned>(timeout_s));
    execl(commfit.c_str(), commfit.c_str(), "plan", matrix.c_str(), "-o", out.c_str(), "-q", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage u{};
  wait4(pid, &status, 0, &u);
  Run r;
  r.wall_s = wall_now() - t0;
  r.user_s = double(u.ru_utime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec);
  r.cpu_s = r.user_s + double(u.ru_stime.tv_sec) + 1e-6 * double(u.ru_stime.tv_usec);
  r.peak_mb = double(u.ru_maxrss) / 1024.0;
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

// make_plan's plan into a binary file as it is made, as `commfit plan -o NAME.cfp` does.
class BinaryFile : public PlanSink {
 public:
  explicit BinaryFile(std::string file) : file_(std::move(file)) {}
  void rank(RankSchedule&& rs) override {
    if (!writer_) writer_.emplace(file_, rs.ranks, rs.phases, rs.matrix_fingerprint);
    writer_->add(rs);
  }
  void finish(const Manifest& m) override { writer_->finish(m); }

 private:
  std::string file_;
  std::optional<PlanBinaryWriter> writer_;
};

// The stages of the same run, in one fork()ed child: CPU and wall of each.
struct Stages {
  double parse_cpu = -1, parse_wall = -1, plan_cpu = -1, plan_wall = -1;
  double decompose_wall = -1, lower_wall = -1, verify_wall = -1;
};
Stages run_stages(const std::string& matrix, const std::string& out, int timeout_s) {
  std::filesystem::remove_all(out);
  return in_fork<Stages>(
             [&] {
               Stages st;
               double c = cpu_now(), w = wall_now();
               auto lap = [&](double& cpu, double& wall) {
                 const double c1 = cpu_now(), w1 = wall_now();
                 cpu = c1 - c, wall = w1 - w, c = c1, w = w1;
               };
               const CommMatrix m = read_matrix(matrix).matrix;
               lap(st.parse_cpu, st.parse_wall);
               PlanReport report;
               BinaryFile file(out);
               make_plan(m, {}, file, &report);
               lap(st.plan_cpu, st.plan_wall);
               for (const std::string& line : report.log) {   // "NAME: SECONDS s[, verified]"
                 const auto colon = line.find(": ");
                 const std::string name = line.substr(0, colon);
                 const double seconds = std::atof(line.c_str() + colon + 2);
                 if (name == "decompose") st.decompose_wall = seconds;
                 if (name == "lower") st.lower_wall = seconds;
                 if (name == "verify") st.verify_wall = seconds;
               }
               return st;
             },
             timeout_s)
      .value_or(Stages{});
}

// MemAvailable of /proc/meminfo in bytes (0 when unknown).
double available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

int end_to_end(bool quick, bool huge, int timeout, const std::string& csv_path, std::string commfit, std::string dir, const char* argv0) {
  if (commfit.empty()) commfit = (std::filesystem::path(argv0).parent_path() / "../../commfit").lexically_normal().string();
  if (dir.empty()) dir = std::filesystem::temp_directory_path() / ("bench_planner_speed." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Rank p = 16384;
  auto random = [&](double size) {
    return Case{"random p=" + std::to_string(p) + " m=" + std::to_string(static_cast<long long>(size)),
                [=] { return gen_random_sparse(p, size / p / (p - 1), 1 << 20, 7); }};
  };
  std::vector<Case> cases = {random(1e5), random(1e6)};
  if (!quick) cases.push_back(random(1e7));
  if (!quick) cases.push_back({"regular p=65536 d=152", [] { return gen_uniform(65536, 152, 4096, 7); }});
  if (huge) {
    if (available_bytes() >= 20e9) cases.push_back(random(1e8));
    else std::printf("(--huge: 10^8 messages need about 20 GB of memory; %.1f GB available: skipped)\n", available_bytes() / 1e9);
  }
  std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv)
    std::fprintf(csv, "case,p,messages,run_cpu_s,run_user_s,run_wall_s,peak_mb,bytes_per_message,parse_cpu_s,parse_wall_s,plan_cpu_s,plan_wall_s,"
                      "decompose_wall_s,lower_wall_s,verify_wall_s\n");
  std::printf("%-24s %9s | %8s %8s %8s %8s %6s | %-13s %-13s %9s %7s %7s\n", "case (direct, .cfp)", "messages", "cpu s", "user s", "wall s", "peak MB",
              "B/msg", "parse cpu/wall", "plan+write c/w", "decompose", "lower", "verify");
  for (const Case& c : cases) {
    const std::string matrix = dir + "/matrix.json", out = dir + "/plan.cfp";
    std::int64_t messages = 0;
    Rank ranks = 0;
    {
      const CommMatrix m = c.make();
      messages = traffic_stats(m).messages;
      ranks = m.ranks;
      write_matrix_output(m, matrix);
    }
    const Run run = run_commfit(commfit, matrix, out, timeout);
    const Stages st = run_stages(matrix, out, timeout);
    std::filesystem::remove_all(out);
    const double per_message = run.peak_mb * 1024 * 1024 / double(messages);
    std::printf("%-24s %9lld | %8.3g %8.3g %8.3g %8.0f %6.0f | %6.3g/%-6.3g %6.3g/%-6.3g %9.3g %7.3g %7.3g%s\n", c.name.c_str(),
                static_cast<long long>(messages), run.cpu_s, run.user_s, run.wall_s, run.peak_mb, per_message, st.parse_cpu, st.parse_wall, st.plan_cpu,
                st.plan_wall, st.decompose_wall, st.lower_wall, st.verify_wall, run.ok ? "" : "  (commfit failed)");
    std::fflush(stdout);
    if (csv) {
      std::fprintf(csv, "%s,%d,%lld,%.4g,%.4g,%.4g,%.1f,%.0f,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g\n", c.name.c_str(), ranks,
                   static_cast<long long>(messages), run.cpu_s, run.user_s, run.wall_s, run.peak_mb, per_message, st.parse_cpu, st.parse_wall,
                   st.plan_cpu, st.plan_wall, st.decompose_wall, st.lower_wall, st.verify_wall);
      std::fflush(csv);
    }
  }
  std::filesystem::remove_all(dir);
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, e2e = false, huge = false;
  int timeout = 600;
  std::string csv_path, commfit, dir;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    if (s == "--quick") quick = true;
    else if (s == "--timeout" && k + 1 < argc) timeout = std::atoi(argv[++k]);
    else if (s == "--csv" && k + 1 < argc) csv_path = argv[++k];
    else if (s == "--end-to-end") e2e = true;
    else if (s == "--huge") huge = true;
    else if (s == "--commfit" && k + 1 < argc) commfit = argv[++k];
    else if (s == "--dir" && k + 1 < argc) dir = argv[++k];
    else {
      std::fprintf(stderr, "usage: bench_planner_speed [--quick] [--timeout S] [--csv FILE] [--end-to-end [--huge] [--commfit PATH] [--dir DIR]]\n");
      return 2;
    }
  }
  if (e2e) return end_to_end(quick, huge, timeout, csv_path, commfit, dir, argv[0]);
  auto sparse = [](Rank p, double messages) {
    return Case{"random p=" + std::to_string(p) + " m=" + std::to_string(static_cast<long long>(messages)),
                [=] { return gen_random_sparse(p, messages / p / (p - 1), 1 << 20, 7); }};
  };
  auto regular = [](Rank p, int d) {
    return Case{"regular p=" + std::to_string(p) + " d=" + std::to_string(d), [=] { return gen_uniform(p, d, 4096, 7); }};
  };
  std::vector<Case> cases = {sparse(1024, 1e4), regular(1024, 16), sparse(4096, 1e5), regular(1024, 100)};
  if (!quick) {
    for (const Case& c : {sparse(8192, 1e6), sparse(65536, 1e6), regular(16384, 64), regular(65536, 16),
                          sparse(65536, 1e7), regular(65536, 152)})
      cases.push_back(c);
  }
  std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv) std::fprintf(csv, "case,p,messages,h,method,colours,wall_s,cpu_s,peak_mb,timed_out\n");
  std::printf("%-26s %6s %9s %5s | %-8s %8s %9s %9s | %-8s %8s %9s %9s | %-7s %9s %9s | %s\n", "case", "p", "messages",
              "h", "commfit", "phases", "cpu s", "peak MB", "boost", "colours", "cpu s", "peak MB", "plan", "cpu s",
              "peak MB", "commfit/boost (CPU)");
  bool boost_gave_up = false;   // after one timeout, larger cases skip Boost (it would time out too)
  for (const Case& c : cases) {
    const CommMatrix m = c.make();
    const TrafficStats st = traffic_stats(m);
    const Result ours = in_child([&] { return static_cast<long long>(decompose_optimal(m).phases); }, timeout);
    const Result plan = in_child([&] { return static_cast<long long>(make_plan(m, {}).manifest.phases); }, timeout);
    Result boost;
    if (boost_gave_up) boost.timed_out = true;
    else boost = in_child([&] { return boost_colouring(m); }, timeout);
    boost_gave_up = boost_gave_up || boost.timed_out;
    auto num = [](double v, const char* fmt) {
      char b[32];
      if (v < 0) return std::string("-");
      std::snprintf(b, sizeof b, fmt, v);
      return std::string(b);
    };
    // The ratio on CPU time: the machine is shared, wall time includes waiting for a core.
    const std::string ratio = ours.cpu_s > 0 && boost.cpu_s > 0 ? num(ours.cpu_s / boost.cpu_s, "%.3g")
                              : boost.timed_out ? "< " + num(ours.cpu_s / timeout, "%.2g") + " (boost timed out)" : "-";
    std::printf("%-26s %6d %9lld %5lld | %8s %8lld %9s %9s | %8s %8lld %9s %9s | %7s %9s %9s | %s\n", c.name.c_str(),
                m.ranks, static_cast<long long>(st.messages), static_cast<long long>(st.h), "", ours.colours,
                num(ours.cpu_s, "%.3g").c_str(), num(ours.peak_mb, "%.1f").c_str(), "", boost.colours,
                boost.timed_out ? "timeout" : num(boost.cpu_s, "%.3g").c_str(), num(boost.peak_mb, "%.1f").c_str(), "",
                num(plan.cpu_s, "%.3g").c_str(), num(plan.peak_mb, "%.1f").c_str(), ratio.c_str());
    std::fflush(stdout);
    if (csv) {
      for (const auto& [name, r] : {std::pair<const char*, const Result&>{"commfit", ours}, {"plan", plan}, {"boost", boost}})
        std::fprintf(csv, "%s,%d,%lld,%lld,%s,%lld,%.6g,%.6g,%.1f,%d\n", c.name.c_str(), m.ranks,
                     static_cast<long long>(st.messages), static_cast<long long>(st.h), name, r.colours, r.wall_s, r.cpu_s,
                     r.peak_mb, r.timed_out ? 1 : 0);
      std::fflush(csv);
    }
  }
  if (csv) std::fclose(csv);
  return 0;
}
