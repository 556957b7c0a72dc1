// Every fixture through both the C++ loaders and the JSON Schemas of schemas/:
// good fixtures must pass both, bad fixtures must fail both, except the listed loader-only faults
// (rules a schema cannot state: a value bounded by another field, duplicates, lengths tied to
// `ranks`, limits of the parser). Also: the examples, the Matrix Market fixtures, the writers'
// output, and the strictness of the schemas themselves.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "backends/plan_dir.h"
#include "ir/comm_matrix.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/machine_file.h"

#include <doctest/doctest.h>

#include "support/run_command.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using commfit::test::source_dir;

using commfit::test::slurp;

// Files of `dir` whose name ends with `ext` and (when given) starts with `prefix`, sorted.
std::vector<fs::path> files_in(const fs::path& dir, const std::string& ext, const std::string& prefix = "") {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ext && name.rfind(prefix, 0) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A draft-07 schema from schemas/, checked with valijson.
class Schema {
 public:
  explicit Schema(const std::string& name) {
    const json doc = json::parse(slurp(source_dir() / "schemas" / name));
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, schema_);
  }

  // nullopt when `text` is valid; otherwise the first problem (unparseable JSON is invalid).
  std::optional<std::string> check(const std::string& text) const {
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return "not JSON";
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    if (validator.validate(schema_, adapter, &results)) return std::nullopt;
    std::string why;
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
      std::string at;
      for (const auto& c : e.context) at += c;
      why += at + ": " + e.description + "; ";
    }
    return why.empty() ? std::string("invalid") : why;
  }

 private:
  valijson::Schema schema_;
};

const Schema& matrix_schema() { static const Schema s("matrix.schema.json"); return s; }
const Schema& manifest_schema() { static const Schema s("plan-manifest.schema.json"); return s; }
const Schema& rank_schema() { static const Schema s("rank-schedule.schema.json"); return s; }
const Schema& stats_schema() { static const Schema s("stats.schema.json"); return s; }
const Schema& compare_schema() { static const Schema s("compare.schema.json"); return s; }
const Schema& verify_schema() { static const Schema s("verify.schema.json"); return s; }
const Schema& plan_summary_schema() { static const Schema s("plan-summary.schema.json"); return s; }
const Schema& show_schema() { static const Schema s("show.schema.json"); return s; }
const Schema& machine_schema() { static const Schema s("machine.schema.json"); return s; }
const Schema& bound_schema() { static const Schema s("bound.schema.json"); return s; }

// nullopt when the loader accepts `text`; otherwise its message. Only InputError is a verdict:
// anything else escaping a loader is a bug and fails the test.
std::optional<std::string> load_with(const std::function<void(const std::string&, const std::string&)>& loader,
                                     const std::string& text, const std::string& file) {
  try {
    loader(text, file);
    return std::nullopt;
  } catch (const commfit::InputError& e) {
    return std::string(e.what());
  }
}

void load_matrix_json(const std::string& text, const std::string& file) { commfit::parse_matrix_json(text, file); }
void load_matrix_market(const std::string& text, const std::string& file) { commfit::parse_matrix_market(text, file); }
void load_manifest(const std::string& text, const std::string& file) { commfit::parse_manifest(text, file); }
void load_rank(const std::string& text, const std::string& file) { commfit::parse_rank_schedule(text, file); }
void load_machine(const std::string& text, const std::string& file) { commfit::parse_machine_file(text, file); }

// Schema-valid matrix fixtures the loader must reject, and why no schema can say so.
const std::map<std::string, std::string> kMatrixLoaderOnly = {
    {"rank_out_of_range.json", "a rank must be < ranks: the bound is another field's value"},
    {"duplicate_pair.json", "(src, dst) pairs must be unique across triplets: uniqueItems compares whole triplets"},
    {"dense_wrong_shape.json", "dense must have `ranks` rows: the length is another field's value"},
    {"dense_row_wrong_length.json", "each dense row must have `ranks` entries: the length is another field's value"},
    {"memory_wrong_length.json", "a memory array must have `ranks` entries: the length is another field's value"},
    {"row_total_too_large.json", "a rank's outgoing total must be at most 2^63 bytes: a sum over triplets"},
    {"column_total_too_large.json", "a rank's incoming total must be at most 2^63 bytes: a sum over triplets"},
    {"matrix_total_too_large.json", "the matrix's total must be at most 2^63 bytes: a sum over every triplet"},
    {"duplicate_field.json", "a field given twice: the JSON parser keeps the last one, the schema never sees both"},
    {"ranks_over_limit.json", "more ranks than kMaxRanks (2^24): a plan needs memory and a file per rank (found by fuzz_matrix_json)"},
    {"too_deep.json", "nesting deeper than the loader's kMaxJsonDepth (64) inside the free-form topology object"},
};

// Schema-valid machine fixtures the loader must reject, and why.
const std::map<std::string, std::string> kMachineLoaderOnly = {
    {"overhead_above_half_tau.json", "overhead_s at most tau_s / 2: the bound is another field's value"},
    {"ib_factors_negative.json", "the factors must be positive numbers: a pattern cannot read numbers in a string"},
    {"ib_factors_with_flow.json", "ib_factors only with network ib: a rule between two fields"},
    {"duplicate_field.json", "a field given twice: the JSON parser keeps the last one, the schema never sees both"},
    {"too_deep.json", "nesting deeper than the loader's kMaxJsonDepth (64) inside the free-form calibration object"},
};

// Schema-valid plan fixtures the loaders must reject, and why.
const std::map<std::string, std::string> kPlanLoaderOnly = {
    {"rank_rank_out_of_range.json", "rank must be < ranks: the bound is another field's value"},
    {"rank_peer_out_of_range.json", "a step's peer and dst must be < ranks: the bound is another field's value"},
    {"rank_phase_out_of_range.json", "a step's phase must be < phases: the bound is another field's value"},
    {"rank_sends_out_of_order.json", "sends are listed in increasing peer order: an order between array items"},
    {"rank_send_order_missing_peer.json", "send_order names exactly the peers of the send steps: a set drawn from another field"},
    {"rank_stage_past_staging.json", "a staged piece must lie inside staging_bytes: a sum bounded by another field"},
};

struct Fixture {
  fs::path path;
  std::string name;   // file name
  std::string file;   // path relative to the repository, as a user would type it
  std::string text;
};

Fixture fixture(const fs::path& p) {
  return {p, p.filename().string(), fs::relative(p, source_dir()).generic_string(), slurp(p)};
}

// Good fixtures: both accept. Bad fixtures: the loader rejects; the schema rejects too unless
// the fixture is listed as loader-only, and a listed one must be schema-valid (the list can't rot).
void check_fixtures(const std::vector<fs::path>& good, const std::vector<fs::path>& bad,
                    const std::map<std::string, std::string>& loader_only,
                    const std::function<const Schema&(const std::string&)>& schema_for,
                    const std::function<void(const std::string&, const std::string&)>& loader) {
  for (const fs::path& p : good) {
    const Fixture f = fixture(p);
    INFO("good fixture ", f.file);
    const auto by_loader = load_with(loader, f.text, f.file);
    const auto by_schema = schema_for(f.name).check(f.text);
    CHECK_MESSAGE(!by_loader, "loader rejects it: " << by_loader.value_or(""));
    CHECK_MESSAGE(!by_schema, "schema rejects it: " << by_schema.value_or(""));
  }
  for (const fs::path& p : bad) {
    const Fixture f = fixture(p);
    INFO("bad fixture ", f.file);
    const auto by_loader = load_with(loader, f.text, f.file);
    const auto by_schema = schema_for(f.name).check(f.text);
    CHECK_MESSAGE(by_loader.has_value(), "the loader accepts it");
    if (by_loader) {
      // The message names the file, then a place, then the problem.
      CHECK_MESSAGE(by_loader->rfind(f.file + ": ", 0) == 0, "message does not start with the file: " << *by_loader);
    }
    if (loader_only.count(f.name)) {
      CHECK_MESSAGE(!by_schema, "listed as loader-only (" << loader_only.at(f.name)
                                    << ") but the schema rejects it: " << by_schema.value_or(""));
    } else {
      CHECK_MESSAGE(by_schema.has_value(), "the schema accepts it: add the rule to the schema, or list the "
                                           "fixture as loader-only with the reason no schema can state it");
    }
  }
}

// Every object schema that lists properties forbids others (strict schemas), except one that
// says why in a "$comment" beginning "free-form" (a manifest's options: the contract's typed keys
// beside the strategy's provenance).
void check_strict(const json& node, const std::string& where, int& objects) {
  if (node.is_object()) {
    if (node.contains("properties")) {
      ++objects;
      const std::string at = "schema object at " + where;
      INFO(at);
      CHECK(node.contains("additionalProperties"));
      const bool free_form = node.contains("$comment") && node.at("$comment").is_string() &&
                             node.at("$comment").get<std::string>().starts_with("free-form");
      if (node.contains("additionalProperties")) CHECK(node.at("additionalProperties") == json(!free_form ? false : true));
    }
    for (const auto& [k, v] : node.items()) {
      // "if", "then" and "else" subschemas constrain an object described elsewhere; they are not
      // object schemas of their own.
      if (k != "if" && k != "then" && k != "else") check_strict(v, where + "/" + k, objects);
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) check_strict(node[i], where + "/" + std::to_string(i), objects);
  }
}

}  // namespace

TEST_CASE("schemas are strict draft-07 schemas that valijson accepts") {
  for (const char* name : {"matrix.schema.json", "plan-manifest.schema.json", "rank-schedule.schema.json", "stats.schema.json",
                           "compare.schema.json", "verify.schema.json", "plan-summary.schema.json", "show.schema.json",
                           "machine.schema.json", "bound.schema.json"}) {
    INFO(name);
    const json doc = json::parse(slurp(source_dir() / "schemas" / name));
    CHECK(doc.at("$schema") == "http://json-schema.org/draft-07/schema#");
    CHECK(doc.at("additionalProperties") == json(false));
    int objects = 0;
    check_strict(doc, "", objects);
    CHECK(objects >= 1);
    CHECK_NOTHROW(Schema{name});
  }
}

TEST_CASE("matrix fixtures: the loader and matrix.schema.json give the same verdict") {
  const fs::path dir = source_dir() / "tests/fixtures/matrix";
  const auto good = files_in(dir / "good", ".json");
  const auto bad = files_in(dir / "bad", ".json");
  REQUIRE(good.size() >= 10);
  REQUIRE(bad.size() >= 30);
  check_fixtures(good, bad, kMatrixLoaderOnly, [](const std::string&) -> const Schema& { return matrix_schema(); },
                 load_matrix_json);
  for (const auto& [name_, why_] : kMatrixLoaderOnly) {
    const auto& name = name_; const auto& why = why_;
    INFO(name, ": ", why);
    CHECK(fs::exists(dir / "bad" / name));
  }
}

TEST_CASE("machine fixtures: the loader and machine.schema.json give the same verdict") {
  const fs::path dir = source_dir() / "tests/fixtures/machine";
  const auto good = files_in(dir / "good", ".json");
  const auto bad = files_in(dir / "bad", ".json");
  REQUIRE(good.size() >= 3);
  REQUIRE(bad.size() >= 25);
  check_fixtures(good, bad, kMachineLoaderOnly, [](const std::string&) -> const Schema& { return machine_schema(); }, load_machine);
  for (const auto& [name_, why_] : kMachineLoaderOnly) {
    const auto& name = name_; const auto& why = why_;
    INFO(name, ": ", why);
    CHECK(fs::exists(dir / "bad" / name));
  }
}

TEST_CASE("matrix fixtures: what the good ones hold") {
  const fs::path dir = source_dir() / "tests/fixtures/matrix/good";
  auto load = [&](const char* name) { return commfit::parse_matrix_json(slurp(dir / name), name).matrix; };
  const auto sparse = load("sparse_small.json");
  CHECK(sparse.ranks == 4);
  CHECK(sparse.nnz() == 6);
  CHECK(sparse.at(3, 2) == 8192);
  const auto dense = load("dense_small.json");
  CHECK(dense.nnz() == 5);   // zeros are not messages
  CHECK(dense.at(2, 1) == 6);
  CHECK(dense.at(1, 2) == 0);
  CHECK(load("zero_entries_ignored.json").nnz() == 2);
  CHECK(load("no_messages.json").nnz() == 0);
  CHECK(load("single_rank.json").at(0, 0) == 4096);
  CHECK(load("max_size.json").at(0, 1) == commfit::kMaxMessageBytes);
  CHECK(load("with_memory.json").memory == std::vector<commfit::Bytes>{1000, 2000, 0, 8000});
  CHECK(load("memory_scalar.json").memory == std::vector<commfit::Bytes>{150, 150, 150});
  const auto floats = load("whole_number_floats.json");
  CHECK(floats.ranks == 3);
  CHECK(floats.at(1, 2) == 1000);
  CHECK(floats.at(2, 0) == 25);
  const auto named = load("self_messages.json");
  CHECK(named.name == "self_messages");
  CHECK(commfit::traffic_stats(named).local_copies == 3);
  const auto file = commfit::parse_matrix_json(slurp(dir / "with_cost_and_topology.json"), "x.json");
  CHECK(file.topology == "full");
  CHECK(file.cost.at("tau_s").get<double>() == doctest::Approx(1.5e-6));
}

TEST_CASE("Matrix Market fixtures: good ones load and bad ones are rejected with file and line") {
  const fs::path dir = source_dir() / "tests/fixtures/mtx";
  const auto good = files_in(dir / "good", ".mtx");
  const auto bad = files_in(dir / "bad", ".mtx");
  REQUIRE(good.size() >= 4);
  REQUIRE(bad.size() >= 12);
  for (const fs::path& p : good) {
    const Fixture f = fixture(p);
    INFO("good fixture ", f.file);
    const auto by_loader = load_with(load_matrix_market, f.text, f.file);
    CHECK_MESSAGE(!by_loader, "loader rejects it: " << by_loader.value_or(""));
  }
  for (const fs::path& p : bad) {
    const Fixture f = fixture(p);
    INFO("bad fixture ", f.file);
    const auto by_loader = load_with(load_matrix_market, f.text, f.file);
    REQUIRE_MESSAGE(by_loader.has_value(), "the loader accepts it");
    CHECK_MESSAGE(by_loader->rfind(f.file + ": line ", 0) == 0, "message does not name file and line: " << *by_loader);
  }
  const auto real = commfit::parse_matrix_market(slurp(dir / "good/real_rounded_up.mtx"), "r.mtx").matrix;
  CHECK(real.at(0, 1) == 1);    // 0.5 rounds up
  CHECK(real.at(1, 2) == 11);   // 10.25 rounds up
  CHECK(real.at(2, 0) == 3);
  const auto ints = commfit::parse_matrix_market(slurp(dir / "good/integer_general.mtx"), "i.mtx").matrix;
  CHECK(ints.ranks == 4);
  CHECK(ints.at(0, 1) == 1024);   // 1-based (1, 2) is rank 0 -> rank 1
  CHECK(ints.at(3, 2) == 8192);
}

TEST_CASE("examples: every matrix passes the schema and the loader") {
  const auto jsons = files_in(source_dir() / "examples", ".json");
  REQUIRE(jsons.size() >= 5);
  for (const fs::path& p : jsons) {
    const Fixture f = fixture(p);
    INFO(f.file);
    const auto by_schema = matrix_schema().check(f.text);
    CHECK_MESSAGE(!by_schema, "schema rejects it: " << by_schema.value_or(""));
    std::optional<commfit::MatrixFile> m;
    CHECK_NOTHROW(m = commfit::parse_matrix_json(f.text, f.file));
    if (!m) continue;
    CHECK(m->matrix.nnz() > 0);
    CHECK_MESSAGE(m->matrix.name == p.stem().string(), "\"name\" should match the file name");
    CHECK_MESSAGE(!m->matrix.description.empty(), "every example says what it is");
  }
  for (const fs::path& p : files_in(source_dir() / "examples", ".mtx")) {
    const Fixture f = fixture(p);
    INFO(f.file);
    std::optional<commfit::MatrixFile> mtx;
    CHECK_NOTHROW(mtx = commfit::parse_matrix_market(f.text, f.file));
    // An .mtx example is the same matrix as the .json of the same name.
    const fs::path twin = fs::path(p).replace_extension(".json");
    REQUIRE(fs::exists(twin));
    const auto js = commfit::parse_matrix_json(slurp(twin), twin.string());
    if (mtx) CHECK(commfit::matrix_fingerprint(mtx->matrix) == commfit::matrix_fingerprint(js.matrix));
  }
}

TEST_CASE("examples: the Transportation paper's figures keep their margins") {
  // Figure 1: r_i = c_j = 10 on 8 ranks; Figure 9: r_i = c_j = 17 on 4 ranks (diagonal included).
  for (auto [name_, p, t] : {std::tuple{"transport_fig1.json", 8, 10}, std::tuple{"transport_fig9.json", 4, 17}}) {
    const auto& name = name_;
    INFO(name);
    const auto m = commfit::parse_matrix_json(slurp(source_dir() / "examples" / name), name).matrix;
    REQUIRE(m.ranks == p);
    std::vector<commfit::Bytes> r(p, 0), c(p, 0);
    m.for_each([&](commfit::Rank i, commfit::Rank j, commfit::Bytes b) { r[i] += b; c[j] += b; });
    for (int i = 0; i < p; ++i) {
      CHECK(r[i] == commfit::Bytes(t));
      CHECK(c[i] == commfit::Bytes(t));
    }
  }
}

TEST_CASE("plan fixtures: the loaders and the plan schemas give the same verdict") {
  const fs::path dir = source_dir() / "tests/fixtures/plan";
  auto schema_for = [](const std::string& name) -> const Schema& {
    return name.rfind("manifest_", 0) == 0 ? manifest_schema() : rank_schema();
  };
  auto loader = [](const std::string& text, const std::string& file) {
    if (fs::path(file).filename().string().rfind("manifest_", 0) == 0) load_manifest(text, file);
    else load_rank(text, file);
  };
  const auto good = files_in(dir / "good", ".json");
  const auto bad = files_in(dir / "bad", ".json");
  REQUIRE(files_in(dir / "good", ".json", "manifest_").size() >= 1);
  REQUIRE(files_in(dir / "good", ".json", "rank_").size() >= 3);
  REQUIRE(bad.size() >= 20);
  for (const fs::path& p : files_in(dir / "good", ".json")) {
    INFO(p);
    const std::string n = p.filename().string();
    CHECK((n.rfind("manifest_", 0) == 0 || n.rfind("rank_", 0) == 0));
  }
  check_fixtures(good, bad, kPlanLoaderOnly, schema_for, loader);
  for (const auto& [name_, why_] : kPlanLoaderOnly) {
    const auto& name = name_; const auto& why = why_;
    INFO(name, ": ", why);
    CHECK(fs::exists(dir / "bad" / name));
  }
}

TEST_CASE("plan writers: what they write passes the schemas and reads back the same") {
  const fs::path dir = source_dir() / "tests/fixtures/plan/good";
  for (const fs::path& p : files_in(dir, ".json", "manifest_")) {
    INFO(p);
    const commfit::Manifest m = commfit::parse_manifest(slurp(p), p.string());
    const std::string text = commfit::manifest_json(m);
    const auto by_schema = manifest_schema().check(text);
    CHECK_MESSAGE(!by_schema, "written manifest fails the schema: " << by_schema.value_or("") << "\n" << text);
    const commfit::Manifest back = commfit::parse_manifest(text, "written");
    CHECK(back.ranks == m.ranks);
    CHECK(back.phases == m.phases);
    CHECK(back.strategy == m.strategy);
    CHECK(back.options == m.options);
    CHECK(back.matrix_fingerprint == m.matrix_fingerprint);
    CHECK(back.staging_bytes_max == m.staging_bytes_max);
    CHECK(back.planner == m.planner);
    CHECK(commfit::manifest_json(back) == text);
  }
  for (const fs::path& p : files_in(dir, ".json", "rank_")) {
    INFO(p);
    const commfit::RankSchedule r = commfit::parse_rank_schedule(slurp(p), p.string());
    const std::string text = commfit::rank_schedule_json(r);
    const auto by_schema = rank_schema().check(text);
    CHECK_MESSAGE(!by_schema, "written rank schedule fails the schema: " << by_schema.value_or("") << "\n" << text);
    const commfit::RankSchedule back = commfit::parse_rank_schedule(text, "written");
    CHECK(back.rank == r.rank);
    CHECK(back.ranks == r.ranks);
    CHECK(back.phases == r.phases);
    CHECK(back.staging_bytes == r.staging_bytes);
    CHECK(back.sends == r.sends);
    CHECK(back.recvs == r.recvs);
    CHECK(back.steps == r.steps);
    CHECK(back.send_order == r.send_order);
  }
}

TEST_CASE("plans commfit writes for the examples pass the plan schemas") {
  const fs::path tmp = fs::temp_directory_path() / ("commfit-schema-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  for (const fs::path& p : files_in(source_dir() / "examples", ".json")) {
    INFO(p);
    const fs::path out = tmp / (p.stem().string() + ".plan");
    const std::string cmd = std::string("\"") + COMMFIT_EXE + "\" plan --quiet \"" + p.string() + "\" -o \"" +
                            out.string() + "\" >\"" + (tmp / "log").string() + "\" 2>&1";
    const int rc = std::system(cmd.c_str());
    CHECK_MESSAGE(rc == 0, "commfit plan failed: " << slurp(tmp / "log"));
    if (rc != 0) continue;
    const std::string manifest = slurp(out / "manifest.json");
    const auto by_schema = manifest_schema().check(manifest);
    CHECK_MESSAGE(!by_schema, "manifest.json fails the schema: " << by_schema.value_or(""));
    const commfit::Manifest m = commfit::parse_manifest(manifest, (out / "manifest.json").string());
    int rank_files = 0;
    for (const fs::path& r : files_in(out, ".json", "rank-")) {
      INFO(r);
      ++rank_files;
      const auto why = rank_schema().check(slurp(r));
      CHECK_MESSAGE(!why, "fails the schema: " << why.value_or(""));
    }
    CHECK(rank_files == m.ranks);
  }
  fs::remove_all(tmp);
}

// `stats --json` and `compare --json` on every example, with and without a topology
// and memory limits, pass their schemas and say what the text output says.
TEST_CASE("stats and compare --json pass their schemas") {
  const fs::path tmp = fs::temp_directory_path() / ("commfit-json-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  auto run = [&](const std::string& args) {
    const std::string cmd = std::string("\"") + COMMFIT_EXE + "\" " + args + " >\"" + (tmp / "out").string() + "\" 2>\"" + (tmp / "err").string() + "\"";
    const int rc = std::system(cmd.c_str());
    CHECK_MESSAGE(rc == 0, args << ": " << slurp(tmp / "err"));
    return slurp(tmp / "out");
  };
  int checked = 0;
  for (const fs::path& p : files_in(source_dir() / "examples", ".json")) {
    INFO(p);
    const std::string stats = run("stats --json \"" + p.string() + "\"");
    const auto why = stats_schema().check(stats);
    CHECK_MESSAGE(!why, "stats --json fails the schema: " << why.value_or(""));
    const json j = json::parse(stats);
    const commfit::CommMatrix m = commfit::read_matrix(p).matrix;
    CHECK(j.at("ranks") == m.ranks);
    CHECK(j.at("h") == commfit::traffic_stats(m).h);
    CHECK(j.at("matrix").at("fingerprint") == commfit::matrix_fingerprint(m));
    // bound --json: the schema, direct >= relaying, and the direct bound is compare's lower_bound_s.
    const std::string ring = " --topology torus:" + std::to_string(m.ranks);
    for (const std::string& extra : {std::string(), std::string(" --network ib --window 25000"), ring, ring + " --network ib --window 25000 --link-latency 2.5e-7",
                                     std::string(" --topology full+node2")}) {
      const std::string bound = run("bound --json \"" + p.string() + "\"" + extra);
      const auto bad = bound_schema().check(bound);
      CHECK_MESSAGE(!bad, "bound --json" << extra << " fails the schema: " << bad.value_or(""));
      if (bad) continue;
      const json b = json::parse(bound).at("bound");
      CHECK(b.at("direct_s").get<double>() >= b.at("relay_s").get<double>());
      CHECK(b.at("relay_s").get<double>() > 0);
    }
    if (m.ranks > 64) continue;   // compare plans every candidate: the small examples suffice
    for (const std::string extra : {"", " --network ib", " --topology full+node2"}) {
      const std::string cmp = run("compare --json \"" + p.string() + "\"" + extra);
      const auto bad = compare_schema().check(cmp);
      CHECK_MESSAGE(!bad, "compare --json" << extra << " fails the schema: " << bad.value_or(""));
      const json c = json::parse(cmp);
      CHECK(c.at("candidates").size() >= 1);
      if (c.contains("chosen")) {
        // The chosen candidate is the cheapest planned one, as auto chooses.
        const std::string chosen = c.at("chosen");
        double best = 1e300;
        for (const json& r : c.at("candidates"))
          if (r.contains("estimate_s") && !r.contains("simulated")) best = std::min(best, r.at("estimate_s").get<double>());
        for (const json& r : c.at("candidates"))
          if (r.at("name") == chosen && !r.contains("simulated")) CHECK(r.at("estimate_s").get<double>() <= best * (1 + 1e-9));
      }
      ++checked;
    }
  }
  CHECK(checked >= 6);
  fs::remove_all(tmp);
}

// `verify --json`: a good plan and a broken one, each through the schema, with the exit status of
// the text form.
TEST_CASE("plan --json and verify --json pass their schemas, for good and broken plans") {
  const fs::path tmp = fs::temp_directory_path() / ("commfit-vjson-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string m = (source_dir() / "examples/stencil2d_16.json").string(), plan = (tmp / "s.plan").string();
  auto run = [&](const std::string& args) {
    const std::string cmd = std::string("\"") + COMMFIT_EXE + "\" " + args + " >\"" + (tmp / "out").string() + "\" 2>/dev/null";
    const int raw = std::system(cmd.c_str());
    return std::pair{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(tmp / "out")};
  };
  for (const char* strategy : {"direct", "bounded --concurrency 2", "memory --memory 1MiB", "auto"}) {
    INFO(strategy);
    // plan --json: the summary's schema, and its manifest the manifest schema's, equal to the file.
    const auto [planned, summary] = run(std::string("plan --json ") + m + " --strategy " + strategy + " -o " + plan);
    REQUIRE(planned == 0);
    const auto bad = plan_summary_schema().check(summary);
    CHECK_MESSAGE(!bad, "plan --json fails the schema: " << bad.value_or(""));
    const json sj = json::parse(summary);
    CHECK(!manifest_schema().check(sj.at("manifest").dump()));
    CHECK(sj.at("manifest") == json::parse(slurp(tmp / "s.plan/manifest.json")));
    CHECK(sj.at("form") == "directory");
    const auto [rc, out] = run("verify --json " + m + " " + plan);
    CHECK(rc == 0);
    const auto why = verify_schema().check(out);
    CHECK_MESSAGE(!why, "fails the schema: " << why.value_or(""));
    CHECK(json::parse(out).at("verified") == true);
    // show --json, whole and one rank: the schema, the manifest's and rank file's schemas, and
    // the transfers are the plan's send steps.
    const auto [shown, whole] = run("show --json " + plan);
    CHECK(shown == 0);
    const auto show_bad = show_schema().check(whole);
    CHECK_MESSAGE(!show_bad, "show --json fails the schema: " << show_bad.value_or(""));
    const json w = json::parse(whole);
    CHECK(w.at("manifest") == json::parse(slurp(tmp / "s.plan/manifest.json")));
    std::size_t sends = 0, listed = 0;
    for (const auto& e : fs::directory_iterator(tmp / "s.plan"))
      if (e.path().filename().string().rfind("rank-", 0) == 0) {
        const json rank = json::parse(slurp(e.path()));
        for (const json& s : rank.at("steps")) sends += s.at("op") == "send";
      }
    for (const json& ph : w.at("phases")) listed += ph.at("transfers").size();
    CHECK(listed == sends);
    const auto [one_rc, one] = run("show --json --rank 5 " + plan);
    CHECK(one_rc == 0);
    CHECK(!show_schema().check(one));
    CHECK(!rank_schema().check(json::parse(one).at("rank").dump()));
    CHECK(json::parse(one).at("rank") == json::parse(slurp(tmp / "s.plan/rank-00005.json")));
    CHECK(run("show --json --rank 16 " + plan) == std::pair{2, std::string()});
  }
  // A receive from the wrong peer breaks rule 3: verified false, the problem listed, exit 1.
  REQUIRE(run("plan -q " + m + " -o " + plan).first == 0);
  const fs::path f = tmp / "s.plan" / "rank-00005.json";
  std::string text = slurp(f);
  const std::string from4 = "\"op\": \"recv\", \"peer\": 4,";
  REQUIRE(text.find(from4) != std::string::npos);
  text.replace(text.find(from4), from4.size(), "\"op\": \"recv\", \"peer\": 6,");
  std::ofstream(f, std::ios::binary) << text;
  const auto [rc, out] = run("verify --json " + m + " " + plan);
  CHECK(rc == 1);
  const auto why = verify_schema().check(out);
  CHECK_MESSAGE(!why, "fails the schema: " << why.value_or(""));
  const json j = json::parse(out);
  CHECK(j.at("verified") == false);
  REQUIRE(!j.at("problems").empty());
  CHECK(j.at("problems").dump().find("rule 3: receive without a matching send: phase 0, 6 -> 5") != std::string::npos);
  fs::remove_all(tmp);
}

#undef VALIJSON_USE_EXCEPTIONS   // valijson configuration, for this file only
