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
//   bench_planner_speed [--quick] [--timeout S] [--csv FILE]
#include "ir/comm_matrix.h"
#include "passes/decompose_optimal.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

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
#include <functional>
#include <string>
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

// Runs f in a child; f returns the number of colours/phases.
Result in_child(const std::function<long long()>& f, int timeout_s) {
  int fd[2];
  if (pipe(fd) != 0) std::abort();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    alarm(static_cast<unsigned>(timeout_s));
    const long base = rss_kb();
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    Result r;
    r.colours = f();
    r.cpu_s = double(std::clock() - c0) / CLOCKS_PER_SEC;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.peak_mb = double(rss_kb() - base) / 1024.0;
    if (write(fd[1], &r, sizeof r) != ssize_t(sizeof r)) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  Result r;
  const ssize_t n = read(fd[0], &r, sizeof r);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != ssize_t(sizeof r)) {
    r = Result{};
    r.timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  }
  return r;
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

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int timeout = 600;
  std::string csv_path;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    if (s == "--quick") quick = true;
    else if (s == "--timeout" && k + 1 < argc) timeout = std::atoi(argv[++k]);
    else if (s == "--csv" && k + 1 < argc) csv_path = argv[++k];
    else {
      std::fprintf(stderr, "usage: bench_planner_speed [--quick] [--timeout S] [--csv FILE]\n");
      return 2;
    }
  }
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
