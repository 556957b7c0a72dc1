// Plan directory: names, round trip, strict reading, atomic replacement.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "passes/lower.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace commfit;
namespace fs = std::filesystem;

namespace {

std::string rank_parse_error(const std::string& text) {
  try {
    parse_rank_schedule(text, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("rank_file_names") {
  CHECK(rank_file_name(3, 64) == "rank-00003.json");
  CHECK(rank_file_name(99999, 100000) == "rank-99999.json");
  CHECK(rank_file_name(7, 100001) == "rank-000007.json");
  CHECK(rank_file_name(100000, 100001) == "rank-100000.json");
}

TEST_CASE("plan_dir_round_trip") {
  const CommMatrix m = gen_random_sparse(9, 0.5, 100000, 3, true);
  const Plan plan = make_plan(m, {});
  const fs::path dir = test::fresh_path("roundtrip.plan");
  write_plan_dir(plan, dir);
  const Plan back = read_plan_dir(dir);
  CHECK(manifest_json(back.manifest) == manifest_json(plan.manifest));
  REQUIRE(back.ranks.size() == plan.ranks.size());
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    CHECK(rank_schedule_json(back.ranks[r]) == rank_schedule_json(plan.ranks[r]));
    CHECK(back.ranks[r].steps == plan.ranks[r].steps);
  }
  // No temporary debris beside the plan.
  for (const auto& e : fs::directory_iterator(dir.parent_path()))
    CHECK(e.path().filename().string().find(".roundtrip.plan.") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("plan_dir_staged_steps_round_trip") {
  const CommMatrix m = make_matrix(3, {{0, 2, 100}});
  const Schedule s{3, 2, {{0, 0, 1, {0, 2, 0, 100}}, {1, 1, 2, {0, 2, 0, 100}}}, {}};
  const Plan plan = lower(s, m);
  const RankSchedule back = parse_rank_schedule(rank_schedule_json(plan.ranks[1]), "r1.json");
  CHECK(back.steps == plan.ranks[1].steps);
  CHECK(back.staging_bytes == 100);
}

// The request window (throttled plans): written only when set, read back, and refused when it is 1
// or beyond kMaxWindow, naming the field.
TEST_CASE("rank_schedule_request_window") {
  PlanOptions o;
  o.strategy = "throttled";
  o.max_outstanding = 8;
  const Plan plan = make_plan(gen_random_sparse(6, 0.6, 5000, 4, false), o);
  CHECK(plan.manifest.options["max_outstanding"] == 8);
  for (const RankSchedule& rs : plan.ranks) {
    CHECK(rs.max_outstanding == 8);
    const std::string text = rank_schedule_json(rs);
    CHECK(text.find("\"max_outstanding\": 8") != std::string::npos);
    CHECK(parse_rank_schedule(text, "r.json").max_outstanding == 8);
  }
  const Plan plain = make_plan(gen_random_sparse(6, 0.6, 5000, 4, false), {});
  CHECK(rank_schedule_json(plain.ranks[0]).find("max_outstanding") == std::string::npos);
  RankSchedule bad = plan.ranks[0];
  for (std::uint32_t w : {1u, kMaxWindow + 1}) {
    bad.max_outstanding = w;
    CHECK(rank_parse_error(rank_schedule_json(bad)).starts_with("r.json: /max_outstanding: "));
  }
}

TEST_CASE("plan_dir_replaces_only_plans") {
  const CommMatrix m = gen_random_sparse(4, 0.5, 1000, 1, false);
  const fs::path dir = test::fresh_path("replace.plan");
  fs::create_directories(dir);
  std::ofstream(dir / "precious.txt") << "user data";
  CHECK_THROWS_AS(write_plan_dir(make_plan(m, {}), dir), UsageError);
  CHECK(fs::exists(dir / "precious.txt"));
  fs::remove_all(dir);
  write_plan_dir(make_plan(m, {}), dir);
  PlanOptions rs;
  rs.algorithm = "rs_n";
  write_plan_dir(make_plan(m, rs), dir);   // an older plan is replaced
  CHECK(read_manifest(dir).options["algorithm"] == "rs_n");
  fs::remove_all(dir);
}

TEST_CASE("rank_schedule_strict_reading") {
  const std::string head = R"({"format": "commfit-rank-schedule", "version": 1, "rank": 1, "ranks": 4, "phases": 2,
    "matrix_fingerprint": "sha256:db2dde29debd4e52ae212bc21ed9d28859f1eb928aa9fcf7ced738fb6a4931f5", "staging_bytes": 0,
    "sends": [[0, 50]], "recvs": [[0, 100]], "steps": [)";
  CHECK(rank_parse_error(head + "]}") == "no error");
  CHECK(rank_parse_error(head + R"({"phase": 0, "op": "jump", "peer": 0, "src": 0, "dst": 1, "offset": 0, "bytes": 100, "buffer": "recv"}]})") ==
        "r.json: /steps/0/op: expected \"send\", \"recv\" or \"copy\", got \"jump\"");
  CHECK(rank_parse_error(head + R"({"phase": 2, "op": "recv", "peer": 0, "src": 0, "dst": 1, "offset": 0, "bytes": 100, "buffer": "recv"}]})") ==
        "r.json: /steps/0/phase: phase 2 is not below the phase count 2");
  CHECK(rank_parse_error(head + R"({"phase": 0, "op": "recv", "peer": 0, "src": 0, "dst": 1, "offset": 0, "bytes": 100, "buffer": "stage"}]})") ==
        "r.json: /steps/0: missing required field \"stage_offset\" (buffer is \"stage\")");
  CHECK(rank_parse_error(head + R"({"phase": 0, "op": "recv", "peer": 9, "src": 0, "dst": 1, "offset": 0, "bytes": 100, "buffer": "recv"}]})") ==
        "r.json: /steps/0/peer: 9 is out of range (at most 3)");
  CHECK(rank_parse_error(head + R"({"phase": 0, "op": "recv", "peer": 0, "src": 0, "dst": 1, "offset": 0, "bytes": 100, "buffer": "recv", "x": 1}]})") ==
        "r.json: /steps/0/x: unknown field");
  CHECK(rank_parse_error(R"({"format": "commfit-rank-schedule", "version": 2})") == "r.json: /version: unsupported version 2 (this commfit reads version 1)");
  CHECK(rank_parse_error(head).starts_with("r.json: byte "));
}
