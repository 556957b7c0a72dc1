// The single-file binary plan: round trips (plan, directory <-> file), one-slice reads, and every
// kind of damage (truncation anywhere, a flipped byte in each region, appended bytes, a future
// version, bad field codes behind a valid checksum) rejected with an InputError naming the place.
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "mpi/handmade_plans.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace commfit;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("commfit-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::uint64_t get_u64(const std::string& s, std::size_t at) {
  std::uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(s[at + k]);
  return v;
}
void put_u64(std::string& s, std::size_t at, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) s[at + k] = static_cast<char>(v >> (8 * k));
}

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

}  // namespace

TEST_CASE("plan_binary_round_trip") {
  for (const Plan& plan : {sample_plan(), mpitest::two_hop_plan(gen_random_sparse(6, 0.6, 999, 5, true)),
                           make_plan(make_matrix(3, {}), {})}) {
    const fs::path file = scratch("rt.cfp");
    write_plan_binary(plan, file);
    CHECK(is_plan_binary(file));
    check_same(read_plan_binary(file), plan);
    for (Rank r = 0; r < plan.manifest.ranks; ++r) {
      const RankSchedule rs = read_rank_schedule_binary(file, r);
      CHECK(rank_schedule_json(rs) == rank_schedule_json(plan.ranks[r]));
    }
    fs::remove(file);
  }
}

TEST_CASE("plan_binary_keeps_the_request_window") {
  PlanOptions o;
  o.strategy = "throttled";
  o.max_outstanding = "16";
  const Plan plan = make_plan(gen_random_sparse(6, 0.6, 999, 5, false), o);
  const fs::path file = scratch("window.cfp");
  write_plan_binary(plan, file);
  for (Rank r = 0; r < 6; ++r) CHECK(read_rank_schedule_binary(file, r).max_outstanding == 16);
  check_same(read_plan_binary(file), plan);
  fs::remove(file);
}

TEST_CASE("plan_binary_staging_survives") {
  const Plan plan = mpitest::two_hop_plan(gen_random_sparse(5, 0.8, 400, 6, false));
  REQUIRE(plan.manifest.staging_bytes_max > 0);
  const fs::path file = scratch("stage.cfp");
  write_plan_binary(plan, file);
  bool staged = false;
  for (Rank r = 0; r < 5; ++r)
    for (const Step& s : read_rank_schedule_binary(file, r).steps) staged |= s.buffer == Buffer::stage;
  CHECK(staged);
  fs::remove(file);
}

TEST_CASE("convert_dir_binary_dir_is_byte_identical") {
  const Plan plan = sample_plan();
  const fs::path dir = scratch("a.plan"), file = scratch("a.cfp"), back = scratch("b.plan");
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
  const fs::path file = scratch("notaplan.txt");
  spit(file, "precious");
  CHECK_THROWS_AS(write_plan_binary(sample_plan(), file), UsageError);
  CHECK(slurp(file) == "precious");
  fs::remove(file);
}

TEST_CASE("plan_binary_truncated_anywhere") {
  const fs::path good = scratch("t.cfp"), bad = scratch("t-bad.cfp");
  write_plan_binary(sample_plan(), good);
  const std::string bytes = slurp(good);
  // Every prefix is rejected, by every reader, without crashing.
  for (std::size_t len = 0; len < bytes.size(); len += (len < 400 ? 1 : 97)) {
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

TEST_CASE("plan_binary_flipped_byte_in_each_region") {
  const fs::path good = scratch("f.cfp"), bad = scratch("f-bad.cfp");
  write_plan_binary(sample_plan(), good);
  const std::string bytes = slurp(good);
  const std::size_t entry3 = kPlanBinaryHeaderBytes + 3 * kPlanBinaryIndexEntryBytes;
  const std::size_t slice3 = get_u64(bytes, entry3);
  const std::size_t manifest = get_u64(bytes, 48);
  struct Case { std::size_t at; Rank rank; std::string expect; };
  for (const Case& c : {Case{20, 3, "header: checksum mismatch (file corrupted)"},
                        Case{100, 3, "header: checksum mismatch (file corrupted)"},
                        Case{entry3 + 50, 3, "index entry 3: checksum mismatch (file corrupted)"},
                        Case{entry3 + 57, 3, "rank 3 slice: checksum mismatch (file corrupted)"},
                        Case{slice3 + 5, 3, "rank 3 slice: checksum mismatch (file corrupted)"},
                        Case{slice3 + 40, 3, "rank 3 slice: checksum mismatch (file corrupted)"}}) {
    std::string b = bytes;
    b[c.at] = static_cast<char>(b[c.at] ^ 0x10);
    spit(bad, b);
    CAPTURE(c.at);
    CHECK(read_error(bad, c.rank) == bad.string() + ": " + c.expect);
  }
  // A damaged slice does not stop other ranks from reading theirs.
  {
    std::string b = bytes;
    b[slice3 + 5] = static_cast<char>(b[slice3 + 5] ^ 1);
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
  const fs::path good = scratch("m.cfp"), bad = scratch("m-bad.cfp");
  write_plan_binary(sample_plan(), good);
  std::string b = slurp(good);
  b[0] = 'X';
  spit(bad, b);
  CHECK(!is_plan_binary(bad));
  CHECK(read_error(bad, 0) == bad.string() + ": header: not a commfit binary plan (bad magic)");
  b = slurp(good);
  b[8] = 3;
  spit(bad, b);
  CHECK(read_error(bad, 0) == bad.string() + ": header: unsupported version 3 (this build reads version 2)");
  CHECK(read_error(good, 7) == good.string() + ": header: the plan is for 7 ranks, it has no rank 7");
  CHECK(read_error(scratch("missing.cfp"), 0).find("cannot open") != std::string::npos);
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_bad_fields_behind_a_valid_checksum") {
  // Someone rewrote a step and fixed up the checksum: the field checks still catch it.
  const fs::path good = scratch("c.cfp"), bad = scratch("c-bad.cfp");
  const Plan plan = sample_plan();
  write_plan_binary(plan, good);
  const std::string bytes = slurp(good);
  const Rank r = 2;
  REQUIRE(!plan.ranks[r].steps.empty());
  const std::size_t entry = kPlanBinaryHeaderBytes + r * kPlanBinaryIndexEntryBytes;
  const std::size_t slice = get_u64(bytes, entry);
  const std::size_t first_step = slice + (plan.ranks[r].sends.size() + plan.ranks[r].recvs.size()) * kPlanBinaryPeerBytes;
  auto refit = [&](std::string& b) {
    const auto check = static_cast<std::uint32_t>(plan_binary_checksum(b.data() + entry, 52));
    for (int k = 0; k < 4; ++k) b[entry + 52 + k] = static_cast<char>(check >> (8 * k));
    std::uint64_t sum = plan_binary_checksum(b.data() + entry, 56);
    sum = plan_binary_checksum(b.data() + slice, get_u64(b, entry + 8), sum);
    put_u64(b, entry + 56, sum);
  };
  std::string b = bytes;
  b[first_step + 4] = 7;   // op code
  refit(b);
  spit(bad, b);
  CHECK(read_error(bad, r) == bad.string() + ": rank 2 step 0: unknown op or buffer code");
  b = bytes;
  b[first_step + 8] = 100;   // peer
  refit(b);
  spit(bad, b);
  CHECK(read_error(bad, r) == bad.string() + ": rank 2 step 0: peer 100 out of range");
  b = bytes;
  put_u64(b, entry + 16, get_u64(b, entry + 16) + 1);   // step count no longer matches the size
  refit(b);
  spit(bad, b);
  CHECK(read_error(bad, r) == bad.string() + ": index entry 2: slice size does not match its counts");
  fs::remove(good);
  fs::remove(bad);
}

TEST_CASE("plan_binary_index_holds_only_ranks_with_a_schedule") {
  // 4096 ranks, 3 messages: the index has an entry for the 4 ranks that send or receive, not 4096.
  const Rank p = 4096;
  const Plan plan = make_plan(make_matrix(p, {{0, p - 1, 100}, {5, 7, 10}, {p - 1, 0, 64}}), {});
  const fs::path good = scratch("sparse.cfp"), bad = scratch("sparse-bad.cfp");
  write_plan_binary(plan, good);
  const std::string bytes = slurp(good);
  const std::size_t entries = 4;
  CHECK(bytes.size() < kPlanBinaryHeaderBytes + entries * kPlanBinaryIndexEntryBytes + 4096);   // manifest and slices are small
  check_same(plan, read_plan_binary(good));
  for (Rank r : {0, 1, 5, 6, 7, 2048, p - 2, p - 1}) {
    CAPTURE(r);
    CHECK(rank_schedule_json(read_rank_schedule_binary(good, r)) == rank_schedule_json(plan.ranks[r]));
  }
  CHECK(read_error(good, p) == good.string() + ": header: the plan is for 4096 ranks, it has no rank 4096");

  // Every entry a search visits is checked: a flipped rank field in entry 1 (rank 5), which the
  // search for rank 6 meets first, is an error, not "rank 6 is idle".
  const std::size_t entry1 = kPlanBinaryHeaderBytes + 1 * kPlanBinaryIndexEntryBytes;
  std::string b = bytes;
  b[entry1 + 40] = static_cast<char>(b[entry1 + 40] ^ 0x02);
  spit(bad, b);
  CHECK(read_error(bad, 6) == bad.string() + ": index entry 1: checksum mismatch (file corrupted)");
  CHECK(whole_error(bad) == bad.string() + ": index entry 1: checksum mismatch (file corrupted)");

  // Entries out of rank order, each consistent on its own: the whole-plan reader refuses them.
  b = bytes;
  const std::size_t entry2 = entry1 + kPlanBinaryIndexEntryBytes;
  std::swap_ranges(b.begin() + static_cast<std::ptrdiff_t>(entry1), b.begin() + static_cast<std::ptrdiff_t>(entry2), b.begin() + static_cast<std::ptrdiff_t>(entry2));
  spit(bad, b);
  CHECK(whole_error(bad) == bad.string() + ": index entry 2: holds rank 5, not after the previous entry's (the index is in rank order)");
  fs::remove(good);
  fs::remove(bad);
}
