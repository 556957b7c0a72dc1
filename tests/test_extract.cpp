// commfit extract: the halo rule on hand-made patterns, the Matrix Market / gmsh / partition
// readers, the hostile fixtures of tests/fixtures/extract/bad (exit 2, one line, no output), and
// the demonstration of docs/WORKLOADS.md: the committed examples (a gmsh mesh made here from
// examples/extract/plate.geo, and examples/extract/laplace3d_20.mtx) extracted into 32, 256 and
// 1024 parts give matrices whose plans verify and whose stats print.
#include "ir/comm_matrix.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "ir/random.h"
#include "workloads/gmsh.h"
#include "workloads/halo.h"
#include "workloads/mtx_pattern.h"
#include "workloads/partition.h"
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace commfit;
using commfit::test::slurp;
namespace fs = std::filesystem;

namespace {

using commfit::test::source_dir;
const fs::path kFixtures = source_dir() / "tests/fixtures/extract";

Pattern pattern(std::int64_t n, std::vector<std::pair<std::int32_t, std::int32_t>> pairs) {
  return pattern_from_pairs(n, std::move(pairs));
}

fs::path scratch() { return test::scratch_dir("extract"); }

// Runs `commfit ARGS` from the repository root (fixture paths are relative to it).
test::CommandRun run_commfit(const std::string& args) { return test::run_commfit(args, source_dir(), scratch()); }

}  // namespace

TEST_CASE("halo_matrix: the owner sends x[v] once to every other part that reads it") {
  // Path 0 - 1 - 2 - 3 (tridiagonal, symmetric), parts {0, 0, 1, 1}: x[1] goes to part 1, x[2] to part 0.
  const Pattern path = pattern(4, {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}});
  const CommMatrix m = halo_matrix(path, {0, 0, 1, 1}, 2, 8);
  CHECK(messages_of(m) == std::vector<Message>{{0, 1, 8}, {1, 0, 8}});

  // Not symmetric: rows 0 and 1 (part 0) both read x[3] (part 1): sent once; nobody reads x[0].
  const Pattern a = pattern(4, {{0, 3}, {1, 3}, {1, 1}, {2, 2}, {3, 3}});
  CHECK(messages_of(halo_matrix(a, {0, 0, 1, 1}, 2, 4)) == std::vector<Message>{{1, 0, 4}});

  // A star: centre 0 in part 0 read by leaves in parts 1, 2, 3; each leaf's value read by part 0.
  const Pattern star = symmetric_graph(pattern(4, {{0, 1}, {0, 2}, {0, 3}}));
  CHECK(star.entries() == 6);
  const CommMatrix s = halo_matrix(star, {0, 1, 2, 3}, 5, 8);   // part 4 is empty: a rank with no messages
  CHECK(s.ranks == 5);
  CHECK(messages_of(s) == std::vector<Message>{{0, 1, 8}, {0, 2, 8}, {0, 3, 8}, {1, 0, 8}, {2, 0, 8}, {3, 0, 8}});
  const HaloCounts hc = halo_counts(star, {0, 1, 2, 3});
  CHECK(hc.boundary_vertices == 4);
  CHECK(hc.cut_edges == 3);
  // One part: nothing to send.
  CHECK(halo_matrix(star, {0, 0, 0, 0}, 1, 8).nnz() == 0);
}

TEST_CASE("parse_mtx_pattern: fields, symmetry, repeats") {
  const Pattern g = parse_mtx_pattern(slurp(kFixtures / "good/small.mtx"), "small.mtx");
  CHECK(g.n == 6);
  CHECK(g.entries() == 11);   // 12 entries, (3, 3) twice
  const std::string sym = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n";
  const Pattern s = parse_mtx_pattern(sym, "s.mtx");
  CHECK(s.entries() == 5);   // (0,0), (1,0), (0,1), (2,1), (1,2)
  const std::string skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n3 1 -4\n";
  CHECK(parse_mtx_pattern(skew, "k.mtx").entries() == 2);
  // With the partition of small.part: part 0 = {0, 1, 2}, part 1 = {3, 4, 5}. Row 0 reads x[5]
  // (part 1 -> part 0); rows 2 and 3 read each other (one value each way).
  const PartitionVector pv = parse_partition(slurp(kFixtures / "good/small.part"), "small.part", 6, 0);
  CHECK(pv.parts == 2);
  CHECK(messages_of(halo_matrix(g, pv.part, pv.parts, 8)) == std::vector<Message>{{0, 1, 8}, {1, 0, 16}});
}

TEST_CASE("parse_msh: MSH 4.1 and 2.2 of one mesh give one vertex graph of its triangles") {
  const MeshGraph a = parse_msh(slurp(kFixtures / "good/square_41.msh"), "square_41.msh");
  const MeshGraph b = parse_msh(slurp(kFixtures / "good/square_22.msh"), "square_22.msh");
  CHECK(a.version == "4.1");
  CHECK(b.version == "2.2");
  CHECK(a.dimension == 2);
  CHECK(a.graph.n == 20);
  CHECK(a.graph.n == b.graph.n);
  CHECK(a.elements == b.elements);
  CHECK(a.graph.offsets == b.graph.offsets);
  CHECK(a.graph.cols == b.graph.cols);
  // A triangulated disc (Euler): edges = vertices + triangles - 1; stored both ways.
  CHECK(a.graph.entries() == 2 * (a.graph.n + a.elements - 1));
  // Symmetric and without a diagonal.
  for (std::int64_t u = 0; u < a.graph.n; ++u)
    for (std::int64_t k = a.graph.offsets[u]; k < a.graph.offsets[u + 1]; ++k) {
      const std::int32_t v = a.graph.cols[k];
      CHECK(v != u);
      CHECK(std::binary_search(a.graph.cols.begin() + a.graph.offsets[v], a.graph.cols.begin() + a.graph.offsets[v + 1], u));
    }
}

TEST_CASE("partition_metis: parts in range, deterministic per seed, balanced") {
  const Pattern g = parse_msh(slurp(kFixtures / "good/square_41.msh"), "square_41.msh").graph;
  for (std::int32_t k : {1, 2, 3, 5, 20}) {
    CAPTURE(k);
    const auto part = partition_metis(g, k, 1);
    CHECK(part == partition_metis(g, k, 1));
    std::vector<int> size(k, 0);
    for (auto p : part) {
      REQUIRE((p >= 0 && p < k));
      ++size[p];
    }
    if (k <= 5) CHECK(*std::max_element(size.begin(), size.end()) <= 2 * ((20 + k - 1) / k));   // METIS balances (loosely on 20 vertices)
  }
  // No edges: blocks of consecutive vertices, without METIS.
  const auto blocks = partition_metis(pattern(6, {}), 3, 1);
  CHECK(blocks == std::vector<std::int32_t>{0, 0, 1, 1, 2, 2});
}

// Every fixture of tests/fixtures/extract/bad with the arguments it is run with and the exact line
// commfit must print (then option errors, without a fixture). A fixture added without a line here
// fails the test.
TEST_CASE("extract: hostile inputs exit 2 with one line naming file and place, and write nothing") {
  const std::string small = "tests/fixtures/extract/good/small.mtx";
  struct Case {
    std::string fixture, args, line;
  };
  const std::vector<Case> cases = {
      {"array_format.mtx", "tests/fixtures/extract/bad/array_format.mtx --parts 2",
       "tests/fixtures/extract/bad/array_format.mtx: line 1: format \"array\" is not supported: a sparse matrix is stored in coordinate format"},
      {"bad_value.mtx", "tests/fixtures/extract/bad/bad_value.mtx --parts 2",
       "tests/fixtures/extract/bad/bad_value.mtx: line 3: expected a finite real value, got \"abc\""},
      {"binary.msh", "tests/fixtures/extract/bad/binary.msh --parts 2",
       "tests/fixtures/extract/bad/binary.msh: line 2: binary .msh files are not supported: write ASCII (gmsh option -bin 0, Mesh.Binary = 0)"},
      {"complex_field.mtx", "tests/fixtures/extract/bad/complex_field.mtx --parts 2",
       "tests/fixtures/extract/bad/complex_field.mtx: line 1: field \"complex\" is not supported: expected real, integer or pattern"},
      {"dimension_mismatch.msh", "tests/fixtures/extract/bad/dimension_mismatch.msh --parts 2",
       "tests/fixtures/extract/bad/dimension_mismatch.msh: line 16: an element type of dimension 2 in a block of dimension 3"},
      {"duplicate_node.msh", "tests/fixtures/extract/bad/duplicate_node.msh --parts 2",
       "tests/fixtures/extract/bad/duplicate_node.msh: line 13: node tag 2 is defined twice in $Nodes"},
      {"elements_before_nodes.msh", "tests/fixtures/extract/bad/elements_before_nodes.msh --parts 2",
       "tests/fixtures/extract/bad/elements_before_nodes.msh: line 4: $Elements before $Nodes"},
      {"empty.mtx", "tests/fixtures/extract/bad/empty.mtx --parts 2",
       "tests/fixtures/extract/bad/empty.mtx: line 1: not a Matrix Market file (expected a %%MatrixMarket banner)"},
      {"fractional_integer.mtx", "tests/fixtures/extract/bad/fractional_integer.mtx --parts 2",
       "tests/fixtures/extract/bad/fractional_integer.mtx: line 3: expected the value (an integer), got \"1.5\""},
      {"garbage.part", small + " --partition tests/fixtures/extract/bad/garbage.part",
       "tests/fixtures/extract/bad/garbage.part: line 3: expected one part number per line, got \"x\""},
      {"hermitian_symmetry.mtx", "tests/fixtures/extract/bad/hermitian_symmetry.mtx --parts 2",
       "tests/fixtures/extract/bad/hermitian_symmetry.mtx: line 1: symmetry \"hermitian\" is not supported: expected general, symmetric or skew-symmetric"},
      {"index_out_of_range.mtx", "tests/fixtures/extract/bad/index_out_of_range.mtx --parts 2",
       "tests/fixtures/extract/bad/index_out_of_range.mtx: line 4: row 5 is out of range (1 .. 4)"},
      {"index_zero.mtx", "tests/fixtures/extract/bad/index_zero.mtx --parts 2",
       "tests/fixtures/extract/bad/index_zero.mtx: line 3: row 0 is out of range (1 .. 4)"},
      {"long.part", small + " --partition tests/fixtures/extract/bad/long.part",
       "tests/fixtures/extract/bad/long.part: line 7: more entries than the 6 vertices of the input"},
      {"missing_banner.mtx", "tests/fixtures/extract/bad/missing_banner.mtx --parts 2",
       "tests/fixtures/extract/bad/missing_banner.mtx: line 1: not a Matrix Market file (expected a %%MatrixMarket banner)"},
      {"missing_size_line.mtx", "tests/fixtures/extract/bad/missing_size_line.mtx --parts 2",
       "tests/fixtures/extract/bad/missing_size_line.mtx: line 2: missing the size line \"ROWS COLUMNS ENTRIES\""},
      {"nan_value.mtx", "tests/fixtures/extract/bad/nan_value.mtx --parts 2",
       "tests/fixtures/extract/bad/nan_value.mtx: line 3: expected a finite real value, got \"nan\""},
      {"negative.part", small + " --partition tests/fixtures/extract/bad/negative.part",
       "tests/fixtures/extract/bad/negative.part: line 3: part -1 is negative (parts are numbered from 0)"},
      {"negative_entry_count.mtx", "tests/fixtures/extract/bad/negative_entry_count.mtx --parts 2",
       "tests/fixtures/extract/bad/negative_entry_count.mtx: line 2: entry count -1 is out of range (0 .. 14)"},
      {"no_elements.msh", "tests/fixtures/extract/bad/no_elements.msh --parts 2",
       "tests/fixtures/extract/bad/no_elements.msh: line 14: no $Elements section"},
      {"node_count_mismatch.msh", "tests/fixtures/extract/bad/node_count_mismatch.msh --parts 2",
       "tests/fixtures/extract/bad/node_count_mismatch.msh: line 12: the node blocks hold 3 nodes, the header announces 4"},
      {"not_a_mesh.msh", "tests/fixtures/extract/bad/not_a_mesh.msh --parts 2",
       "tests/fixtures/extract/bad/not_a_mesh.msh: line 1: not a gmsh mesh (expected $MeshFormat)"},
      {"not_square.mtx", "tests/fixtures/extract/bad/not_square.mtx --parts 2",
       "tests/fixtures/extract/bad/not_square.mtx: line 2: the matrix is 3 x 4; SpMV halo exchange needs a square matrix (the owner of row v owns x[v])"},
      {"out_of_range.part", small + " --partition tests/fixtures/extract/bad/out_of_range.part --parts 2",
       "tests/fixtures/extract/bad/out_of_range.part: line 3: part 2 is out of range (--parts 2: 0 .. 1)"},
      {"pattern_with_value.mtx", "tests/fixtures/extract/bad/pattern_with_value.mtx --parts 2",
       "tests/fixtures/extract/bad/pattern_with_value.mtx: line 3: expected \"ROW COLUMN\""},
      {"points_only.msh", "tests/fixtures/extract/bad/points_only.msh --parts 2",
       "tests/fixtures/extract/bad/points_only.msh: line 18: the mesh has no elements of dimension 1 to 3"},
      {"rows_for_file_size.mtx", "tests/fixtures/extract/bad/rows_for_file_size.mtx --parts 2",
       "tests/fixtures/extract/bad/rows_for_file_size.mtx: line 2: a 50000000 x 50000000 matrix in a file of 73 bytes: at most 1048576 rows (2^20, or 8 per byte of the file)"},
      {"short.part", small + " --partition tests/fixtures/extract/bad/short.part",
       "tests/fixtures/extract/bad/short.part: line 4: the partition has 4 entries, the input has 6 vertices"},
      {"stray_text.msh", "tests/fixtures/extract/bad/stray_text.msh --parts 2",
       "tests/fixtures/extract/bad/stray_text.msh: line 19: expected a section such as $Nodes or $Elements, got \"stray\""},
      {"too_few_entries.mtx", "tests/fixtures/extract/bad/too_few_entries.mtx --parts 2",
       "tests/fixtures/extract/bad/too_few_entries.mtx: line 4: the size line announces 3 entries, the file has 2"},
      {"too_many_entries.mtx", "tests/fixtures/extract/bad/too_many_entries.mtx --parts 2",
       "tests/fixtures/extract/bad/too_many_entries.mtx: line 4: more entries than the 1 the size line announces"},
      {"too_many_rows.mtx", "tests/fixtures/extract/bad/too_many_rows.mtx --parts 2",
       "tests/fixtures/extract/bad/too_many_rows.mtx: line 2: row count 2147483647 is out of range (1 .. 67108864)"},
      {"truncated_nodes.msh", "tests/fixtures/extract/bad/truncated_nodes.msh --parts 2",
       "tests/fixtures/extract/bad/truncated_nodes.msh: line 12: unexpected end of file, expected a node coordinate"},
      {"undefined_node.msh", "tests/fixtures/extract/bad/undefined_node.msh --parts 2",
       "tests/fixtures/extract/bad/undefined_node.msh: line 17: node 99 is not defined in $Nodes"},
      {"unknown_element_type.msh", "tests/fixtures/extract/bad/unknown_element_type.msh --parts 2",
       "tests/fixtures/extract/bad/unknown_element_type.msh: line 16: element type 99 is not supported (types 1 .. 31: lines, triangles, quadrangles, tetrahedra, hexahedra, prisms, pyramids, points)"},
      {"unterminated_section.msh", "tests/fixtures/extract/bad/unterminated_section.msh --parts 2",
       "tests/fixtures/extract/bad/unterminated_section.msh: line 4: section $PhysicalNames has no $EndPhysicalNames"},
      {"v22_short_element.msh", "tests/fixtures/extract/bad/v22_short_element.msh --parts 2",
       "tests/fixtures/extract/bad/v22_short_element.msh: line 13: expected a node tag (an integer), got \"$EndElements\""},
      {"version_40.msh", "tests/fixtures/extract/bad/version_40.msh --parts 2",
       "tests/fixtures/extract/bad/version_40.msh: line 2: MSH version 4.0 is not supported (4.1 or 2.2 ASCII; gmsh -format msh41 or msh22)"},
      {"", small + " --parts 0",
       "--parts must be in 1 .. 16777216"},
      {"", small + " --parts 7",
       "--parts 7 is more than the 6 vertices of tests/fixtures/extract/good/small.mtx"},
      {"", small + "",
       "give --parts K (partition with METIS) or --partition FILE"},
      {"", small + " --parts 2 --bytes-per-value 0",
       "--bytes-per-value must be at least 1"},
      {"", "examples/extract/plate.geo --parts 2",
       "examples/extract/plate.geo: cannot tell the input kind from the extension (expected .mtx, a Matrix Market sparse matrix, or .msh, a gmsh mesh)"},
      {"", small + " --partition tests/fixtures/extract/nosuch.part",
       "tests/fixtures/extract/nosuch.part: cannot open the file: No such file or directory"},
  };
  std::set<std::string> covered;
  for (const Case& c : cases) {
    INFO(c.args);
    if (!c.fixture.empty()) covered.insert(c.fixture);
    const fs::path out = scratch() / "bad.json";
    fs::remove(out);
    const test::CommandRun r = run_commfit("extract " + c.args + " -o '" + out.string() + "'");
    CHECK(r.status == 2);
    CHECK(r.err == "commfit: error: " + c.line + "\n");
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(out));
    for (const auto& e : fs::directory_iterator(out.parent_path())) CHECK(e.path().filename().string().rfind(".bad.json.tmp-", 0) != 0);
  }
  for (const auto& e : fs::directory_iterator(kFixtures / "bad")) CHECK_MESSAGE(covered.count(e.path().filename().string()), e.path());
}

// The committed examples, extracted and planned (docs/WORKLOADS.md, "The examples, measured").
namespace {

// The mesh of examples/extract/plate.geo, made once into the build directory (beside the commfit
// binary) and remade when the .geo is newer.
fs::path plate_mesh() {
  const fs::path geo = source_dir() / "examples/extract/plate.geo";
  const fs::path msh = fs::path(COMMFIT_EXE).parent_path() / "examples/plate.msh";
  if (fs::exists(msh) && fs::last_write_time(msh) >= fs::last_write_time(geo)) return msh;
  fs::create_directories(msh.parent_path());
  const fs::path tmp = msh.string() + "." + std::to_string(::getpid()) + ".msh";
  const std::string cmd = "gmsh -2 '" + geo.string() + "' -o '" + tmp.string() + "' >'" + (scratch() / "gmsh.log").string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  INFO(slurp(scratch() / "gmsh.log"));
  REQUIRE_MESSAGE(rc == 0, "gmsh failed (tools/setup.sh installs it)");
  fs::rename(tmp, msh);
  return msh;
}

void extract_plan_verify(const std::string& input, std::int64_t expect_vertices) {
  for (int parts : {32, 256, 1024}) {
    CAPTURE(parts);
    const std::string stem = (scratch() / (fs::path(input).stem().string() + "_" + std::to_string(parts))).string();
    const test::CommandRun x = run_commfit("extract '" + input + "' --parts " + std::to_string(parts) + " -o '" + stem + ".json'");
    REQUIRE(x.status == 0);
    CHECK(x.out.find(std::to_string(expect_vertices) + " vertices, " + std::to_string(parts) + " parts") != std::string::npos);
    MESSAGE(x.out);
    const MatrixFile f = read_matrix(stem + ".json");
    const TrafficStats st = traffic_stats(f.matrix);
    CHECK(f.matrix.ranks == parts);
    CHECK(st.local_copies == 0);
    CHECK(st.h >= 2);
    // A symmetric pattern exchanges both ways: if part p reads from q, q reads from p.
    f.matrix.for_each([&](Rank i, Rank j, Bytes b) {
      CHECK(f.matrix.at(j, i) > 0);
      CHECK(b % 8 == 0);
    });
    const test::CommandRun plan = run_commfit("plan '" + stem + ".json' -o '" + stem + ".plan' -q");
    CHECK(plan.status == 0);
    const test::CommandRun verify = run_commfit("verify '" + stem + ".json' '" + stem + ".plan'");
    CHECK(verify.status == 0);
    CHECK(verify.out.find("verifies") != std::string::npos);
    const test::CommandRun stats = run_commfit("stats '" + stem + ".json'");
    CHECK(stats.status == 0);
    for (const char* line : {"f (fan-out)", "g (fan-in)", "message size", "h = max(f, g) = " })
      CHECK(stats.out.find(line) != std::string::npos);
    CHECK(stats.out.find("h = max(f, g) = " + std::to_string(st.h) + " messages") != std::string::npos);
    if (parts == 256) {   // the same input and seed give the same bytes
      REQUIRE(run_commfit("extract '" + input + "' --parts 256 -q -o '" + stem + ".again.json'").status == 0);
      CHECK(slurp(stem + ".json") == slurp(stem + ".again.json"));
    }
  }
}

}  // namespace

TEST_CASE("extract: the gmsh plate (>= 50,000 vertices) into 32, 256, 1024 parts plans and verifies") {
  const fs::path msh = plate_mesh();
  const MeshGraph mesh = parse_msh(slurp(msh), msh.string());
  CHECK(mesh.graph.n >= 50000);
  CHECK(mesh.dimension == 2);
  extract_plan_verify(msh.string(), mesh.graph.n);
}

TEST_CASE("extract: the Matrix Market Laplacian into 32, 256, 1024 parts plans and verifies") {
  extract_plan_verify((source_dir() / "examples/extract/laplace3d_20.mtx").string(), 8000);
  // The 7-point Laplacian's halo: with a partition file of z-slabs of 20 x 20 x 5 rows each part
  // sends its one or two boundary planes of 400 values to its neighbours.
  std::string slabs;
  for (int v = 0; v < 8000; ++v) slabs += std::to_string(v / 2000) + "\n";
  std::ofstream(scratch() / "slabs.part") << slabs;
  const std::string out = (scratch() / "slabs.json").string();
  REQUIRE(run_commfit("extract examples/extract/laplace3d_20.mtx --partition '" + (scratch() / "slabs.part").string() + "' -q -o '" + out + "'").status == 0);
  CHECK(messages_of(read_matrix(out).matrix) ==
        std::vector<Message>{{0, 1, 3200}, {1, 0, 3200}, {1, 2, 3200}, {2, 1, 3200}, {2, 3, 3200}, {3, 2, 3200}});
}

// A bounded, deterministic mutation run over the good fixtures (the hostile corpus generalised):
// every mutant is either read or refused with an InputError; what is read partitions and extracts.
TEST_CASE("extract readers: 3000 mutants of each good fixture are read or refused, never crash") {
  Rng rng(20261122);
  const std::string alphabet = "0123456789 \n\t-+.eE$%xX";
  for (const char* name : {"small.mtx", "square_41.msh", "square_22.msh", "small.part"}) {
    const std::string good = slurp(kFixtures / "good" / name);
    const std::string ext = fs::path(name).extension().string();
    int read = 0, refused = 0;
    for (int k = 0; k < 3000; ++k) {
      std::string text = good;
      const int edits = 1 + static_cast<int>(rng.below(4));
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const std::size_t at = rng.below(text.size());
        switch (rng.below(4)) {
          case 0: text[at] = alphabet[rng.below(alphabet.size())]; break;                    // replace
          case 1: text.erase(at, 1 + rng.below(8)); break;                                  // delete
          case 2: text.insert(at, std::string(1 + rng.below(12), alphabet[rng.below(10)])); break;   // digits
          default: text.resize(at); break;                                                  // truncate
        }
      }
      try {
        if (ext == ".part") {
          const PartitionVector pv = parse_partition(text, name, 6, static_cast<std::int32_t>(rng.below(3)));
          CHECK(pv.part.size() == 6);
        } else {
          const Pattern g = ext == ".mtx" ? parse_mtx_pattern(text, name) : parse_msh(text, name).graph;
          const auto parts = static_cast<std::int32_t>(1 + rng.below(static_cast<std::uint64_t>(std::min<std::int64_t>(g.n, 8))));
          const auto part = partition_metis(symmetric_graph(g), parts, 1);
          CHECK(halo_matrix(g, part, parts, 8).ranks == parts);
        }
        ++read;
      } catch (const InputError& e) {
        CHECK(std::string(e.what()).rfind(name, 0) == 0);
        ++refused;
      }
    }
    MESSAGE(std::string(name) << ": " << read << " read, " << refused << " refused");
    CHECK(refused > 0);
  }
}
