// commfit stats MATRIX: the traffic parameters of Transportation §2 and the size distribution.
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "planner/file_defaults.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace commfit {
namespace {

struct Summary {
  double min = 0, median = 0, mean = 0, max = 0;
};

template <class T>
Summary summarize(std::vector<T> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = static_cast<double>(v.front());
  s.max = static_cast<double>(v.back());
  s.median = v.size() % 2 ? static_cast<double>(v[v.size() / 2])
                          : (static_cast<double>(v[v.size() / 2 - 1]) + static_cast<double>(v[v.size() / 2])) / 2;
  double sum = 0;
  for (T x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

nlohmann::ordered_json summary_json(const Summary& x) { return {{"min", x.min}, {"median", x.median}, {"mean", x.mean}, {"max", x.max}}; }

int run_stats(const std::string& path, std::optional<MatrixFormat> format, bool as_json) {
  const MatrixFile in = read_matrix(path, format);
  const CommMatrix& m = in.matrix;
  const TrafficStats s = traffic_stats(m);
  std::vector<Bytes> sizes;
  sizes.reserve(static_cast<std::size_t>(s.messages));
  m.for_each([&](Rank i, Rank j, Bytes b) { if (i != j) sizes.push_back(b); });
  const Summary z = summarize(sizes);
  std::vector<std::int64_t> bins(65, 0);
  for (Bytes b : sizes) ++bins[static_cast<std::size_t>(64 - __builtin_clzll(b))];
  if (as_json) {
    // schemas/stats.schema.json.
    nlohmann::ordered_json j;
    j["format"] = "commfit-stats";
    j["version"] = 1;
    j["matrix"] = {{"file", path}, {"name", m.name}, {"description", m.description}, {"fingerprint", matrix_fingerprint(m)}};
    j["ranks"] = m.ranks;
    j["messages"] = s.messages;
    j["local_copies"] = s.local_copies;
    j["bytes"] = s.total_bytes;
    j["local_bytes"] = s.local_bytes;
    j["per_rank"] = {{"sent_bytes", summary_json(summarize(s.r))},
                     {"received_bytes", summary_json(summarize(s.c))},
                     {"fan_out", summary_json(summarize(s.f))},
                     {"fan_in", summary_json(summarize(s.g))}};
    j["t"] = s.t;
    j["h"] = s.h;
    nlohmann::ordered_json hist = nlohmann::ordered_json::array();
    for (std::size_t k = 1; k < bins.size(); ++k)
      if (bins[k]) hist.push_back({{"log2_from", k - 1}, {"count", bins[k]}});
    j["message_sizes"] = summary_json(z);
    j["message_sizes"]["log2_bins"] = hist;
    if (!m.memory.empty()) {
      const Summary mem = summarize(m.memory);
      j["memory"] = {{"min", mem.min}, {"median", mem.median}, {"max", mem.max}};
    }
    std::puts(j.dump(1).c_str());
    return 0;
  }
  std::printf("matrix       %s%s%s\n", m.name.c_str(), m.description.empty() ? "" : ": ", m.description.c_str());
  std::printf("ranks p      %d\n", m.ranks);
  std::printf("messages     %lld network, %lld local copies\n", static_cast<long long>(s.messages), static_cast<long long>(s.local_copies));
  std::printf("bytes        %llu network, %llu local\n", static_cast<unsigned long long>(s.total_bytes), static_cast<unsigned long long>(s.local_bytes));
  std::printf("fingerprint  %s\n", matrix_fingerprint(m).c_str());
  std::printf("%-12s %14s %14s %14s %14s\n", "per rank", "min", "median", "mean", "max");
  auto row = [](const char* name, Summary x) { std::printf("%-12s %14.0f %14.1f %14.1f %14.0f\n", name, x.min, x.median, x.mean, x.max); };
  row("r (sent B)", summarize(s.r));
  row("c (recv B)", summarize(s.c));
  row("f (fan-out)", summarize(s.f));
  row("g (fan-in)", summarize(s.g));
  std::printf("t = max(r, c) = %llu bytes\n", static_cast<unsigned long long>(s.t));
  std::printf("h = max(f, g) = %lld messages\n", static_cast<long long>(s.h));
  // Sizes of network messages in power-of-two bins.
  std::printf("message size min %.0f, median %.1f, mean %.1f, max %.0f bytes\n", z.min, z.median, z.mean, z.max);
  for (std::size_t k = 1; k < bins.size(); ++k)
    if (bins[k]) std::printf("  [2^%-2zu, 2^%-2zu) %10lld\n", k - 1, k, static_cast<long long>(bins[k]));
  if (!m.memory.empty()) {
    const Summary mem = summarize(m.memory);
    std::printf("memory       min %.0f, median %.1f, max %.0f free bytes per rank\n", mem.min, mem.median, mem.max);
  }
  return 0;
}

}  // namespace

void add_stats_command(CLI::App& app, Runner& run) {
  auto path = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("stats", "Print p, messages, r, c, t, f, g, h and the size distribution of a matrix");
  auto format = std::make_shared<std::optional<MatrixFormat>>();
  add_matrix_argument(sub, *path, *format, "Matrix file");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print the statistics as JSON (schemas/stats.schema.json)");
  sub->callback([path, format, json, &run] { run = [path, format, json] { return run_stats(*path, *format, *json); }; });
}

}  // namespace commfit
