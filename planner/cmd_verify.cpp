// commfit verify MATRIX PLAN: run the verifier (docs/FORMAT.md §4) on plan files.
// Exit 0 when the plan is valid, 1 when it breaks a rule (each problem on stderr), 2 when a file
// cannot be read.
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/cost_model.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "ir/topology.h"
#include "passes/verify.h"
#include "planner/commands.h"
#include "planner/file_defaults.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace commfit {
namespace {

struct VerifyCommand {
  std::string matrix, plan;
  std::optional<MatrixFormat> input_format;
  bool json = false;
};

// The rules a plan claims: its manifest names the contention rule, and memory-constrained plans
// record the free bytes per rank they were planned for (rule 5 is checked against those).
VerifyRules rules_from_manifest(const Manifest& m, const std::string& plan_path, CommMatrix& matrix, Topology& topology) {
  const PlanContract& c = m.contract;
  VerifyRules rules;
  if (c.memory) {
    if (c.memory->size() != static_cast<std::size_t>(matrix.ranks))
      throw InputError(plan_path, "/options/memory", "expected one free-byte count per rank");
    matrix.memory = *c.memory;
    rules.memory = true;
  }
  rules.contention = c.contention;
  rules.per_port = c.per_port;
  if (!c.topology.empty()) {
    try {
      topology = Topology::parse(c.topology);
      topology.check_ranks(matrix.ranks);
    } catch (const UsageError& e) {
      throw InputError(plan_path + "/manifest.json", "/options/topology", e.what());
    }
  }
  if (rules.contention == Contention::link) {
    if (topology.kind() == Topology::Kind::full && topology.ranks_per_node() == 1)
      throw InputError(plan_path + "/manifest.json", "/options", "the link rule needs the plan's \"topology\"");
    rules.route = [&topology](Rank a, Rank b, std::vector<Link>& links) { topology.route(a, b, links); };
  }
  return rules;
}

int run_verify(const VerifyCommand& c) {
  MatrixFile in = read_matrix(c.matrix, c.input_format);
  // Either form of a plan: a directory or the single binary file.
  // The plan hash is checked here, after the rules, so that an edited plan is told by the rule it
  // breaks as well as by the hash.
  const bool binary = is_plan_binary(c.plan);
  const Plan plan = binary ? read_plan_binary(c.plan, false) : read_plan_dir(c.plan, false);
  Topology topology;
  VerifyRules rules = rules_from_manifest(plan.manifest, c.plan, in.matrix, topology);
  rules.max_problems = 20;
  auto problems = verify(plan, in.matrix, rules);
  try {
    check_plan_hash(plan, "", "");
  } catch (const InputError& e) {
    problems.push_back("plan hash: " + e.problem());
  }
  const TrafficStats s = traffic_stats(in.matrix);
  if (c.json) {
    // schemas/verify.schema.json; the exit status is the same as without --json.
    nlohmann::ordered_json j;
    j["format"] = "commfit-verify";
    j["version"] = 1;
    j["plan"] = c.plan;
    j["matrix"] = c.matrix;
    j["verified"] = problems.empty();
    j["ranks"] = plan.manifest.ranks;
    j["phases"] = plan.manifest.phases;
    j["h"] = s.h;
    j["contention"] = to_string(rules.contention);
    if (rules.contention == Contention::bounded) j["concurrency"] = rules.per_port;
    j["memory_rule"] = rules.memory ? "checked" : "not applicable";
    j["problems"] = problems;
    std::puts(j.dump(1).c_str());
    return problems.empty() ? 0 : 1;
  }
  if (!problems.empty()) {
    for (const std::string& p : problems) std::fprintf(stderr, "commfit: error: %s: %s\n", c.plan.c_str(), p.c_str());
    std::fprintf(stderr, "commfit: %s does not verify against %s\n", c.plan.c_str(), c.matrix.c_str());
    return 1;
  }
  std::printf("commfit: %s verifies against %s: %d ranks, %u phases (h = %lld), contention rule %s, memory rule %s\n",
              c.plan.c_str(), c.matrix.c_str(), plan.manifest.ranks, plan.manifest.phases, static_cast<long long>(s.h),
              to_string(rules.contention), rules.memory ? "checked" : "not applicable");
  return 0;
}

}  // namespace

void add_verify_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<VerifyCommand>();
  CLI::App* sub = app.add_subcommand("verify", "Check a plan directory against its matrix with the verifier");
  add_matrix_argument(sub, c->matrix, c->input_format, "Matrix file the plan was made from");
  sub->add_option("PLAN", c->plan, "Plan directory or binary plan file (.cfp)")->required();
  sub->add_flag("--json", c->json, "Print the verdict as JSON (schemas/verify.schema.json); the exit status is the same");
  sub->callback([c, &run] { run = [c] { return run_verify(*c); }; });
}

}  // namespace commfit
