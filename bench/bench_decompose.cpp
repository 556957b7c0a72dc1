// bench_decompose: planner time of the decompose passes as the pattern grows (docs/PERFORMANCE.md
// "Benchmarks"). decompose_optimal on random sparse patterns of 1e5, 1e6 and 1e7 messages, a hot
// receiver (the hashed colour table) and tight regular patterns (every degree exactly h, where
// Kempe walks are longest); rs_n (compress + decompose) and lp on the 1e5 and 1e6 patterns for
// comparison. Each case is timed `--repeat` times with std::chrono::steady_clock (generation
// excluded); the table shows the best and the median wall time, and the CPU time (std::clock)
// of the best run, which stays meaningful when other jobs share the cores.
//
//   bench_decompose [--repeat N] [--quick] [--csv FILE]
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "workloads/generators.h"

#include <algorithm>
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

struct Pattern {
  std::string name;
  std::function<CommMatrix()> make;
  bool compare = false;   // also time rs_n and lp
};

struct Row {
  std::string algorithm, pattern;
  Rank p = 0;
  std::int64_t messages = 0, h = 0;
  Phase phases = 0;
  double best_s = 0, median_s = 0, cpu_s = 0;
};

std::vector<Pattern> patterns(bool quick) {
  std::vector<Pattern> out;
  auto sparse = [](Rank p, double messages, std::uint64_t seed) {
    return Pattern{"sparse p=" + std::to_string(p) + " d=" + std::to_string(static_cast<int>(messages / p)),
                   [=] { return gen_random_sparse(p, messages / p / (p - 1), 1 << 20, seed); }};
  };
  auto regular = [](Rank p, int d, std::uint64_t seed) {
    return Pattern{"regular p=" + std::to_string(p) + " d=" + std::to_string(d),
                   [=] { return gen_uniform(p, d, 65536, seed); }};
  };
  out.push_back(sparse(1024, 1e5, 1));
  out.back().compare = true;
  out.push_back(sparse(8192, 1e6, 2));
  out.back().compare = true;
  out.push_back(sparse(65536, 1e6, 3));
  out.push_back({"lognormal p=8192 d=122", [] { return gen_lognormal(8192, 1e6 / 8192 / 8191, 65536, 2.0, 4); }});
  out.push_back({"hot receiver p=65536 d=15", [] { return gen_hot_receiver(65536, 0, 1 << 20, 15.0 / 65535, 5); }});
  out.push_back(regular(1000, 100, 6));
  out.push_back(regular(1000, 999, 7));
  if (!quick) {
    out.push_back(sparse(65536, 1e7, 8));
    out.push_back(sparse(16384, 1e7, 9));
    out.push_back(regular(10000, 1000, 10));
    out.push_back(regular(65536, 152, 11));
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Row time_it(const std::string& algorithm, const Pattern& pat, const CommMatrix& m, const TrafficStats& st,
            int repeat, const std::function<Schedule()>& run) {
  Row row{algorithm, pat.name, m.ranks, st.messages, st.h};
  std::vector<double> times;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const Schedule s = run();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    times.push_back(seconds_since(t0));
    if (times.back() <= *std::min_element(times.begin(), times.end())) row.cpu_s = cpu;
    row.phases = s.phases;
  }
  std::sort(times.begin(), times.end());
  row.best_s = times.front();
  row.median_s = times[times.size() / 2];
  return row;
}

void print(const Row& r) {
  std::printf("%-8s %-28s %6d %9lld %6lld %7u %6.3f %9.4f %9.4f %9.4f %10.3g\n", r.algorithm.c_str(),
              r.pattern.c_str(), r.p, static_cast<long long>(r.messages), static_cast<long long>(r.h), r.phases,
              r.h ? static_cast<double>(r.phases) / static_cast<double>(r.h) : 0.0, r.best_s, r.median_s, r.cpu_s,
              static_cast<double>(r.messages) / r.best_s);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  bool quick = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv = argv[++i];
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: bench_decompose [--repeat N] [--quick] [--csv FILE]\n");
      return 2;
    }
  }
  std::printf("%-8s %-28s %6s %9s %6s %7s %6s %9s %9s %9s %10s\n", "algo", "pattern", "p", "messages", "h",
              "phases", "ph/h", "best_s", "median_s", "cpu_s", "msg/s");
  std::vector<Row> rows;
  for (const Pattern& pat : patterns(quick)) {
    const CommMatrix m = pat.make();
    const TrafficStats st = traffic_stats(m);
    rows.push_back(time_it("optimal", pat, m, st, repeat, [&] { return decompose_optimal(m); }));
    print(rows.back());
    if (!pat.compare) continue;
    rows.push_back(time_it("rs_n", pat, m, st, repeat, [&] { return decompose_rs_n(compress(m, 1), m, 1); }));
    print(rows.back());
    rows.push_back(time_it("lp", pat, m, st, repeat, [&] { return decompose_lp(m); }));
    print(rows.back());
  }
  if (!csv.empty()) {
    std::FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_decompose: cannot write %s\n", csv.c_str());
      return 1;
    }
    std::fprintf(f, "algorithm,pattern,p,messages,h,phases,best_s,median_s,cpu_s,messages_per_s\n");
    for (const Row& r : rows)
      std::fprintf(f, "%s,%s,%d,%lld,%lld,%u,%.6f,%.6f,%.6f,%.6g\n", r.algorithm.c_str(), r.pattern.c_str(), r.p,
                   static_cast<long long>(r.messages), static_cast<long long>(r.h), r.phases, r.best_s,
                   r.median_s, r.cpu_s, static_cast<double>(r.messages) / r.best_s);
    std::fclose(f);
  }
  return 0;
}
