#include "planner/limits.h"

#include "ir/error.h"
#include "ir/human_units.h"
#include "planner/strategy_table.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace commfit {

MemoryEstimate plan_memory_estimate(const CommMatrix& m, const PlanOptions& o) {
  MemoryEstimate e;
  if (const Strategy* s = find_strategy(o.strategy)) {
    e.pieces = s->pieces(m, o);
  } else if (o.strategy != "auto") {
    e.pieces = network_messages(m);   // make_plan refuses the name; the estimate need not
  } else {
    // auto: o.threads candidates are planned at once and the cheapest so far is kept, so one plan
    // more than the threads is alive at the peak (planner/candidates.cpp also holds a finished
    // plan that ties the cheapest until the candidates before it are done: not counted); a
    // strategy auto skips on this matrix does not count.
    std::uint64_t most = 0, candidates = 0;
    for (const Strategy* t : strategy_table())
      if (!t->auto_skip || t->auto_skip(m).empty()) {
        most = std::max(most, t->pieces(m, o));
        candidates += t->sweep ? sweep_choices(*t).size() : 1;
      }
    e.pieces = saturating_mul(most, std::min<std::uint64_t>(std::max(o.threads, 1u), std::max<std::uint64_t>(candidates, 1)) + 1);
  }
  e.bytes = saturating_add(saturating_add(saturating_mul(e.pieces, kEstimateBytesPerPiece), saturating_mul(static_cast<std::uint64_t>(m.nnz()), kEstimateBytesPerMessage)),
                           saturating_add(saturating_mul(static_cast<std::uint64_t>(m.ranks), kEstimateBytesPerRank), kEstimateBaseBytes));
  return e;
}

namespace {

// Ranks that send or receive at least one message.
std::uint64_t communicating_ranks(const CommMatrix& m) {
  std::vector<bool> seen(static_cast<std::size_t>(m.ranks), false);
  m.for_each([&](Rank s, Rank d, Bytes) { seen[s] = seen[d] = true; });
  return static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), true));
}

}  // namespace

void check_plan_memory(const CommMatrix& m, const PlanOptions& o, const std::string& file, std::optional<std::uint64_t> limit) {
  const MemoryLimit machine = limit ? MemoryLimit{} : default_memory_limit();
  const std::uint64_t max = limit ? *limit : machine.bytes;
  const MemoryEstimate e = plan_memory_estimate(m, o);
  // A plan holds a schedule for every rank, idle or not: a few messages among millions of ranks
  // would cost gigabytes for nothing a user wants. Without --max-memory that is refused.
  const std::uint64_t messages = static_cast<std::uint64_t>(m.nnz());
  const std::uint64_t rank_bytes = saturating_mul(static_cast<std::uint64_t>(m.ranks), kEstimateBytesPerRank);
  if (!limit && rank_bytes > kProportionFloorBytes && rank_bytes / std::max<std::uint64_t>(messages, 1) > kProportionBytesPerMessage)
    throw InputError(file, "whole matrix",
                     "planning needs about " + human_bytes(e.bytes) + " for " + std::to_string(messages) + " messages: " +
                         std::to_string(communicating_ranks(m)) + " of its " + std::to_string(m.ranks) +
                         " ranks send or receive, and the plan holds a schedule for every rank; plan the ranks that communicate on a smaller communicator, or give --max-memory to plan it anyway");
  if (e.bytes <= max) return;
  throw InputError(file, "whole matrix",
                   "planning needs about " + human_bytes(e.bytes) + " (" + std::to_string(m.nnz()) + " messages, " + std::to_string(e.pieces) +
                       " pieces for strategy " + o.strategy + "), more than the limit of " + human_bytes(max) +
                       (limit ? " (--max-memory)" : " (" + machine.source + "; see --max-memory)"));
}

namespace {

// The first line of a small file (a cgroup control file), "" when it cannot be read.
std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// A byte count as a cgroup writes it; nullopt for "max", nonsense or v1's "no limit" (2^63
// rounded down to a page).
std::optional<std::uint64_t> limit_value(const std::string& text) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr == text.data() || v >= (std::uint64_t{1} << 62)) return std::nullopt;
  return v;
}

// The least limit of `file` in the cgroup `path` under `mount` and in every ancestor up to the
// mount itself (a limit applies to its whole subtree), each file's first line read by `value`.
std::optional<std::uint64_t> cgroup_limit(const std::filesystem::path& mount, std::string path, const char* file,
                                          std::string& where,
                                          std::optional<std::uint64_t> (*value)(const std::string&) = limit_value) {
  std::optional<std::uint64_t> least;
  for (;;) {
    while (!path.empty() && path.back() == '/') path.pop_back();
    const std::filesystem::path dir = mount / std::filesystem::path(path).relative_path();
    if (const std::optional<std::uint64_t> v = value(first_line(dir / file)); v && (!least || *v < *least)) {
      least = v;
      where = (dir / file).string();
    }
    if (path.empty()) return least;
    path.erase(path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
  }
}

}  // namespace

MemoryLimit memory_limit_from(const std::string& proc_cgroup, const std::filesystem::path& cgroup_root,
                              const std::function<const char*(const char*)>& getenv, std::uint64_t physical) {
  MemoryLimit best;
  auto offer = [&](std::uint64_t bytes, std::string source) {
    if (bytes > 0 && bytes < best.bytes) best = {bytes, std::move(source)};
  };
  offer(physical, "physical memory");
  // /proc/self/cgroup: "0::/path" (v2) or "N:controller,controller:/path" (v1).
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string where;
    std::optional<std::uint64_t> v;
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      // v2, mounted at the root or (hybrid systems) at unified/.
      for (const char* mount : {"", "unified"})
        if (!v) v = cgroup_limit(cgroup_root / mount, path, "memory.max", where);
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      v = cgroup_limit(cgroup_root / "memory", path, "memory.limit_in_bytes", where);
    }
    if (v) offer(*v, "cgroup " + where);
  }
  // Slurm: its MiB ("MB" in its documentation).
  auto number = [&](const char* name) -> std::optional<std::uint64_t> {
    const char* text = getenv(name);
    if (!text) return std::nullopt;
    return limit_value(text);
  };
  if (const auto node = number("SLURM_MEM_PER_NODE")) {
    offer(saturating_mul(*node, std::uint64_t{1} << 20), "SLURM_MEM_PER_NODE");
  } else if (const auto cpu = number("SLURM_MEM_PER_CPU")) {
    const auto cpus = number("SLURM_CPUS_ON_NODE");
    offer(saturating_mul(saturating_mul(*cpu, std::uint64_t{1} << 20), cpus ? *cpus : 1), "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE");
  }
  return best;
}

MemoryLimit default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t physical =
      pages <= 0 || page <= 0 ? std::uint64_t{1} << 63 : saturating_mul(static_cast<std::uint64_t>(pages), static_cast<std::uint64_t>(page));
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return memory_limit_from(text.str(), "/sys/fs/cgroup", [](const char* name) { return std::getenv(name); }, physical);
}

std::optional<std::uint64_t> cpu_max_cpus(const std::string& line) {
  std::uint64_t quota = 0, period = 0;
  const char* const end = line.data() + line.size();
  const auto q = std::from_chars(line.data(), end, quota);
  if (q.ec != std::errc() || q.ptr == end || *q.ptr != ' ') return std::nullopt;   // "max", or nonsense
  const auto p = std::from_chars(q.ptr + 1, end, period);
  if (p.ec != std::errc() || p.ptr != end || period == 0) return std::nullopt;
  return std::max<std::uint64_t>(1, quota / period + (quota % period != 0));
}

unsigned usable_cpus_from(unsigned affinity, const std::string& proc_cgroup, const std::filesystem::path& cgroup_root) {
  std::uint64_t cpus = std::max(affinity, 1u);
  // cgroup v2 only ("0::/path"), mounted at the root or (hybrid systems) at unified/.
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string where;
    for (const char* mount : {"", "unified"})
      if (const auto quota = cgroup_limit(cgroup_root / mount, line.substr(3), "cpu.max", where, cpu_max_cpus)) cpus = std::min(cpus, *quota);
  }
  return static_cast<unsigned>(cpus);
}

unsigned usable_cpus() {
  cpu_set_t set;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const unsigned affinity = ::sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set))
                                                                           : static_cast<unsigned>(std::max(online, 1L));
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return usable_cpus_from(affinity, text.str(), "/sys/fs/cgroup");
}

unsigned threads_or_default(std::optional<int> given) {
  if (!given) return usable_cpus();
  if (*given < 1) throw UsageError("--threads must be at least 1 (got " + std::to_string(*given) + ")");
  return static_cast<unsigned>(*given);
}

}  // namespace commfit
