// The single-file binary plan (version 3): round trips (plan, directory <-> file, every way a step
// can be encoded, values at the limits), one-slice reads, the streaming writer (the same bytes as
// write_plan_binary, nothing left behind without finish()), and every kind of damage (truncation
// anywhere, a flipped byte anywhere, appended bytes, an old or future version, bad varints and
// codes behind valid checksums) rejected with an InputError naming the place.
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "mpi/handmade_plans.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include "support/run_command.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <stdexcept>

using namespace commfit;
namespace fs = std::filesystem;

namespace {

using commfit::test::slurp;

// Replaces the file by a new one: truncating it in place would make ext4 flush it first
// (auto_da_alloc), a disk wait per call in the tests that write thousands of damaged copies.
void spit(const fs::path& p, const std::string& bytes) {
  fs::remove(p);
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::uint64_t get_u(const std::string& s, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(s[at + k]);
  return v;
}
void put_u(std::string& s, std::size_t at, std::uint64_t v, int n) {
  for (int k = 0; k < n; ++k) s[at + k] = static_cast<char>(v >> (8 * k));
}
std::uint64_t checksum(const std::string& s, std::uint64_t seed = 0) { return plan_binary_checksum(s.data(), s.size(), seed); }

std::string read_error(const fs::path& file, Rank rank) {
  try {
    read_rank_schedule_binary(file, rank);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string whole_error(const fs::path& file) {
  try {
    read_plan_binary(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

void check_same(const Plan& a, const Plan& b) {
  CHECK(manifest_json(a.manifest) == manifest_json(b.manifest));
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    CHECK(rank_schedule_json(a.ranks[r]) == rank_schedule_json(b.ranks[r]));
    CHECK(a.ranks[r].steps == b.ranks[r].steps);
  }
}

Plan sample_plan() { return make_plan(gen_random_sparse(7, 0.5, 5000, 4, true), {}); }

// A binary plan taken apart into its regions, so that a test can edit a slice, an entry or the
// manifest and put the file back together with every offset, size and checksum refitted: what the
// edit then meets is the decoder's own checks, not a checksum.
struct Cfp {
  std::string header, manifest;
  std::vector<std::string> entries, slices;

  explicit Cfp(const std::string& b) : header(b.substr(0, kPlanBinaryHeaderBytes)) {
    const std::uint64_t index = get_u(b, 40, 8), n = get_u(b, 236, 4);
    for (std::uint64_t k = 0; k < n; ++k) {
      entries.push_back(b.substr(index + k * kPlanBinaryIndexEntryBytes, kPlanBinaryIndexEntryBytes));
      slices.push_back(b.substr(get_u(entries.back(), 0, 8), get_u(entries.back(), 8, 8)));
    }
    manifest = b.substr(get_u(b, 48, 8));
  }

  // The file; `keep_sizes` leaves each entry's slice size as the test set it.
  std::string bytes(bool keep_sizes = false) const {
    std::string out = header, index;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      std::string e = entries[k];
      put_u(e, 0, out.size(), 8);
      if (!keep_sizes) put_u(e, 8, slices[k].size(), 8);
      put_u(e, 52, checksum(e.substr(0, 52)) & 0xffffffffu, 4);
      put_u(e, 56, checksum(slices[k], checksum(e.substr(0, 56))), 8);
      out += slices[k];
      index += e;
    }
    put_u(out, 40, out.size(), 8);
    out += index;
    put_u(out, 48, out.size(), 8);
    put_u(out, 56, manifest.size(), 8);
    put_u(out, 64, checksum(manifest), 8);
    out += manifest;
    put_u(out, 32, out.size(), 8);
    put_u(out, 248, checksum(out.substr(0, 248)), 8);
    return out;
  }
};

// Refits every entry's check and checksum where it stands, its slice where it says.
void refit_entries(std::string& b) {
  const std::uint64_t index = get_u(b, 40, 8), n = get_u(b, 236, 4);
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::size_t e = index + k * kPlanBinaryIndexEntryBytes;
    put_u(b, e + 52, checksum(b.substr(e, 52)) & 0xffffffffu, 4);
    put_u(b, e + 56, checksum(b.substr(get_u(b, e, 8), get_u(b, e + 8, 8)), checksum(b.substr(e, 56))), 8);
  }
}

// The position after `n` varints from `at` in `s`.
std::size_t skip_varints(const std::string& s, std::size_t at, int n) {
  for (; n > 0; --n)
    while (static_cast<unsigned char>(s[at++]) & 0x80) {
    }
  return at;
}

// Where step 0 of a slice starts: after the sends and recvs (two varints each).
std::size_t first_step(const Cfp& c, std::size_t k) {
  return skip_varints(c.slices[k], 0, 2 * static_cast<int>(get_u(c.entries[k], 24, 4) + get_u(c.entries[k], 28, 4)));
}

// A plan of 6 ranks whose rank 2 holds a staged step for every way of giving src and dst (this
// rank, the peer, another rank) with both ops, besides its direct sends, receives and copy.
Plan every_code_plan() {
  const CommMatrix m = make_matrix(6, {{2, 3, 40}, {4, 2, 30}, {2, 2, 10}, {0, 1, 5}});
  Plan plan = mpitest::empty_plan(m, 9, "handmade-codes");
  mpitest::add_transfer(plan, 0, 2, 3, 2, 3, 0, 40);
  mpitest::add_transfer(plan, 1, 4, 2, 4, 2, 0, 30);
  mpitest::add_transfer(plan, 0, 0, 1, 0, 1, 0, 5);
  mpitest::add_copies(plan, m);
  RankSchedule& r = plan.ranks[2];
  r.staging_bytes = 1000;
  const Rank ways[] = {2, 5, 1};   // this rank, the peer of the staged steps, another rank
  Phase k = 0;   // the staged steps go into phases 2 to 8, after the direct ones
  Bytes at = 0;
  for (Op op : {Op::recv, Op::send})
    for (Rank src : ways)
      for (Rank dst : ways) r.steps.push_back({2 + k++ % 7, op, Buffer::stage, 5, src, dst, 7, 3, at += 10});
  r.max_outstanding = 4;
  mpitest::finish(plan);
  return plan;
}

}  // namespace

TEST_CASE("plan_binary_round_trip") {
  for (const Plan& plan : {sample_plan(), mpitest::two_hop_plan(gen_random_sparse(6, 0.6, 999, 5, true)),
                           make_plan(make_matrix(3, {}), {}), make_plan(make_matrix(1, {{0, 0, 100}}), {}),
                           make_plan(make_matrix(1, {}), {}), every_code_plan()}) {
    const fs::path file = test::fresh_path("rt.cfp");
    write_plan_binary(plan, file);
    CHECK(is_plan_binary(file));
    check_same(read_plan_binary(file), plan);
    for (Rank r = 0; r < plan.manifest.ranks; ++r) {
      const RankSchedule rs = read_rank_schedule_binary(file, r);
      CHECK(rank_schedule_json(rs) == rank_schedule_json(plan.ranks[r]));
      CHECK(rs.steps == plan.ranks[r].steps);
    }
    fs::remove(file);
  }
}

TEST_CASE("plan_binary_every_code_is_used_and_canonical") {
  // Rank 2's staged steps give src and dst each of the three ways, for receives and sends: the code
  // bytes written are exactly the canonical ones, and every one of them comes back.
  const Plan plan = every_code_plan();
  const fs::path file = test::fresh_path("codes.cfp");
  write_plan_binary(plan, file);
  const Cfp c(slurp(file));
  REQUIRE(c.entries.size() == 5);   // rank 5, only named by rank 2's staged steps, is idle
  const std::string& s = c.slices[2];
  std::set<unsigned> codes;
  std::size_t at = first_step(c, 2);
  for (const Step& st : plan.ranks[2].steps) {
    at = skip_varints(s, at, 1);   // the phase delta
    const unsigned code = static_cast<unsigned char>(s[at++]);
    codes.insert(code);
    CHECK((code & 3) == static_cast<unsigned>(st.op));
    CHECK((code >> 2 & 3) == static_cast<unsigned>(st.buffer));
    const unsigned src = st.src == 2 ? 1 : st.src == st.peer ? 2 : 0, dst = st.dst == 2 ? 1 : st.dst == st.peer ? 2 : 0;
    CHECK((code >> 4 & 3) == src);
    CHECK((code >> 6) == dst);
    at = skip_varints(s, at, 3 + (src == 0) + (dst == 0) + (st.buffer == Buffer::stage));
  }
  CHECK(at == s.size());
  CHECK(codes.size() == 2 * 9 + 3);   // 18 staged, a direct send, a direct receive, a copy
  CHECK(codes.count(0x56));           // the copy: op 2, buffer 1, src and dst this rank
  fs::remove(file);
}

TEST_CASE("plan_binary_values_at_the_limits") {
  // 2^24 ranks (of which two have a schedule), 2^24 phases, messages of 2^53 bytes, the largest
  // request window, staging offsets near 2^64: the streaming writer skips the idle ranks, and
  // every value comes back.
  const Rank p = static_cast<Rank>(kMaxRanks);
  const Bytes big = Bytes{1} << 53;
  Manifest m = sample_plan().manifest;
  m.ranks = p;
  m.phases = kMaxPhases;
  m.plan_hash = 0;
  std::vector<RankSchedule> rs(2);
  for (int k = 0; k < 2; ++k) {
    RankSchedule& r = rs[k];
    const Rank me = k == 0 ? 0 : p - 1, other = k == 0 ? p - 1 : 0;
    r.rank = me;
    r.ranks = p;
    r.phases = kMaxPhases;
    r.matrix_fingerprint = m.matrix_fingerprint;
    r.max_outstanding = kMaxWindow;
    r.staging_bytes = ~Bytes{0} - 1;
    r.sends = {{other, big}};
    r.recvs = {{other, big}};
    r.steps = {{0, Op::recv, Buffer::stage, other, p - 2, p - 3, big - 1, 1, ~Bytes{0} - 2},
               {kMaxPhases - 1, Op::recv, Buffer::recv, other, other, me, 0, big, kNoStage},
               {kMaxPhases - 1, Op::send, Buffer::send, other, me, other, 0, big, kNoStage}};
  }
  m.staging_bytes_max = rs[0].staging_bytes;
  const fs::path file = test::fresh_path("limits.cfp");
  {
    PlanBinaryWriter w(file, p, kMaxPhases, m.matrix_fingerprint);
    w.add(rs[0]);
    w.add(rs[1]);
    w.finish(m);
  }
  CHECK(fs::file_size(file) < 2048);
  CHECK(read_rank_schedule_binary(file, 0).steps == rs[0].steps);
  CHECK(rank_schedule_json(read_rank_schedule_binary(file, p - 1)) == rank_schedule_json(rs[1]));
  CHECK(read_rank_schedule_binary(file, p / 2).steps.empty());
  CHECK(read_manifest_binary(file).ranks == p);
  CHECK(read_error(file, p) == file.string() + ": header: the plan is for 16777216 ranks, it has no rank 16777216");
  // One rank more than the limit is refused in the header.
  std::string b = slurp(file);
  put_u(b, 16, kMaxRanks + 1, 4);
  put_u(b, 248, checksum(b.substr(0, 248)), 8);
  spit(file, b);
  CHECK(read_error(file, 0) == file.string() + ": header: rank count 16777217 out of range (1 to 2^24)");
  fs::remove(file);
}

TEST_CASE("plan_binary_is_deterministic_and_the_streaming_writer_writes_the_same_bytes") {
  const Plan plan = make_plan(make_matrix(9, {{0, 8, 100}, {3, 4, 10}, {4, 3, 10}, {8, 0, 64}, {5, 5, 7}}), {});
  const fs::path a = test::fresh_path("det-a.cfp"), b = test::fresh_path("det-b.cfp");
  write_plan_binary(plan, a);
  const std::string first = slurp(a);
  write_plan_binary(plan, a);   // replaces the old file
  CHECK(slurp(a) == first);
  {
    PlanBinaryWriter w(b, plan.manifest.ranks, plan.manifest.phases, plan.manifest.matrix_fingerprint);
    for (const RankSchedule& rs : plan.ranks)
      if (!rs.steps.empty()) w.add(rs);   // idle ranks skipped, not passed
    w.finish(plan.manifest);
  }
  CHECK(slurp(b) == first);
  CHECK(Cfp(first).entries.size() == 5);   // ranks 0, 3, 4, 5, 8
  fs::remove(a);
  fs::remove(b);
}

TEST_CASE("plan_binary_writer_without_finish_leaves_nothing") {
  const Plan plan = sample_plan();
  const fs::path dir = test::fresh_path("unfinished");
  fs::create_directories(dir);
  const fs::path file = dir / "p.cfp";
  auto only_entry = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
  };
  // Destroyed after a few ranks, and by an exception thrown mid-plan: no file, no temporary.
  {
    PlanBinaryWriter w(file, plan.manifest.ranks, plan.manifest.phases, plan.manifest.matrix_fingerprint);
    w.add(plan.ranks[0]);
    w.add(plan.ranks[1]);
    CHECK(only_entry().size() == 1);   // the temporary
  }
  CHECK(only_entry().empty());
  CHECK_THROWS_AS(([&] {
                    PlanBinaryWriter w(file, plan.manifest.ranks, plan.manifest.phases, plan.manifest.matrix_fingerprint);
                    w.add(plan.ranks[0]);
                    throw std::runtime_error("lowering rank 1 failed");
                  }()),
                  std::runtime_error);
  CHECK(only_entry().empty());
  // Over an existing plan: the old file stays as it was.
  write_plan_binary(plan, file);
  const std::string old = slurp(file);
  {
    PlanBinaryWriter w(file, plan.manifest.ranks, plan.manifest.phases, plan.manifest.matrix_fingerprint);
    for (const RankSchedule& rs : plan.ranks) w.add(rs);
  }
  CHECK(only_entry() == std::vector<std::string>{"p.cfp"});
  CHECK(slurp(file) == old);
  fs::remove_all(dir);
}

TEST_CASE("plan_binary_is_compact") {
  // A direct plan of a random matrix: about 8 bytes a step (phase delta, code, peer, offset, bytes)
  // and 4 a send or receive entry, against version 2's 48 and 16.
  const Plan plan = make_plan(gen_random_sparse(300, 0.2, 1 << 20, 11, false), {});
  const fs::path file = test::fresh_path("compact.cfp");
  write_plan_binary(plan, file);
  std::uint64_t steps = 0, peers = 0;
  for (const RankSchedule& rs : plan.ranks) steps += rs.steps.size(), peers += rs.sends.size() + rs.recvs.size();
  const std::string b = slurp(file);
  const std::uint64_t slices = get_u(b, 40, 8) - kPlanBinaryHeaderBytes;
  MESSAGE(steps << " steps, " << peers << " sends and recvs: " << slices << " bytes of slices, " << b.size() << " in all");
  CHECK(slices <= 10 * steps + 5 * peers);
  fs::remove(file);
}

TEST_CASE("plan_binary_keeps_the_request_window") {
  PlanOptions o;
  o.strategy = "throttled";
  o.max_outstanding = 16;
  const Plan plan = make_plan(gen_random_sparse(6, 0.6, 999, 5, false), o);
  const fs::path file = test::fresh_path("window.cfp");
  write_plan_binary(plan, file);
  for (Rank r = 0; r < 6; ++r) CHECK(read_rank_schedule_binary(file, r).max_outstanding == 16);
  check_same(read_plan_binary(file), plan);
  fs::remove(file);
}

TEST_CASE("plan_binary_staging_survives") {
  const Plan plan = mpitest::two_hop_plan(gen_random_sparse(5, 0.8, 400, 6, false));
  REQUIRE(plan.manifest.staging_bytes_max > 0);
  const fs::path file = test::fresh_path("stage.cfp");
  write_plan_binary(plan, file);
  bool staged = false;
  for (Rank r = 0; r < 5; ++r)
    for (const Step& s : read_rank_schedule_binary(file, r).steps) staged |= s.buffer == Buffer::stage;
  CHECK(staged);
  fs::remove(file);
}

TEST_CASE("convert_dir_binary_dir_is_byte_identical") {
  const Plan plan = sample_plan();
  const fs::path dir = test::fresh_path("a.plan"), file = test::fresh_path("a.cfp"), back = test::fresh_path("b.plan");
  write_plan_dir(plan, dir);
  convert_plan_dir_to_binary(dir, file);
  convert_plan_binary_to_dir(file, back);
  CHECK(slurp(dir / "manifest.json") == slurp(back / "manifest.json"));
  for (Rank r = 0; r < plan.manifest.ranks; ++r)
    CHECK(slurp(dir / rank_file_name(r, 7)) == slurp(back / rank_file_name(r, 7)));
  // Writing twice gives the same bytes (deterministic), and replaces the old file.
  const std::string first = slurp(file);
  convert_plan_dir_to_binary(dir, file);
  CHECK(slurp(file) == first);
  for (const fs::path& p : {dir, file, back}) fs::remove_all(p);
}

TEST_CASE("plan_binary_does_not_overwrite_other_files") {
  const fs::path file = test::fresh_path("notaplan.txt");
  spit(file, "precious");
  CHECK_THROWS_AS(write_plan_binary(sample_plan(), file), UsageError);
  CHECK_THROWS_AS(PlanBinaryWriter(file, 7, 1, "sha256:x"), UsageError);
  CHECK(slurp(file) == "precious");
  fs::remove(file);
}

TEST_CASE("plan_binary_truncated_anywhere") {
  const fs::path good = test::fresh_path("t.cfp"), bad = test::fresh_path("t-bad.cfp");
  write_plan_binary(sample_plan(), good);
  const std::string bytes = slurp(good);
  // Every prefix is rejected, by every reader, without crashing.
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    spit(bad, bytes.substr(0, len));
    CAPTURE(len);
    CHECK(read_error(bad, 3) != "no error");
    CHECK(whole_error(bad) != "no error");
  }
  spit(bad, bytes.substr(0, 100));
  CHECK(read_error(bad, 0) == bad.string() + ": header: truncated: the file has 100 bytes, a binary plan has at least 256");
  spit(bad, bytes.substr(0, bytes.size() - 1));
  CHECK(read_error(bad, 0) == bad.string() + ": header: the header says the file has " + std::to_string(bytes.size()) +
                                  " bytes but it has " + std::to_string(bytes.size() - 1) + " (truncated or appended to)");
  spit(bad, bytes + "x");
  CHECK(read_error(bad, 0).find("(truncated or appended to)") != std::string::npos);
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_a_flipped_byte_anywhere_is_an_input_error") {
  // Every byte of the file lies under a checksum: the header's, an entry's check, an entry's
  // checksum (entry and slice) or the manifest's. Each flip is refused by the whole-plan reader,
  // and by the rank reader of any rank whose search meets it; nothing throws anything else.
  const fs::path good = test::fresh_path("every.cfp"), bad = test::fresh_path("every-bad.cfp");
  write_plan_binary(mpitest::two_hop_plan(gen_random_sparse(5, 0.8, 400, 6, true)), good);
  const std::string bytes = slurp(good);
  const std::size_t manifest = get_u(bytes, 48, 8);
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (unsigned char mask : {0x01, 0x80}) {
      std::string b = bytes;
      b[at] = static_cast<char>(b[at] ^ mask);
      spit(bad, b);
      CAPTURE(at);
      const std::string whole = whole_error(bad);
      CHECK(whole.rfind(bad.string() + ": ", 0) == 0);
      bool some_rank = at >= manifest;   // the manifest is read by the whole-plan reader only
      for (Rank r = 0; r < 5; ++r) some_rank |= read_error(bad, r) != "no error";
      CHECK(some_rank);
    }
  }
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_flipped_byte_in_each_region") {
  const fs::path good = test::fresh_path("f.cfp"), bad = test::fresh_path("f-bad.cfp");
  write_plan_binary(sample_plan(), good);
  const std::string bytes = slurp(good);
  const std::size_t entry3 = get_u(bytes, 40, 8) + 3 * kPlanBinaryIndexEntryBytes;
  const std::size_t slice3 = get_u(bytes, entry3, 8);
  const std::size_t manifest = get_u(bytes, 48, 8);
  struct Case { std::size_t at; Rank rank; std::string expect; };
  for (const Case& c : {Case{20, 3, "header: checksum mismatch (file corrupted)"},
                        Case{100, 3, "header: checksum mismatch (file corrupted)"},
                        Case{entry3 + 50, 3, "index entry 3: checksum mismatch (file corrupted)"},
                        Case{entry3 + 57, 3, "rank 3 slice: checksum mismatch (file corrupted)"},
                        Case{slice3 + 1, 3, "rank 3 slice: checksum mismatch (file corrupted)"},
                        Case{slice3 + 9, 3, "rank 3 slice: checksum mismatch (file corrupted)"}}) {
    std::string b = bytes;
    b[c.at] = static_cast<char>(b[c.at] ^ 0x10);
    spit(bad, b);
    CAPTURE(c.at);
    CHECK(read_error(bad, c.rank) == bad.string() + ": " + c.expect);
  }
  // A damaged slice does not stop other ranks from reading theirs.
  {
    std::string b = bytes;
    b[slice3 + 1] = static_cast<char>(b[slice3 + 1] ^ 1);
    spit(bad, b);
    CHECK(read_error(bad, 2) == "no error");
    CHECK(whole_error(bad) == bad.string() + ": rank 3 slice: checksum mismatch (file corrupted)");
  }
  {
    std::string b = bytes;
    b[manifest + 3] = static_cast<char>(b[manifest + 3] ^ 1);
    spit(bad, b);
    CHECK(whole_error(bad) == bad.string() + ": manifest: checksum mismatch (file corrupted)");
  }
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_bad_magic_version_rank") {
  const fs::path good = test::fresh_path("m.cfp"), bad = test::fresh_path("m-bad.cfp");
  write_plan_binary(sample_plan(), good);
  std::string b = slurp(good);
  b[0] = 'X';
  spit(bad, b);
  CHECK(!is_plan_binary(bad));
  CHECK(read_error(bad, 0) == bad.string() + ": header: not a commfit binary plan (bad magic)");
  b = slurp(good);
  b[8] = 4;
  spit(bad, b);
  CHECK(read_error(bad, 0) == bad.string() + ": header: unsupported version 4 (this build reads version 3)");
  // Versions 1 and 2 are named as such, with what to do about them (the version is read before
  // the checksum, whose function changed in version 3). Such a file is still a plan to replace.
  for (char old : {1, 2}) {
    b[8] = old;
    spit(bad, b);
    CHECK(is_plan_binary(bad));
    CHECK(whole_error(bad) == bad.string() + ": header: unsupported version " + std::to_string(old) +
                                  " (this build reads version 3): plan the matrix again, or convert the file to a plan "
                                  "directory with the commfit that wrote it");
  }
  write_plan_binary(sample_plan(), bad);
  CHECK(read_error(bad, 0) == "no error");
  CHECK(read_error(good, 7) == good.string() + ": header: the plan is for 7 ranks, it has no rank 7");
  CHECK(read_error(test::fresh_path("missing.cfp"), 0).find("cannot open") != std::string::npos);
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_bad_slices_behind_valid_checksums") {
  // Someone rewrote a slice or an entry and refitted every checksum: the decoder's checks still
  // catch it, naming the rank and the step.
  const fs::path good = test::fresh_path("c.cfp"), bad = test::fresh_path("c-bad.cfp");
  const Plan plan = sample_plan();
  write_plan_binary(plan, good);
  const Cfp original(slurp(good));
  const std::size_t k = 2;   // every rank has an entry: entry 2 holds rank 2
  REQUIRE(!plan.ranks[2].steps.empty());
  REQUIRE(original.entries.size() == 7);
  const std::size_t step0 = first_step(original, k);
  auto refused = [&](const std::function<void(Cfp&)>& edit, bool keep_sizes = false) {
    Cfp c = original;
    edit(c);
    spit(bad, c.bytes(keep_sizes));
    const std::string one = read_error(bad, 2), whole = whole_error(bad);
    CHECK(one == whole);
    return one.substr(bad.string().size() + 2);
  };
  const std::size_t code_at = skip_varints(original.slices[k], step0, 1);   // after the phase delta
  const unsigned code = static_cast<unsigned char>(original.slices[k][code_at]);
  auto set_code = [&](unsigned c) { return [=](Cfp& f) { f.slices[k][code_at] = static_cast<char>(c); }; };
  CHECK(refused(set_code(code | 3)).find("rank 2 step 0: code byte 0x") == 0);
  CHECK(refused(set_code(code | 3)).find(": unknown op 3 (0 send, 1 recv, 2 copy)") != std::string::npos);
  CHECK(refused(set_code((code & ~0x0cu) | 0x0c)).find("unknown buffer 3") != std::string::npos);
  CHECK(refused(set_code(code | 0x30)).find("unknown way of giving src") != std::string::npos);
  CHECK(refused(set_code(code | 0xc0)).find("unknown way of giving dst") != std::string::npos);
  // A peer out of range, given in one byte.
  CHECK(refused([&](Cfp& c) { c.slices[k][code_at + 1] = 100; }) == "rank 2 step 0: peer 100 out of range");
  // The last byte cut off: the slice ends inside the last step.
  CHECK(refused([&](Cfp& c) { c.slices[k].pop_back(); }).find("truncated: the slice ends inside the") != std::string::npos);
  // One byte more: left over after the last step.
  CHECK(refused([&](Cfp& c) { c.slices[k] += '\0'; }) == "rank 2 slice: 1 bytes after the last step (the slice is longer than its counts say)");
  // The first peer of sends written in two bytes (0x80 | v, 0x00): overlong.
  CHECK(refused([&](Cfp& c) {
          std::string& s = c.slices[k];
          s.insert(1, 1, '\0');
          s[0] = static_cast<char>(s[0] | 0x80);
        }) == "rank 2 sends 0: peer: overlong varint (not the shortest encoding)");
  // Eleven bytes of 0xff: more than 64 bits.
  CHECK(refused([&](Cfp& c) { c.slices[k].replace(0, 1, std::string(10, '\xff') + '\x01'); }) ==
        "rank 2 sends 0: peer does not fit in 64 bits (varint too long)");
  // The first step's phase delta -1 (zigzag 1): a phase below 0.
  CHECK(refused([&](Cfp& c) { c.slices[k][step0] = 1; }) == "rank 2 step 0: the phase delta takes the phase out of range");
  // A step count one too high or one too low.
  CHECK(refused([&](Cfp& c) { put_u(c.entries[k], 16, get_u(c.entries[k], 16, 8) + 1, 8); }).find("rank 2 step ") == 0);
  CHECK(refused([&](Cfp& c) { put_u(c.entries[k], 16, get_u(c.entries[k], 16, 8) - 1, 8); }).find("bytes after the last step") != std::string::npos);
  // Counts the slice cannot hold, refused before anything is allocated.
  CHECK(refused([&](Cfp& c) { put_u(c.entries[k], 16, 1ull << 40, 8); }).find("index entry 2: a slice of ") == 0);
  // A slice larger than the slices' region.
  CHECK(refused([&](Cfp& c) { put_u(c.entries[k], 8, 1ull << 40, 8); }, true) == "index entry 2: slice range does not fit in the file's slices");
  // An entry for a rank with nothing to do (a window of 0, no steps, sends or recvs).
  CHECK(refused([&](Cfp& c) {
          c.slices[k].clear();
          for (int f : {16, 32}) put_u(c.entries[k], f, 0, 8);
          for (int f : {24, 28, 48}) put_u(c.entries[k], f, 0, 4);
        }) == "index entry 2: holds an idle rank (an idle rank has no entry)");
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_decoder_accepts_only_the_canonical_encoding") {
  // src and dst are given as this rank, as the peer or explicitly, in that order of preference:
  // any other way of writing the same step is refused, so a plan has exactly one encoding.
  const fs::path good = test::fresh_path("canon.cfp"), bad = test::fresh_path("canon-bad.cfp");
  const Plan plan = every_code_plan();
  write_plan_binary(plan, good);
  const Cfp original(slurp(good));
  auto refused = [&](const std::string& slice) {
    Cfp c = original;
    c.slices[2] = slice;
    spit(bad, c.bytes());
    return read_error(bad, 2).substr(bad.string().size() + 2);
  };
  // Step 0 of rank 2 is the direct send to 3 in phase 0: delta 0, code 0x90 (op 0 send, buffer 0
  // send, src 1 this rank, dst 2 the peer), peer 3, offset 0, bytes 40.
  const std::size_t at = first_step(original, 2);
  const std::string& s = original.slices[2];
  REQUIRE(s.substr(at, 5) == std::string("\x00\x90\x03\x00\x28", 5));
  // src written explicitly as 2 (this rank) instead of by the code.
  CHECK(refused(s.substr(0, at) + std::string("\x00\x80\x03\x02\x00\x28", 6) + s.substr(at + 5)) ==
        "rank 2 step 0: src 2 is given explicitly but is this rank (not the canonical encoding)");
  // dst written explicitly as 3 (the peer).
  CHECK(refused(s.substr(0, at) + std::string("\x00\x10\x03\x03\x00\x28", 6) + s.substr(at + 5)) ==
        "rank 2 step 0: dst 3 is given explicitly but is the peer (not the canonical encoding)");
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_out_of_order_steps_reach_the_format_check") {
  // The phase is a signed delta, so steps out of phase order (an edit) are written as they are
  // and refused by check_rank_schedule on reading, as a rank file's are.
  Plan plan = every_code_plan();
  std::swap(plan.ranks[2].steps.front(), plan.ranks[2].steps.back());
  const fs::path file = test::fresh_path("order.cfp");
  write_plan_binary(plan, file);
  CHECK(read_error(file, 2).find("rank 2 slice /steps/1: steps are not in phase order") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("plan_binary_index_holds_only_ranks_with_a_schedule") {
  // 4096 ranks, 3 messages: the index has an entry for the 4 ranks that send or receive, not 4096.
  const Rank p = 4096;
  const Plan plan = make_plan(make_matrix(p, {{0, p - 1, 100}, {5, 7, 10}, {p - 1, 0, 64}}), {});
  const fs::path good = test::fresh_path("sparse.cfp"), bad = test::fresh_path("sparse-bad.cfp");
  write_plan_binary(plan, good);
  const std::string bytes = slurp(good);
  const std::size_t entries = 4;
  CHECK(get_u(bytes, 236, 4) == entries);
  CHECK(bytes.size() < kPlanBinaryHeaderBytes + entries * kPlanBinaryIndexEntryBytes + 4096);   // manifest and slices are small
  check_same(plan, read_plan_binary(good));
  for (Rank r : {0, 1, 5, 6, 7, 2048, p - 2, p - 1}) {
    CAPTURE(r);
    CHECK(rank_schedule_json(read_rank_schedule_binary(good, r)) == rank_schedule_json(plan.ranks[r]));
  }
  CHECK(read_error(good, p) == good.string() + ": header: the plan is for 4096 ranks, it has no rank 4096");

  // Every entry a search visits is checked: a flipped rank field in entry 1 (rank 5), which the
  // search for rank 6 meets first, is an error, not "rank 6 is idle".
  const std::size_t entry1 = get_u(bytes, 40, 8) + 1 * kPlanBinaryIndexEntryBytes;
  std::string b = bytes;
  b[entry1 + 40] = static_cast<char>(b[entry1 + 40] ^ 0x02);
  spit(bad, b);
  CHECK(read_error(bad, 6) == bad.string() + ": index entry 1: checksum mismatch (file corrupted)");
  CHECK(whole_error(bad) == bad.string() + ": index entry 1: checksum mismatch (file corrupted)");

  // Entries out of rank order, each consistent on its own: the whole-plan reader refuses them.
  Cfp c(bytes);
  std::swap(c.entries[1], c.entries[2]);
  std::swap(c.slices[1], c.slices[2]);
  spit(bad, c.bytes());
  CHECK(whole_error(bad) == bad.string() + ": index entry 2: holds rank 5, not after the previous entry's (the index is in rank order)");
  // Slices that do not lie end to end in index order (entries 1 and 2 name each other's slice,
  // their checksums refitted): refused too.
  b = bytes;
  const std::size_t entry2 = entry1 + kPlanBinaryIndexEntryBytes;
  std::swap_ranges(b.begin() + static_cast<std::ptrdiff_t>(entry1), b.begin() + static_cast<std::ptrdiff_t>(entry1 + 16),
                   b.begin() + static_cast<std::ptrdiff_t>(entry2));
  refit_entries(b);
  spit(bad, b);
  CHECK(whole_error(bad).find(bad.string() + ": index entry 1: slice at byte ") == 0);
  fs::remove(good);
  fs::remove(bad);
}
