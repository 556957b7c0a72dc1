// The fast path of the JSON matrix reader (ir/matrix_json_fast.h): wherever it accepts a text it
// must give exactly the SAX reader's MatrixFile, whatever its buffer size, and it must give up
// (so that the SAX reader decides and words the message) on everything outside its subset.
// tests/test_matrix_io.cpp pins the reader's behaviour; tests/fuzz/fuzz_matrix_json.cpp runs the
// same comparison on fuzzed inputs.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "ir/random.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include "support/run_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace commfit;
namespace fs = std::filesystem;

namespace {

// Every field of a MatrixFile, JSON values with their types (1 and 1.0 differ in dump()).
std::string describe(const MatrixFile& f) {
  std::string s = "ranks " + std::to_string(f.matrix.ranks) + " nnz " + std::to_string(f.matrix.nnz()) + "\n";
  f.matrix.for_each([&](Rank i, Rank j, Bytes b) { s += std::to_string(i) + " " + std::to_string(j) + " " + std::to_string(b) + "\n"; });
  s += "memory";
  for (Bytes b : f.matrix.memory) s += " " + std::to_string(b);
  return s + "\nname " + f.matrix.name + "\ndescription " + f.matrix.description + "\ntopology " + f.topology.dump() +
         "\ncost " + f.cost.dump() + "\n";
}

// The SAX reader's verdict: the file described, or its message.
std::string sax_verdict(const std::string& text, std::size_t chunk = 64) {
  try {
    return describe(detail::parse_matrix_json_sax(text, "t.json", chunk));
  } catch (const InputError& e) {
    return std::string("error ") + e.what();
  }
}

// The fast path's verdict: the file described, or "gave up".
std::string fast_verdict(const std::string& text, std::size_t buffer) {
  const std::optional<MatrixFile> f = detail::parse_matrix_json_fast(text, "t.json", buffer);
  return f ? describe(*f) : "gave up";
}

using commfit::test::slurp;

std::vector<fs::path> json_files(const char* dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(COMMFIT_SOURCE_DIR) / dir))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Requires the fast path to accept `text` with every buffer size in `buffers` and to give the
// SAX reader's file.
void check_fast_equals_sax(const std::string& text, std::initializer_list<std::size_t> buffers) {
  const std::string sax = sax_verdict(text);
  REQUIRE(!sax.starts_with("error"));
  for (std::size_t b : buffers) {
    INFO("buffer " << b << "\n" << text.substr(0, 2000));
    CHECK(fast_verdict(text, b) == sax);
  }
}

}  // namespace

// The examples are what users read: the fast path must be the one that reads them, from a file
// through read_matrix too. Every bad fixture's error comes from the SAX reader (but for the empty
// file, refused before either reads it).
TEST_CASE("matrix_json_fast_path_reads_the_examples") {
  const auto examples = json_files("examples");
  REQUIRE(examples.size() >= 5);
  for (const fs::path& p : examples) {
    INFO(p.string());
    detail::JsonReader used = detail::JsonReader::none;
    const MatrixFile f = detail::read_matrix(p, std::nullopt, used);
    CHECK(used == detail::JsonReader::fast);
    CHECK(describe(f) == sax_verdict(slurp(p)));
  }
  for (const fs::path& p : json_files("tests/fixtures/matrix/bad")) {
    INFO(p.string());
    detail::JsonReader used = detail::JsonReader::none;
    CHECK_THROWS_AS(detail::read_matrix(p, std::nullopt, used), InputError);
    CHECK(used == (p.filename() == "empty.json" ? detail::JsonReader::none : detail::JsonReader::sax));   // empty: refused before reading
  }
  // The good fixtures the fast path leaves to the SAX reader: whole reals (1e9, 100.0) where it
  // reads plain integers only.
  std::vector<std::string> left;
  for (const fs::path& p : json_files("tests/fixtures/matrix/good"))
    if (!detail::parse_matrix_json_fast(slurp(p), "t.json", 64)) left.push_back(p.filename().string());
  CHECK(left == std::vector<std::string>{"whole_number_floats.json"});
}

// Every fixture and example, the buffer split at every position of the short ones (1..17 bytes)
// and some longer: where the fast path accepts, it gives the SAX reader's file.
TEST_CASE("matrix_json_fast_path_equals_sax_at_every_buffer_size") {
  std::size_t accepted = 0, files = 0;
  for (const char* dir : {"examples", "tests/fixtures/matrix/good", "tests/fixtures/matrix/bad"}) {
    for (const fs::path& p : json_files(dir)) {
      const std::string text = slurp(p);
      const std::string sax = sax_verdict(text);
      ++files;
      for (std::size_t b : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 64, 100, 4096, 1 << 16}) {
        INFO(p.string() << " buffer " << b);
        const std::string fast = fast_verdict(text, b);
        if (fast == "gave up") continue;
        ++accepted;
        CHECK(fast == sax);
      }
    }
  }
  CHECK(accepted >= 19 * 21);   // 5 examples and 14 good fixtures at every size
  MESSAGE(files << " files, " << accepted << " accepted reads");
}

// A generated matrix of 20,000 messages among 300 ranks (memory limits, name, description) in
// (src, dst) order and shuffled, through buffers that split its tokens everywhere.
TEST_CASE("matrix_json_fast_path_large_matrix") {
  CommMatrix m = gen_random_sparse(300, 0.22, 1 << 20, 5, true);
  m.memory.assign(300, 123456789);
  m.description = "a \"quoted\"\tdescription\n";
  REQUIRE(m.nnz() > 19000);
  const std::string sorted = matrix_json(m);
  check_fast_equals_sax(sorted, {1, 3, 64, 4093, 1 << 16});
  // The same messages in another order: sorted by the fast path, the same file.
  std::vector<std::string> lines;
  std::istringstream in(sorted.substr(sorted.find("\"messages\": [") + 13));
  for (std::string l; std::getline(in, l);)
    if (l.starts_with("  [")) lines.push_back(l.substr(2, l.find(']') - 1));
  REQUIRE(lines.size() == static_cast<std::size_t>(m.nnz()));
  Rng rng(11);
  for (std::size_t k = lines.size(); k > 1; --k) std::swap(lines[k - 1], lines[rng.below(k)]);
  std::string shuffled = "{\"format\": \"commfit-matrix\", \"version\": 1, \"ranks\": 300, \"messages\": [";
  for (std::size_t k = 0; k < lines.size(); ++k) shuffled += (k ? ",\n" : "\n") + lines[k];
  shuffled += "]}";
  check_fast_equals_sax(shuffled, {7, 1 << 16});
  // A pair given twice far apart: the fast path gives up, the SAX reader names both places.
  const std::string dup = shuffled.substr(0, shuffled.size() - 2) + ",\n" + lines[17] + "]}";
  CHECK(fast_verdict(dup, 1 << 16) == "gave up");
  CHECK(sax_verdict(dup).find("duplicate pair") != std::string::npos);
}

// Blanks (all four of JSON's) wherever the grammar allows them, in the messages, the dense rows
// and the fields, split at every buffer position.
TEST_CASE("matrix_json_fast_path_white_space_everywhere") {
  const std::vector<std::string> tokens = {
      "{", "\"format\"", ":", "\"commfit-matrix\"", ",", "\"version\"", ":", "1", ",", "\"name\"", ":", "\"a b\"", ",",
      "\"topology\"", ":", "{", "\"kind\"", ":", "\"torus\"", ",", "\"dims\"", ":", "[", "3", "]", "}", ",",
      "\"memory\"", ":", "[", "10", ",", "20", ",", "30", "]", ",", "\"cost\"", ":", "{", "\"tau_s\"", ":", "1e-6", "}", ",",
      "\"messages\"", ":", "[", "[", "0", ",", "1", ",", "5", "]", ",", "[", "2", ",", "0", ",", "0", "]", ",",
      "[", "2", ",", "1", ",", "9007199254740992", "]", "]", ",", "\"ranks\"", ":", "3", "}"};
  const std::string blanks = " \t\n\r";
  Rng rng(3);
  for (int round = 0; round < 40; ++round) {
    std::string text;
    for (const std::string& t : tokens) {
      for (std::uint64_t n = rng.below(4); n > 0; --n) text += blanks[rng.below(4)];
      text += t;
    }
    for (std::uint64_t n = rng.below(4); n > 0; --n) text += blanks[rng.below(4)];
    check_fast_equals_sax(text, {1, 2, 5, 16});
  }
  // The dense form, with blanks in its rows and empty-looking rows of zeros.
  const std::string dense = " {\"format\" :\"commfit-matrix\" ,\n\"version\"\t: 1,\r\n \"ranks\": 3, \"dense\": [ [ 0 ,7,0 ] ,\n"
                            "  [0,0,0],\t[ 1 , 0 ,  2]\n ]\n}\n\n";
  check_fast_equals_sax(dense, {1, 2, 3, 7, 64});
  // Blanks inside a field's value are folded as they are copied: 32 MiB of them inside the
  // topology object do not count against the field's 16 MiB, and the fast path reads the file.
  const std::string padded = R"({"format": "commfit-matrix", "version": 1, "ranks": 2, "topology": {"kind":)" +
                             std::string(std::size_t{32} << 20, ' ') + R"("full"}, "messages": [[0, 1, 2]]})";
  const std::optional<MatrixFile> f = detail::parse_matrix_json_fast(padded, "t.json", 1 << 16);
  REQUIRE(f.has_value());
  CHECK(describe(*f) == sax_verdict(padded, 1 << 16));
}

// Escapes in the name and description (and the topology's strings) are the field parser's: the
// same strings as the SAX reader's, split at every byte.
TEST_CASE("matrix_json_fast_path_escapes") {
  const std::string text = R"({"format": "commfit-matrix", "version": 1, "ranks": 2,
    "name": "q\"uo\\te\/d \u00e9\ud83d\ude00 \b\f\n\r\t end\\",
    "description": "] } [ { , : \" \\\\\" é",
    "topology": {"kind": "full", "node_map": "x\"]"}, "messages": [[0, 1, 2]]})";
  check_fast_equals_sax(text, {1, 2, 3, 4, 5, 6, 7, 64});
  CHECK(detail::parse_matrix_json_fast(text, "t.json", 3)->matrix.name == "q\"uo\\te/d \xC3\xA9\xF0\x9F\x98\x80 \b\f\n\r\t end\\");
}

// Each optional field present or absent (memory as a number or an array, topology as a string or
// an object, cost, name, description), in the messages and the dense form, keys in a seeded order.
TEST_CASE("matrix_json_fast_path_every_field_present_or_absent") {
  const std::vector<std::pair<std::string, std::string>> optional = {
      {"memory", "[100, 200, 300]"}, {"memory", "4096"}, {"topology", "\"torus:3\""},
      {"topology", "{\"kind\": \"full\", \"ranks_per_node\": 1}"}, {"cost", "{\"tau_s\": 2e-06, \"bandwidth_Bps\": 1e10}"},
      {"name", "\"n\""}, {"description", "\"d\""}};
  Rng rng(7);
  for (unsigned set = 0; set < (1u << optional.size()); ++set) {
    if ((set & 3) == 3) continue;   // memory once
    if ((set & 12) == 12) continue;   // topology once
    for (const char* pattern : {"\"messages\": [[0, 1, 5], [1, 2, 6], [2, 2, 1]]", "\"dense\": [[0, 5, 0], [0, 0, 6], [0, 0, 1]]"}) {
      std::vector<std::string> fields = {"\"format\": \"commfit-matrix\"", "\"version\": 1", "\"ranks\": 3", pattern};
      for (std::size_t k = 0; k < optional.size(); ++k)
        if (set & (1u << k)) fields.push_back("\"" + optional[k].first + "\": " + optional[k].second);
      for (std::size_t k = fields.size(); k > 1; --k) std::swap(fields[k - 1], fields[rng.below(k)]);
      std::string text = "{";
      for (std::size_t k = 0; k < fields.size(); ++k) text += (k ? ", " : "") + fields[k];
      text += "}";
      check_fast_equals_sax(text, {1, 5, 64});
    }
  }
}

// Outside its subset the fast path gives up, and the reader's verdict is the SAX reader's:
// numbers it does not read, ranks and sizes at and over the limits, keys it does not decode, a
// pair twice, shapes it does not know, and every kind of error.
TEST_CASE("matrix_json_fast_path_gives_up_outside_its_subset") {
  const std::string head = R"({"format": "commfit-matrix", "version": 1, "ranks": 4, )";
  const std::vector<std::string> texts = {
      head + R"("messages": [[0, 1, -0]]})",                 // accepted by the SAX reader as 0
      head + R"("messages": [[-0, 1, 5]]})",
      head + R"("messages": [[0, 1, 1e3]]})",
      head + R"("messages": [[0, 1, 100.0]]})",
      head + R"("messages": [[0, 1, 1E3]]})",
      head + R"("messages": [[0, 1.0, 3]]})",                 // errors from here on
      head + R"("messages": [[0, 1, 01]]})",
      head + R"("messages": [[0, 1, 00]]})",
      head + R"("messages": [[0, 1, 9007199254740993]]})",
      head + R"("messages": [[0, 1, 12345678901234567]]})",
      head + R"("messages": [[0, 1, 99999999999999999999999]]})",
      head + R"("messages": [[0, 4, 1]]})",
      head + R"("messages": [[16777216, 0, 1]]})",
      head + R"("messages": [[2147483647, 0, 1]]})",
      head + R"("messages": [[0, 1, 1], [0, 1, 2]]})",
      head + R"("messages": [[0, 1, 0], [0, 1, 2]]})",
      head + R"("messages": [[0, 1, 1], [2, 3, 1], [0, 1, 5]]})",
      head + R"("messages": [[0, 1]]})",
      head + R"("messages": [[0, 1, 2, 3]]})",
      head + R"("messages": [[0, "1", 2]]})",
      head + R"("messages": [[0, 1, 2],]})",
      head + R"("messages": [0, 1, 2]})",
      head + R"("messages": {}})",
      head + R"("messages": null})",
      head + R"("messages": [[0, 1, 2]], "dense": []})",
      head + R"("dense": [[0,0,0,0],[0,0,0],[0,0,0,0],[0,0,0,0]]})",
      head + R"("dense": [[0,0,0,0]]})",
      head + R"("dense": [[0,0,0,1.0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]})",
      head + R"("messages": [], "\u006eame": "x"})",           // an escaped key: the SAX reader decodes it
      head + R"("messages": [], "name": "a", "name": "b"})",
      head + R"("messages": [], "colour": 1})",
      head + R"("messages": [], "topology": {"kind": "full", "kind": "torus"}})",
      head + R"("messages": [], "name": "\u00"})",
      head + R"("messages": [], "name": "tab	in a string"})",
      head + R"("messages": [], "memory": [1, 2]})",
      head + R"("messages": [], "cost": {"tau_s": -1}})",
      head + R"("messages": [], "name": tru})",
      head + R"("messages": [], "name": 1 2})",
      head + R"("messages": [[0, 1, 2]]} x)",
      head + R"("messages": [[0, 1, 2]])",
      head + R"("messages": [[0, 1, 2)",
      "\xEF\xBB\xBF" + head + R"("messages": [[0, 1, 2]]})",   // a byte order mark
      R"({"format": "commfit-matrix", "version": 1, "ranks": 0, "messages": []})",
      R"({"format": "commfit-matrix", "version": 2, "ranks": 1, "messages": []})",
      R"({"format": "commfit-matrix", "version": 1, "messages": []})",
      R"({})",
      R"([1, 2])",
      "",
      "   ",
      head + R"("messages": [], "topology": )" + std::string(100, '[') + std::string(100, ']') + "}",
  };
  for (const std::string& text : texts) {
    INFO(text);
    for (std::size_t b : {1, 3, 64}) CHECK(fast_verdict(text, b) == "gave up");
    // The reader's verdict (fast path first) is the SAX reader's, message and all.
    std::string reader;
    try {
      reader = describe(parse_matrix_json_in_chunks(text, "t.json", 3));
    } catch (const InputError& e) {
      reader = std::string("error ") + e.what();
    }
    CHECK(reader == sax_verdict(text, 3));
  }
  // A field's text over kMaxFieldText (16 MiB) is left to the SAX reader, which reads it.
  const std::string long_name = head + R"("messages": [], "name": ")" + std::string((16 << 20) + 1, 'n') + "\"}";
  CHECK(fast_verdict(long_name, 1 << 16) == "gave up");
  CHECK(parse_matrix_json(long_name, "t.json").matrix.name.size() == (16u << 20) + 1);
}

// make_matrix skips its sort on messages already in (src, dst) order: the same matrix either way.
TEST_CASE("make_matrix_sorted_or_not_gives_the_same_matrix") {
  const CommMatrix m = gen_random_sparse(50, 0.3, 1000, 9, true);
  std::vector<Message> msgs = messages_of(m);
  msgs.push_back({3, 3, 0});   // zero sizes are dropped either way
  const CommMatrix sorted = make_matrix(m.ranks, msgs);
  Rng rng(2);
  for (std::size_t k = msgs.size(); k > 1; --k) std::swap(msgs[k - 1], msgs[rng.below(k)]);
  const CommMatrix shuffled = make_matrix(m.ranks, msgs);
  CHECK(messages_of(sorted) == messages_of(m));
  CHECK(messages_of(shuffled) == messages_of(m));
  CHECK(matrix_fingerprint(shuffled) == matrix_fingerprint(m));
}
