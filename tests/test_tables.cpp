// The strategy and pass tables (planner/strategy_table.h, planner/pass_table.h): their entries are
// consistent, everything generated from them (candidates, help, option checks) follows them, no
// source runs a pass or picks a strategy by a literal name, and the rules each pass table entry
// claims are the rules its schedules keep (--verify-each on every strategy and swept value).
#include "ir/error.h"
#include "planner/candidates.h"
#include "planner/pass_table.h"
#include "planner/strategy_table.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

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
