// The matrix readers: the JSON format of docs/FORMAT.md §1 and Matrix Market. Fixture files and the
// schema agreement live in test_schemas.cpp; these pin the parser's behaviour in code.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace commfit;

namespace {

std::string error_of(const std::string& text, const std::string& file = "m.json") {
  try {
    if (file.ends_with(".mtx")) parse_matrix_market(text, file);
    else parse_matrix_json(text, file);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "no error";
}

const std::string kTiny = R"({"format": "commfit-matrix", "version": 1, "ranks": 4, "name": "tiny",
 "messages": [[0,1,100],[1,0,50],[0,2,30],[2,3,4000],[3,0,7],[1,1,9],[3,2,12]]})";

}  // namespace

TEST_CASE("matrix_json_sparse") {
  const MatrixFile f = parse_matrix_json(kTiny, "tiny.json");
  const CommMatrix& m = f.matrix;
  CHECK(m.ranks == 4);
  CHECK(m.nnz() == 7);
  CHECK(m.name == "tiny");
  CHECK(m.at(2, 3) == 4000);
  CHECK(m.at(3, 1) == 0);
  const TrafficStats s = traffic_stats(m);
  CHECK(s.h == 2);
  CHECK(s.t == 4000);
  CHECK(s.local_copies == 1);
  CHECK(s.messages == 6);
  // sha256 of "ranks 4\n0 1 100\n0 2 30\n1 0 50\n1 1 9\n2 3 4000\n3 0 7\n3 2 12\n" (sha256sum).
  CHECK(matrix_fingerprint(m) == "sha256:db2dde29debd4e52ae212bc21ed9d28859f1eb928aa9fcf7ced738fb6a4931f5");
}

TEST_CASE("matrix_json_dense_equals_sparse") {
  const std::string dense = R"({"format": "commfit-matrix", "version": 1, "ranks": 4, "dense":
    [[0,100,30,0],[50,9,0,0],[0,0,0,4000],[7,0,12,0]]})";
  const MatrixFile a = parse_matrix_json(dense, "d.json");
  const MatrixFile b = parse_matrix_json(kTiny, "tiny.json");
  CHECK(messages_of(a.matrix) == messages_of(b.matrix));
  CHECK(matrix_fingerprint(a.matrix) == matrix_fingerprint(b.matrix));
  CHECK(a.matrix.name == "d");   // the file's stem when "name" is absent
}

TEST_CASE("matrix_json_optional_fields") {
  const MatrixFile f = parse_matrix_json(R"({"format": "commfit-matrix", "version": 1, "ranks": 2,
    "messages": [], "memory": [10, 20], "cost": {"tau_s": 1e-6}, "topology": "full",
    "description": "empty"})", "o.json");
  CHECK(f.matrix.nnz() == 0);
  CHECK(f.matrix.memory == std::vector<Bytes>{10, 20});
  CHECK(f.cost["tau_s"].get<double>() == doctest::Approx(1e-6));
  CHECK(f.topology == "full");
  const MatrixFile g = parse_matrix_json(R"({"format": "commfit-matrix", "version": 1, "ranks": 3,
    "messages": [[0, 1, 0]], "memory": 5})", "o.json");
  CHECK(g.matrix.nnz() == 0);   // zero entries are ignored
  CHECK(g.matrix.memory == std::vector<Bytes>{5, 5, 5});
  // Integral numbers written with an exponent are integers (as in JSON Schema).
  CHECK(parse_matrix_json(R"({"format": "commfit-matrix", "version": 1, "ranks": 2, "messages": [[0, 1, 1e3]]})", "e.json").matrix.at(0, 1) == 1000);
}

TEST_CASE("matrix_json_errors") {
  const std::string head = R"({"format": "commfit-matrix", "version": 1, "ranks": 4, )";
  CHECK(error_of(head + R"("messages": [[0, 4, 1]]})") == "m.json: /messages/0/1: dst rank 4 is out of range (ranks = 4)");
  CHECK(error_of(head + R"("messages": [[0, 1, -3]]})") == "m.json: /messages/0/2: negative size -3");
  CHECK(error_of(head + R"("messages": [[0, 1, 2.5]]})") == "m.json: /messages/0/2: fractional size 2.5 (sizes are whole bytes)");
  // Ranks are integers in the text; "-0" is 0, not "negative size 0".
  CHECK(error_of(head + R"("messages": [[0, 1.0, 3]]})") == "m.json: /messages/0/1: dst rank 1.0 is a real number: write it as an integer (1)");
  CHECK(error_of(head + R"("messages": [[1e0, 2, 3]]})") == "m.json: /messages/0/0: src rank 1.0 is a real number: write it as an integer (1)");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 1, "ranks": 4.0, "messages": []})") ==
        "m.json: /ranks: rank count 4.0 is a real number: write it as an integer (4)");
  CHECK(error_of(head + R"("messages": [[0, 1, -1]]})") == "m.json: /messages/0/2: negative size -1");
  CHECK(parse_matrix_json(head + R"("messages": [[0, 1, -0], [-0, 2, 5]]})", "z.json").matrix.nnz() == 1);
  CHECK(parse_matrix_json(head + R"("messages": [[0, 1, -0], [-0, 2, 5]]})", "z.json").matrix.at(0, 2) == 5);
  CHECK(error_of(head + R"("messages": [[0, 1, 1], [2, 3, 1], [0, 1, 5]]})") ==
        "m.json: /messages/2: duplicate pair (0, 1), first given at /messages/0");
  CHECK(error_of(head + R"("messages": [[0, 1]]})") == "m.json: /messages/0: a message is [src, dst, bytes]: expected 3 numbers, got 2");
  CHECK(error_of(head + R"("messages": [[0, "1", 1]]})") == "m.json: /messages/0/1: expected a non-negative integer dst rank, got a string");
  CHECK(error_of(head + R"("messages": [[0, 1, 1]], "dense": []})") == "m.json: /: give either \"messages\" or \"dense\", not both");
  CHECK(error_of(head + R"("dense": [[0,0,0,0],[0,0,0],[0,0,0,0],[0,0,0,0]]})") == "m.json: /dense/1: expected 4 entries (ranks), got 3");
  CHECK(error_of(head + R"("dense": [[0,0,0,0]]})") == "m.json: /dense: expected 4 rows (ranks), got 1");
  CHECK(error_of(head + R"("messages": [], "colour": 1})") == "m.json: /colour: unknown field");
  CHECK(error_of(head + R"("messages": [], "memory": [1, 2]})") == "m.json: /memory: expected 4 entries (one per rank), got 2");
  CHECK(error_of(head + R"("messages": [[0, 1, 9007199254740993]]})") == "m.json: /messages/0/2: size 9007199254740993 exceeds the limit of 2^53 bytes");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 2, "ranks": 1, "messages": []})") ==
        "m.json: /version: unsupported version 2 (this commfit reads version 1)");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 1, "ranks": 0, "messages": []})") == "m.json: /ranks: rank count must be at least 1");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 1, "ranks": "4", "messages": []})") ==
        "m.json: /ranks: expected a non-negative integer rank count, got a string");
  CHECK(error_of(R"({"format": "other", "version": 1, "ranks": 1, "messages": []})") == "m.json: /format: expected \"commfit-matrix\", got \"other\"");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 1, "ranks": 1})") == "m.json: /: missing the pattern: a \"messages\" or a \"dense\" array");
  CHECK(error_of(R"([1, 2])") == "m.json: /: expected a JSON object at the top level, got an array");
  CHECK(error_of(R"({"format": "commfit-matrix", "version": 1, "ranks": 1, "messages": [)").starts_with("m.json: line 1, column "));
  CHECK(error_of(R"({"format": "commfit-matrix", "format": "x"})") == "m.json: /format: field appears twice");
}

TEST_CASE("matrix_json_hostile_nesting_is_bounded") {
  std::string deep = R"({"format": "commfit-matrix", "version": 1, "ranks": 1, "name": )";
  deep += std::string(100000, '[');
  const std::string e = error_of(deep);
  CHECK(e.find("nesting deeper than 64 levels") != std::string::npos);
}

TEST_CASE("matrix_market") {
  const std::string mtx =
      "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n3 3 3\n1 2 10.2\n3 3 4\n3 1 1\n";
  const CommMatrix m = parse_matrix_market(mtx, "s.mtx").matrix;
  CHECK(m.ranks == 3);
  CHECK(m.at(0, 1) == 11);   // real sizes are rounded up
  CHECK(m.at(1, 0) == 11);   // symmetric entries are mirrored
  CHECK(m.at(2, 2) == 4);
  CHECK(m.at(2, 0) == 1);
  CHECK(m.at(0, 2) == 1);
  CHECK(m.nnz() == 5);
  CHECK(error_of("%%MatrixMarket matrix coordinate integer general\n3 4 0\n", "x.mtx") ==
        "x.mtx: line 2: the matrix is 3 x 4; a communication matrix is square (ranks x ranks)");
  CHECK(error_of("%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 5\n1 2 6\n", "x.mtx") ==
        "x.mtx: line 4: duplicate entry (1, 2), first given on line 3");
  CHECK(error_of("%%MatrixMarket matrix coordinate integer general\n3 3 1\n4 1 5\n", "x.mtx") == "x.mtx: line 3: row 4 is out of range (1 .. 3)");
  CHECK(error_of("%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 5\n", "x.mtx") ==
        "x.mtx: line 3: the size line announces 2 entries, the file has 1");
  CHECK(error_of("%%MatrixMarket matrix coordinate pattern general\n3 3 0\n", "x.mtx") ==
        "x.mtx: line 1: field \"pattern\" is not supported: expected integer or real");
  CHECK(error_of("%%MatrixMarket matrix array real general\n3 3\n", "x.mtx").find("coordinate") != std::string::npos);
  CHECK(error_of("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -4\n", "x.mtx") == "x.mtx: line 3: negative size -4");
}

TEST_CASE("matrix_json_round_trip") {
  const MatrixFile f = parse_matrix_json(kTiny, "tiny.json");
  const MatrixFile g = parse_matrix_json(matrix_json(f.matrix), "again.json");
  CHECK(messages_of(f.matrix) == messages_of(g.matrix));
  CHECK(g.matrix.name == "tiny");
}

// The JSON reader refills a buffer (64 KiB from a file) and folds each run of blanks outside
// strings into one; fed 1..7 bytes at a time, every fixture and example must give the same
// matrix or the same message, with lines and columns of the text itself.
TEST_CASE("matrix_json_reading_in_pieces_changes_nothing") {
  namespace fs = std::filesystem;
  auto verdict = [](const std::string& text, std::size_t chunk) -> std::string {
    try {
      const MatrixFile f = chunk == 0 ? parse_matrix_json(text, "t.json") : parse_matrix_json_in_chunks(text, "t.json", chunk);
      return "ok " + matrix_json(f.matrix) + f.topology.dump() + f.cost.dump() + f.matrix.name + "|" + f.matrix.description;
    } catch (const InputError& e) {
      return e.what();
    }
  };
  std::vector<fs::path> files;
  for (const char* dir : {"tests/fixtures/matrix/good", "tests/fixtures/matrix/bad", "examples"})
    for (const auto& e : fs::directory_iterator(fs::path(COMMFIT_SOURCE_DIR) / dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
  REQUIRE(files.size() > 60);
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string whole = verdict(text, 0);
    for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
      INFO(file.string() << " chunk " << chunk);
      CHECK(verdict(text, chunk) == whole);
    }
  }
  // Blanks inside strings are kept, escaped quotes do not end a string, and a syntax error after
  // runs of blanks on several lines is placed in the text as written.
  const std::string spaced = "{\"format\":   \"commfit-matrix\",\n\n  \"version\": 1, \"ranks\": 2, \"name\": \"a  \\\"  b\\\\\",\n"
                             "\t\"description\": \"x   \\\"   \\n  y\",  \"messages\": [[0,   1,\n\n 5]]}";
  for (std::size_t chunk : {1, 2, 3, 5, 64}) {
    const MatrixFile f = parse_matrix_json_in_chunks(spaced, "s.json", chunk);
    CHECK(f.matrix.name == "a  \"  b\\");
    CHECK(f.matrix.description == "x   \"   \n  y");
    CHECK(f.matrix.at(0, 1) == 5);
  }
  const std::string bad = "{\"format\": \"commfit-matrix\",\n\n\n     \"version\": 1,      \n  \"ranks\" 2}";
  for (std::size_t chunk : {1, 2, 3, 4, 64})
    CHECK(verdict(bad, chunk) == "t.json: line 5, column 11: invalid JSON: syntax error while parsing object separator - "
                                 "unexpected number literal; expected ':'");
}

// The Matrix Market writer: what it writes reads back as the same matrix (the fingerprint is of
// the content), the name and description as comments; a matrix with memory limits is refused.
TEST_CASE("matrix_market_writer_round_trips") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    CommMatrix m = gen_random_sparse(40, 0.2, 1 << 20, seed, true);   // local copies too
    m.name = "random";
    m.description = "two\nlines";
    const std::string text = matrix_market(m);
    CHECK(text.starts_with("%%MatrixMarket matrix coordinate integer general\n% random\n% two lines\n"));
    const MatrixFile back = parse_matrix_market(text, "x.mtx");
    CHECK(matrix_fingerprint(back.matrix) == matrix_fingerprint(m));
    CHECK(detect_matrix_format(text, "x.json") == MatrixFormat::matrix_market);
    CHECK(detect_matrix_format(matrix_json(m), "x.mtx") == MatrixFormat::json);
  }
  CHECK(detect_matrix_format("4 4 1\n", "RS.MTX") == MatrixFormat::matrix_market);   // no banner: the reader says so
  CHECK(detect_matrix_format("[1]", "x.json") == MatrixFormat::json);
  CommMatrix limited = make_matrix(2, {{0, 1, 5}});
  limited.memory = {10, 10};
  CHECK_THROWS_AS(matrix_market(limited), UsageError);
}
