// The strategy and pass tables (planner/strategy_table.h, planner/pass_table.h): their entries are
// consistent, everything generated from them (candidates, help, option checks) follows them, no
// source runs a pass or picks a strategy by a literal name, and the rules each pass table entry
// claims are the rules its schedules keep (--verify-each on every strategy and swept value).
#include "ir/error.h"
#include "planner/candidates.h"
#include "planner/limits.h"
#include "planner/near_miss.h"
#include "planner/units.h"
#include "planner/pass_table.h"
#include "planner/strategy_table.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

using namespace commfit;

namespace {

std::vector<std::string> swept_values(const Strategy& s) {
  if (!s.sweep) return {""};
  std::vector<std::string> out;
  for (const NamedEntry& e : sweep_choices(s)) out.push_back(e.name);
  return out;
}

}  // namespace

TEST_CASE("pass_table_entries_are_unique_and_found_by_name") {
  std::set<std::string> names;
  for (const PassEntry& p : pass_table()) {
    CHECK(names.insert(p.entry.name).second);
    REQUIRE(find_pass(p.entry.name));
    CHECK(*find_pass(p.entry.name) == p.pass);
    CHECK(&pass_entry(p.pass) == &p);
    CHECK(std::string(p.entry.source).size() > 0);
    CHECK(std::string(p.entry.description).size() > 0);
    if (p.memory) CHECK(p.schedule);
  }
  CHECK(!find_pass("no-such-pass"));
}

TEST_CASE("strategy_table_entries_are_complete") {
  std::set<std::string> names;
  for (const Strategy* s : strategy_table()) {
    CAPTURE(s->entry.name);
    CHECK(names.insert(s->entry.name).second);
    CHECK(find_strategy(s->entry.name) == s);
    CHECK((s->run != nullptr));
    CHECK((s->pieces != nullptr));
    if (s->sweep) {
      CHECK(!sweep_choices(*s).empty());   // a swept option is one of its choice options
    }
  }
  CHECK(find_strategy("auto") == nullptr);
  CHECK(strategy_names().starts_with("auto, direct"));
}

TEST_CASE("candidates_follow_the_strategy_table") {
  const CommMatrix m = gen_uniform(16, 4, 256, 1);
  std::vector<std::string> expected;
  for (const Strategy* s : strategy_table()) {
    if (s->needs_memory_limits) continue;
    for (const std::string& v : swept_values(*s)) expected.push_back(v.empty() ? s->entry.name : std::string(s->entry.name) + "/" + v);
  }
  std::vector<std::string> got;
  for (const CandidateRow& r : candidates_for(m, PlanOptions{})) got.push_back(r.name);
  CHECK(got == expected);
  // Under memory limits only the strategies that honour them.
  PlanOptions limited;
  limited.memory.assign(16, 1 << 20);
  for (const CandidateRow& r : candidates_for(m, limited)) CHECK(find_strategy(r.options.strategy)->needs_memory_limits);
}

TEST_CASE("options_a_strategy_does_not_read_are_refused") {
  const StrategyOption variant[] = {StrategyOption::variant};
  CHECK_THROWS_WITH_AS(check_given_options("direct", variant), "--variant does not apply to strategy direct (it applies to: two-stage)", UsageError);
  CHECK_NOTHROW(check_given_options("two-stage", variant));
  const StrategyOption algorithm[] = {StrategyOption::algorithm};
  CHECK_THROWS_WITH_AS(check_given_options("auto", algorithm), doctest::Contains("--algorithm does not apply to strategy auto"), UsageError);
  CHECK_THROWS_AS(check_given_options("async", algorithm), UsageError);
  const StrategyOption memory[] = {StrategyOption::memory};
  CHECK_NOTHROW(check_given_options("auto", memory));
  CHECK_NOTHROW(check_given_options("memory", memory));
  CHECK_THROWS_WITH_AS(check_given_options("direct", memory), "--memory does not apply to strategy direct (it applies to: auto, memory)", UsageError);
  CHECK_NOTHROW(check_given_options("no-such-strategy", variant));   // make_plan names the strategy
}

TEST_CASE("values_a_strategy_does_not_accept_are_refused") {
  const CommMatrix m = gen_uniform(8, 2, 64, 1);
  PlanOptions o;
  o.algorithm = "rs_nlp";
  o.strategy = "two-stage";
  CHECK_THROWS_WITH_AS(make_plan(m, o), doctest::Contains("unknown algorithm \"rs_nlp\" for strategy two-stage (choose from: optimal, lp, rs_n)"),
                       UsageError);
  o.strategy = "direct";
  CHECK_NOTHROW(make_plan(m, o));
  o.variant = "magic";   // read by two-stage only
  CHECK_NOTHROW(make_plan(m, o));
  o.strategy = "two-stage";
  o.algorithm = "optimal";
  CHECK_THROWS_WITH_AS(make_plan(m, o), doctest::Contains("unknown variant \"magic\""), UsageError);
}

TEST_CASE("help_and_list_passes_come_from_the_tables") {
  const std::string text = list_passes_text();
  for (const Strategy* s : strategy_table()) {
    CHECK(text.find(s->entry.name) != std::string::npos);
    for (const std::string& v : swept_values(*s)) CHECK(text.find(v) != std::string::npos);
  }
  for (const PassEntry& p : pass_table()) CHECK(text.find(p.entry.name) != std::string::npos);
  CHECK(option_choices_text(StrategyOption::algorithm).starts_with("direct: optimal, rs_n,"));
  CHECK(option_choices_text(StrategyOption::algorithm).find("two-stage: optimal, lp, rs_n") != std::string::npos);
  CHECK(option_choices_text(StrategyOption::variant).starts_with("two-stage: transport, transport-scan"));
}

// No source file runs a pass by a literal name or compares a strategy name outside the tables:
// names live in the tables only (the enum Pass makes the first a compile error; this guards the
// second and any string-keyed runner that might come back).
TEST_CASE("no_literal_pass_or_strategy_names_in_the_sources") {
  namespace fs = std::filesystem;
  const std::regex literal_run(R"(\.run\(\s*")");
  const std::regex strategy_compare(R"(strategy\s*==\s*"(direct|async|two-stage|memory)\")");
  int files = 0;
  for (const char* dir : {"planner", "passes", "ir", "backends", "workloads"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(COMMFIT_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        CAPTURE(e.path().string() + ":" + std::to_string(n));
        CHECK(!std::regex_search(line, literal_run));
        CHECK(!std::regex_search(line, strategy_compare));
      }
    }
  }
  CHECK(files > 50);
}

// Every strategy with every value it sweeps, on a crossbar and on a torus: with --verify-each the
// runner verifies each schedule a pass returns under the rules of that pass's entry, and the
// final rules are the ones the manifest records.
TEST_CASE("every_strategy_keeps_the_rules_its_passes_claim") {
  const CommMatrix m = gen_random_sparse(16, 0.3, 4096, 7, true);
  for (const char* topology : {"full", "torus:4x2x2"}) {
    for (const Strategy* s : strategy_table()) {
      for (const std::string& v : swept_values(*s)) {
        PlanOptions o;
        o.strategy = s->entry.name;
        if (s->sweep) choice(o, *s->sweep) = v;
        if (s->needs_memory_limits) o.memory.assign(16, 1 << 16);
        // The node strategy plans only for several ranks per node: four here.
        o.topology = Topology::parse(std::string(topology) + (o.strategy == "node" ? "+node4" : ""));
        o.verify_each = true;
        CAPTURE(o.strategy + "/" + v + " on " + topology);
        PlanReport report;
        const Plan plan = make_plan(m, o, &report);
        int verified = 0;
        for (const std::string& line : report.log) verified += line.find(", verified") != std::string::npos;
        CHECK(verified >= 1);   // at least the pass whose schedule was lowered
        if (s->needs_memory_limits) CHECK(plan.manifest.contract.memory.has_value());
        const std::string contention = to_string(plan.manifest.contract.contention);
        // Only direct plans are made link-disjoint on a machine with shared links.
        if (plan.manifest.contract.timing == Timing::async || s->needs_memory_limits || o.strategy == "node") CHECK(contention == "none");
        else if (o.strategy == "direct") CHECK(contention == (std::string(topology) == "full" ? "node" : "link"));
        else if (o.strategy == "bounded") CHECK(contention == "bounded");
        else CHECK(contention == "node");
      }
    }
  }
}

// planner/near_miss.h: slips are suggested, unrelated words are not.
TEST_CASE("near_miss_suggests_slips_and_nothing_else") {
  CHECK(edit_distance("plna", "plan") == 1);   // a transposition
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(nearest("stast", {"plan", "stats", "show"}) == "stats");
  CHECK(nearest("zzz", {"plan", "stats", "show"}).empty());
  CHECK(nearest("--tua", {"--tau", "--topology"}) == "--tau");
}

// planner/units.h: sizes, times and rates with units; anything else is refused.
TEST_CASE("units_read_sizes_times_and_rates") {
  auto bytes = [](const char* t) { return parse_quantity(t, Quantity::bytes); };
  auto secs = [](const char* t) { return parse_quantity(t, Quantity::seconds); };
  auto rate = [](const char* t) { return parse_quantity(t, Quantity::rate); };
  CHECK(bytes("8MiB") == 8.0 * 1024 * 1024);
  CHECK(bytes("8mib") == 8.0 * 1024 * 1024);
  CHECK(bytes("1.5GB") == 1.5e9);
  CHECK(bytes("2G") == 2.0 * 1024 * 1024 * 1024);   // Slurm's --mem: binary
  CHECK(bytes("64kB") == 64000);
  CHECK(bytes("100") == 100);
  CHECK(bytes("100B") == 100);
  CHECK(bytes("1e3") == 1000);
  CHECK(secs("2us") == doctest::Approx(2e-6));
  CHECK(secs("2\xC2\xB5s") == doctest::Approx(2e-6));
  CHECK(secs("500ns") == doctest::Approx(5e-7));
  CHECK(secs("1.5ms") == doctest::Approx(1.5e-3));
  CHECK(secs("2e-6") == 2e-6);                      // a plain number: exactly as written
  CHECK(rate("100Gbps") == doctest::Approx(12.5e9));
  CHECK(rate("100Gbit/s") == doctest::Approx(12.5e9));
  CHECK(rate("12.5GB/s") == doctest::Approx(12.5e9));
  CHECK(rate("12.5GBps") == doctest::Approx(12.5e9));
  CHECK(rate("1GiB/s") == doctest::Approx(1024.0 * 1024 * 1024));
  CHECK(rate("8bps") == doctest::Approx(1));
  for (const char* bad : {"", "MiB", "8 parsecs", "8XB", "8MiBs", "0x10", "nan", "inf", "1e999GB", "8EiB"}) {
    CAPTURE(bad);
    CHECK_FALSE(bytes(bad));
  }
  for (const char* bad : {"2 fortnights", "2u", "2S2"}) CHECK_FALSE(secs(bad));
  for (const char* bad : {"10Gb", "10G", "10GB", "10gbpss"}) CHECK_FALSE(rate(bad));
}

namespace {

// A cgroup file system of our own making under the temporary directory, removed at the end.
struct ScratchCgroups {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / ("commfit-cgroup-" + std::to_string(::getpid()));
  ScratchCgroups() { std::filesystem::remove_all(root); }
  ~ScratchCgroups() { std::filesystem::remove_all(root); }
  void put(const std::string& file, const std::string& text) const {
    std::filesystem::create_directories((root / file).parent_path());
    std::ofstream(root / file) << text << "\n";
  }
};

}  // namespace

// planner/limits.h: the default --max-memory is the least of physical memory, the cgroup's limit
// (v1 or v2, the tightest ancestor) and Slurm's allocation.
TEST_CASE("memory_limit_reads_cgroups_and_slurm") {
  const ScratchCgroups cgroups;
  const std::filesystem::path& root = cgroups.root;
  auto put = [&](const std::filesystem::path& file, const std::string& text) { cgroups.put(file.lexically_relative(root).string(), text); };
  const auto no_env = [](const char*) -> const char* { return nullptr; };
  const std::uint64_t phys = std::uint64_t{64} << 30;
  // Nothing mounted: physical memory.
  MemoryLimit l = memory_limit_from("0::/job\n", root, no_env, phys);
  CHECK(l.bytes == phys);
  CHECK(l.source == "physical memory");
  // v2: the job's memory.max, and a tighter parent's.
  put(root / "job/memory.max", "8589934592");
  put(root / "memory.max", "max");
  l = memory_limit_from("0::/job\n", root, no_env, phys);
  CHECK(l.bytes == std::uint64_t{8} << 30);
  CHECK(l.source == "cgroup " + (root / "job/memory.max").string());
  put(root / "slurm/memory.max", "4294967296");
  put(root / "slurm/step/memory.max", "max");
  CHECK(memory_limit_from("0::/slurm/step\n", root, no_env, phys).bytes == std::uint64_t{4} << 30);
  // v1: the memory controller's limit_in_bytes; "no limit" is 2^63 rounded to a page.
  put(root / "memory/docker/abc/memory.limit_in_bytes", "2147483648");
  put(root / "memory/memory.limit_in_bytes", "9223372036854771712");
  l = memory_limit_from("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n", root, no_env, phys);
  CHECK(l.bytes == std::uint64_t{2} << 30);
  // Slurm: MiB per node, or per CPU times the CPUs.
  auto env = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "SLURM_MEM_PER_CPU" ? "1000" : n == "SLURM_CPUS_ON_NODE" ? "3" : nullptr;
  };
  l = memory_limit_from("", root, env, phys);
  CHECK(l.bytes == std::uint64_t{3000} << 20);
  CHECK(l.source == "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE");
  // Garbage is ignored, never a limit of 0.
  put(root / "bad/memory.max", "lots");
  CHECK(memory_limit_from("0::/bad\n", root, no_env, phys).bytes == phys);
}

// planner/limits.h: the default --threads is the least of the affinity mask and the CPU quota of
// the cgroup (v2) and its ancestors, rounded up, at least 1.
TEST_CASE("usable_cpus_reads_affinity_and_cpu_max") {
  CHECK(cpu_max_cpus("200000 100000") == 2u);
  CHECK(cpu_max_cpus("150000 100000") == 2u);   // 1.5 CPUs: rounded up
  CHECK(cpu_max_cpus("1000 100000") == 1u);     // a hundredth of a CPU: still one thread
  CHECK(cpu_max_cpus("400000 50000") == 8u);
  for (const char* none : {"max 100000", "max", "", "100000", "100000 0", "-5 100000", "2e5 100000", "200000 100000 7", "lots"}) {
    CAPTURE(none);
    CHECK_FALSE(cpu_max_cpus(none));
  }
  const ScratchCgroups cgroups;
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 8);   // nothing mounted: the affinity mask
  CHECK(usable_cpus_from(0, "", cgroups.root) == 1);
  cgroups.put("job/cpu.max", "max 100000");
  cgroups.put("cpu.max", "max 100000");
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 8);
  cgroups.put("job/cpu.max", "250000 100000");   // docker --cpus 2.5
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 3);
  CHECK(usable_cpus_from(2, "0::/job\n", cgroups.root) == 2);   // the mask is tighter
  cgroups.put("slurm/cpu.max", "100000 100000");               // a tighter ancestor
  cgroups.put("slurm/step/cpu.max", "max 100000");
  CHECK(usable_cpus_from(8, "0::/slurm/step/\n", cgroups.root) == 1);
  cgroups.put("unified/hybrid/cpu.max", "400000 100000");      // hybrid systems mount v2 at unified/
  CHECK(usable_cpus_from(8, "4:cpu,cpuacct:/hybrid\n0::/hybrid\n", cgroups.root) == 4);
  CHECK(usable_cpus() >= 1);
}
