#include "planner/file_defaults.h"

#include "ir/error.h"
#include "planner/plan_option.h"

#include <cstdio>

#include <cctype>
#include <sstream>
#include <algorithm>
#include <unordered_map>

namespace commfit {

CommandLineMachine command_line_machine(const CLI::App& sub, const std::string& node_map) {
  auto given = [&](const char* flag) {
    const CLI::Option* option = sub.get_option_no_throw(flag);
    return option && option->count() > 0;
  };
  return {given("--topology"), node_map, given("--tau"), given("--bandwidth")};
}

void apply_file_defaults(const MatrixFile& in, const std::string& path, const CommandLineMachine& cli, PlanOptions& o) {
  // The file's figures are numbers the matrix reader checked (positive, finite); written with 17
  // digits they read back to the same double.
  auto set = [&](const char* field, const char* key) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", in.cost[field].get<double>());
    try {
      set_plan_option(o, key, text);
    } catch (const UsageError& e) {
      throw InputError(path, std::string("/cost/") + field, e.what());
    }
  };
  if (in.cost.is_object()) {
    if (in.cost.contains("tau_s") && !cli.tau_given) set("tau_s", "tau");
    if (in.cost.contains("bandwidth_Bps") && !cli.bandwidth_given) set("bandwidth_Bps", "bandwidth");
  }
  if (!cli.topology_given && !in.topology.is_null()) {   // else the command line's, already in o
    try {
      o.topology = Topology::from_json(in.topology);
    } catch (const UsageError& e) {
      throw InputError(path, "/topology", e.what());
    }
  }
  if (!cli.node_map.empty()) {
    std::vector<Rank> map = read_node_map(cli.node_map);
    if (static_cast<Rank>(map.size()) != in.matrix.ranks)
      throw InputError(cli.node_map, "", "the node map places " + std::to_string(map.size()) + " ranks but the matrix " + path + " has " +
                                             std::to_string(in.matrix.ranks));
    try {
      o.topology = o.topology.with_node_map(std::move(map));
    } catch (const UsageError& e) {
      throw InputError(cli.node_map, "", e.what());
    }
  }
}

std::vector<Rank> read_node_map(const std::string& path) {
  // A regular file of at most 1 GiB, as --memory-file: no FIFO or device is read or waited on.
  std::istringstream in(read_text_file(path, std::size_t{1} << 30));
  return read_node_map(in, path);
}

std::vector<Rank> read_node_map(std::istream& f, const std::string& path) {
  std::vector<std::string> names;   // entries as written, then numbered
  std::vector<std::int64_t> lines;
  std::string line;
  constexpr std::size_t kMaxName = 255;
  for (std::int64_t n = 1; std::getline(f, line); ++n) {
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (std::size_t k = 0; k < line.size();) {
      if (std::isspace(static_cast<unsigned char>(line[k]))) {
        ++k;
        continue;
      }
      std::size_t end = k;
      while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
      if (end - k > kMaxName) throw InputError(path, "line " + std::to_string(n), "an entry longer than " + std::to_string(kMaxName) + " characters");
      if (static_cast<std::int64_t>(names.size()) >= kMaxNodeMapRanks)
        throw InputError(path, "line " + std::to_string(n), "more than " + std::to_string(kMaxNodeMapRanks) + " ranks");
      names.push_back(line.substr(k, end - k));
      lines.push_back(n);
      k = end;
    }
  }
  if (f.bad()) throw InputError(path, "", "read error");
  if (names.empty()) throw InputError(path, "", "the node map places no rank (one entry per rank, in rank order)");
  // All numbers: node numbers as written. Otherwise names, numbered by first appearance.
  auto number = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<Rank> map(names.size());
  if (std::all_of(names.begin(), names.end(), number)) {
    for (std::size_t r = 0; r < names.size(); ++r) map[r] = static_cast<Rank>(std::stol(names[r]));
  } else {
    std::unordered_map<std::string, Rank> id;
    for (std::size_t r = 0; r < names.size(); ++r) map[r] = id.try_emplace(names[r], static_cast<Rank>(id.size())).first->second;
  }
  return map;
}

void add_node_map_option(CLI::App* sub, std::string& path) {
  sub->add_option("--node-map", path,
                  "Place the ranks by FILE: one node number or host name per rank, in rank order (for placements +nodeN cannot "
                  "describe: round robin, uneven nodes; docs/FORMAT.md \"Node maps\")");
}

void add_matrix_argument(CLI::App* sub, std::string& path, std::optional<MatrixFormat>& format, const std::string& what) {
  sub->add_option("MATRIX", path, what + ", commfit JSON or Matrix Market (told apart by content), - for standard input")->required();
  sub->add_option_function<std::string>(
         "--input-format", [&format](const std::string& v) { format = v == "mtx" ? MatrixFormat::matrix_market : MatrixFormat::json; },
         "Read MATRIX as json or mtx (Matrix Market) whatever its content")
      ->check(CLI::IsMember({"json", "mtx"}));
}

void add_threads_option(CLI::App* sub, std::optional<int>& threads) {
  sub->add_option("--threads", threads,
                  "Candidates of --strategy auto planned at once, with the same result (default: the CPUs this process may use, by its "
                  "affinity and cgroup CPU quota)");
}

}  // namespace commfit
