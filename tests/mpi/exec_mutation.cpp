// Mutation test of the executor's load-time checks: many random edits of a plan, each
// loaded and run by every rank. An edit must either be refused on every rank with the same
// message, or deliver exactly MPI_Alltoallv's bytes. A rank that receives wrong bytes without an
// error (a silent corruption), ranks that disagree, or a hang (the ctest time limit) fails.
//
//   mpirun -np N exec_mutation json EDITS SEED     one-digit edits of one rank file's JSON text
//   mpirun -np N exec_mutation binary EDITS SEED   one field of one step changed in a .cfp, its
//                                                  checksums recomputed (as `commfit convert` does)
//
// The plans are two-stage (forwarding through staging areas: where edits once went through silently)
// and direct ones, of a random matrix with self-messages, planned by every rank alike. Two of the
// three carry no plan hash, so that their edits meet the executor's load checks; on the third,
// with its hash, every edit must be refused (by the hash if no earlier check does).
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "planner/pipeline.h"
#include "support.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace commfit;
using namespace commfit::mpitest;
namespace fs = std::filesystem;

namespace {

int rank = 0, size = 0;

// This rank's outcome of loading `path` and running it once: "OK", "REFUSED <message>" or
// "WRONG <where>".
std::string run_once(const std::string& path, const CommMatrix& m, std::uint64_t iter) {
  Buffers b = make_buffers(m, rank);
  fill_send(b, rank, iter);
  reference(b, MPI_COMM_WORLD);
  try {
    auto ex = exec::Executor::load(path, MPI_COMM_WORLD);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
  } catch (const exec::Error& e) {
    return std::string("REFUSED ") + e.what();
  }
  const std::string diff = compare(b, rank, iter);
  return diff.empty() ? "OK" : "WRONG " + diff;
}

// Every rank's outcome, on rank 0.
std::vector<std::string> gather(const std::string& mine) {
  std::vector<char> buf(512, '\0');
  std::memcpy(buf.data(), mine.data(), std::min(mine.size(), buf.size() - 1));
  std::vector<char> all(rank == 0 ? buf.size() * std::size_t(size) : 0);
  MPI_Gather(buf.data(), int(buf.size()), MPI_CHAR, all.data(), int(buf.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; rank == 0 && r < size; ++r) out.emplace_back(all.data() + std::size_t(r) * buf.size());
  return out;
}

// A one-digit edit of rank file `r`'s text: the k-th digit becomes another digit.
std::string edit_digit(const std::string& text, std::mt19937_64& g, std::string& what) {
  std::vector<std::size_t> digits;
  for (std::size_t k = 0; k < text.size(); ++k)
    if (text[k] >= '0' && text[k] <= '9') digits.push_back(k);
  const std::size_t k = digits[g() % digits.size()];
  char d = char('0' + g() % 9);
  if (d >= text[k]) ++d;
  std::string out = text;
  out[k] = d;
  std::size_t line_start = text.rfind('\n', k);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  what = "byte " + std::to_string(k) + " '" + text[k] + "' -> '" + d + "' in: " + text.substr(line_start, std::min<std::size_t>(text.find('\n', k) - line_start, 160));
  return out;
}

// One field of one step of rank `r` changed, in memory; the binary writer recomputes the checksums.
void edit_step(RankSchedule& rs, std::mt19937_64& g, std::string& what) {
  if (rs.steps.empty()) {
    rs.staging_bytes += 1 + g() % 64;
    what = "staging_bytes grown";
    return;
  }
  const std::size_t j = g() % rs.steps.size();
  Step& s = rs.steps[j];
  const std::uint64_t delta = 1 + g() % 3;
  const int field = int(g() % 9);
  static const char* names[] = {"phase", "peer", "src", "dst", "offset", "bytes", "stage_offset", "buffer", "op"};
  auto bump = [&](auto& v, std::uint64_t mod) { v = static_cast<std::remove_reference_t<decltype(v)>>((std::uint64_t(v) + delta) % mod); };
  switch (field) {
    case 0: bump(s.phase, std::max<std::uint64_t>(rs.phases, 1)); break;
    case 1: bump(s.peer, std::uint64_t(rs.ranks)); break;
    case 2: bump(s.src, std::uint64_t(rs.ranks)); break;
    case 3: bump(s.dst, std::uint64_t(rs.ranks)); break;
    case 4: s.offset = g() % 2 ? s.offset + delta : (s.offset >= delta ? s.offset - delta : s.offset + delta); break;
    case 5: s.bytes = g() % 2 ? s.bytes + delta : (s.bytes > delta ? s.bytes - delta : s.bytes + delta); break;
    case 6:
      if (s.buffer == Buffer::stage) s.stage_offset = (s.stage_offset + delta) % std::max<Bytes>(rs.staging_bytes, 1);
      else s.phase = (s.phase + 1) % std::max<Phase>(rs.phases, 1);
      break;
    case 7: s.buffer = s.buffer == Buffer::send ? Buffer::recv : s.buffer == Buffer::recv ? Buffer::send : Buffer::recv; break;
    default: s.op = s.op == Op::send ? Op::recv : Op::send; break;
  }
  what = "rank " + std::to_string(rs.rank) + " step " + std::to_string(j) + " " + names[field];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || (std::strcmp(argv[1], "json") != 0 && std::strcmp(argv[1], "binary") != 0)) {
    if (rank == 0) std::fprintf(stderr, "usage: exec_mutation json|binary EDITS SEED\n");
    MPI_Finalize();
    return 2;
  }
  const bool binary = std::strcmp(argv[1], "binary") == 0;
  const long edits = std::atol(argv[2]);
  const std::uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const fs::path scratch = shared_scratch("commfit-mutation");

  const CommMatrix m = random_matrix(size, 0.6, 3000, 4242 + seed, true);
  // Without their plan hash (as plans from before it), so that the edits meet the load checks the
  // hash would otherwise pre-empt; and one with it, where every edit must be refused.
  // (Every edit changes what a schedule says: a digit of JSON text or a field of a step.)
  std::vector<Plan> plans;
  for (const char* strategy : {"two-stage", "direct", "two-stage"}) {
    PlanOptions o;
    o.strategy = strategy;
    plans.push_back(make_plan(m, o));
    if (plans.size() < 3) plans.back().manifest.plan_hash = 0;
  }

  std::vector<fs::path> dirs;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    dirs.push_back(scratch / ("p" + std::to_string(k) + ".plan"));
    if (rank == 0 && !binary) write_plan_dir(plans[k], dirs.back());
  }
  MPI_Barrier(MPI_COMM_WORLD);

  std::map<std::string, long> tally;
  long failures = 0;
  for (long i = 0; i < edits; ++i) {
    std::mt19937_64 g(splitmix64(seed * 1000003 + std::uint64_t(i)));   // the same on every rank
    const Plan& base = plans[std::size_t(i) % plans.size()];
    const Rank r = Rank(g() % std::uint64_t(size));
    std::string what, path, original;
    bool noop = false;   // a field bumped round to its own value
    if (binary) {
      Plan edited = base;
      edit_step(edited.ranks[std::size_t(r)], g, what);
      noop = edited.ranks[std::size_t(r)].steps == base.ranks[std::size_t(r)].steps &&
             edited.ranks[std::size_t(r)].staging_bytes == base.ranks[std::size_t(r)].staging_bytes;
      path = (scratch / "m.cfp").string();
      if (rank == 0) write_plan_binary(edited, path);
    } else {   // the plan directories are written once; the edited rank file is put back after the run
      path = dirs[std::size_t(i) % plans.size()].string();
      original = rank_schedule_json(base.ranks[std::size_t(r)]);
      if (rank == 0) std::ofstream(fs::path(path) / rank_file_name(r, size), std::ios::binary | std::ios::trunc) << edit_digit(original, g, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<std::string> outcomes = gather(run_once(path, m, std::uint64_t(i)));
    if (!binary && rank == 0) std::ofstream(fs::path(path) / rank_file_name(r, size), std::ios::binary | std::ios::trunc) << original;
    if (rank == 0) {
      bool all_ok = true, all_refused = true, same = true;
      for (const std::string& o : outcomes) {
        all_ok = all_ok && o == "OK";
        all_refused = all_refused && o.rfind("REFUSED ", 0) == 0;
        same = same && o == outcomes[0];
      }
      const bool hashed = base.manifest.plan_hash != 0 && !noop;
      if (hashed && all_refused && same) {   // by the hash, or by a check that comes before it
        ++tally[outcomes[0].find("the plan was written with") != std::string::npos ? "with a plan hash: refused by the hash"
                                                                                   : "with a plan hash: refused by an earlier check"];
      } else if (hashed) {
        ++tally["WRONG: an edit of a plan with a hash not refused by it"];
        if (++failures <= 10) std::fprintf(stderr, "FAIL edit %ld (%s): rank 0: %s\n", i, what.c_str(), outcomes[0].c_str());
      } else if (all_ok) {
        ++tally["delivered MPI_Alltoallv's bytes"];
      } else if (all_refused && same) {
        ++tally["refused on every rank with the same message"];
      } else {
        ++tally[all_refused ? "refused with different messages" : "WRONG BYTES or a partial refusal"];
        if (++failures <= 10) {
          std::fprintf(stderr, "FAIL edit %ld (%s plan, %s):\n", i, base.manifest.options.value("strategy", "?").c_str(), what.c_str());
          for (int q = 0; q < size; ++q) std::fprintf(stderr, "  rank %d: %s\n", q, outcomes[std::size_t(q)].c_str());
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long all_failures = failures;
  MPI_Bcast(&all_failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("exec_mutation %s, %ld edits, %d ranks, seed %llu:\n", binary ? "binary" : "json", edits, size,
                static_cast<unsigned long long>(seed));
    for (const auto& [k, v] : tally) std::printf("  %6ld  %s\n", v, k.c_str());
    std::printf("%s\n", all_failures == 0 ? "PASS: no silent corruption" : "FAIL");
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
