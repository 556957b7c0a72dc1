// Plan: the lowered, per-rank form of a schedule, exactly what the plan files of docs/FORMAT.md §3
// ("Output: the plan") hold and what the executor replays. Rank r's steps say, phase by phase,
// which pieces r sends, receives or copies and where each piece lives on r.
#pragma once

// Only the scalar types: the executor includes this header, and it must not see Eigen
// (ir/comm_matrix.h) or the schedule passes build.
#include "ir/plan_contract.h"
#include "ir/types.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace commfit {

enum class Op : std::uint8_t { send, recv, copy };
enum class Buffer : std::uint8_t { send, recv, stage };

inline constexpr Bytes kNoStage = ~Bytes{0};

// At most 2^24 phases in a plan (docs/DECISIONS.md "Limits and hardening"): readers and the
// executor keep per-phase tables, so a hostile phase count is refused before they allocate.
inline constexpr Phase kMaxPhases = Phase{1} << 24;

// A plan's request window is 0 (none) or in [2, kMaxWindow]: the executor allocates that many
// requests.
inline constexpr std::uint32_t kMaxWindow = std::uint32_t{1} << 20;

struct Step {
  Phase phase = 0;
  Op op = Op::send;
  Buffer buffer = Buffer::send;
  Rank peer = 0;          // the other rank (== this rank for copy)
  Rank src = 0;           // original message src -> dst
  Rank dst = 0;
  Bytes offset = 0;       // byte range [offset, offset + bytes) of that message
  Bytes bytes = 0;
  Bytes stage_offset = kNoStage;  // only for buffer == stage
  friend bool operator==(const Step&, const Step&) = default;
};

struct PeerBytes {
  Rank peer = 0;
  Bytes bytes = 0;
  friend bool operator==(const PeerBytes&, const PeerBytes&) = default;
};

struct RankSchedule {
  Rank rank = 0;
  Rank ranks = 0;
  Phase phases = 0;
  std::string matrix_fingerprint;
  Bytes staging_bytes = 0;
  // The plan's request window: the executor keeps at most this many requests in flight (its
  // max_outstanding, docs/EXECUTOR.md) unless its options say otherwise; 0 = none (post all).
  std::uint32_t max_outstanding = 0;
  std::vector<PeerBytes> sends;   // row `rank` of COM, nonzero, in peer order (self included)
  std::vector<PeerBytes> recvs;   // column `rank` of COM, nonzero, in peer order (self included)
  std::vector<Step> steps;        // in phase order; within a phase: recv, send, copy
  // The order in which the rank posts its sends (the plan's posting order): every peer its send
  // steps address, once each; a phase's sends go out in the order of their peers here. Empty: the
  // executor's rotated order (the peers above the rank first, ascending, then wrapping around).
  // A request window (the plan's or the executor's) posts in its own order instead.
  std::vector<Rank> send_order;
};

struct CostSummary {
  double tau_s = 2e-6;            // the cost model's defaults (ir/cost_model.h)
  double bandwidth_Bps = 1e10;
  double estimate_s = 0;
  double lower_bound_s = 0;
};

struct Manifest {
  Rank ranks = 0;
  Phase phases = 0;
  std::string strategy;
  // What the plan promises and was priced with (written into "options" with the provenance).
  PlanContract contract;
  // Free-form provenance: what the strategy records about how it shaped the plan (its algorithm,
  // seed, chunk...), an object. Read by people; code reads the contract.
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  std::string matrix_fingerprint;
  CostSummary cost;
  Bytes staging_bytes_max = 0;
  std::string planner;
  // plan_hash(ranks) when the plan was made; 0 = none (plans written before it existed). The
  // readers and the executor compare it with the rank schedules they load.
  std::uint64_t plan_hash = 0;
};

struct Plan {
  Manifest manifest;
  std::vector<RankSchedule> ranks;   // ranks[r].rank == r
};

// A 64-bit hash of everything a rank schedule says (its fields, not its text), so that a rank file
// and its binary slice hash alike. It catches edits and mix-ups, not forgery (not cryptographic).
std::uint64_t rank_schedule_hash(const RankSchedule& r);
// Rank r's term of the plan hash. The plan hash is the sum (mod 2^64) of every rank's term, so
// that the ranks of a job combine theirs with one MPI_Allreduce; it is never 0.
std::uint64_t plan_hash_term(std::uint64_t rank_hash, Rank r);
std::uint64_t plan_hash(const std::vector<RankSchedule>& ranks);
// The plan hash summed one rank schedule at a time, as a plan streams by.
class PlanHash {
 public:
  void add(const RankSchedule& r) { sum_ += plan_hash_term(rank_schedule_hash(r), r.rank); }
  std::uint64_t value() const { return sum_ == 0 ? 1 : sum_; }

 private:
  std::uint64_t sum_ = 0;
};
// "h64:" and 16 lower-case hex digits; parse_plan_hash gives 0 for anything else.
std::string plan_hash_text(std::uint64_t h);
std::uint64_t parse_plan_hash(const std::string& text);

const char* to_string(Op op);
const char* to_string(Buffer b);

// Order of steps inside a rank schedule: (phase, op recv<send<copy, peer, src, dst, offset).
bool step_less(const Step& a, const Step& b);

// One thing wrong with one rank's schedule. `place` is a JSON pointer into its rank file
// ("/steps/4/phase", "/sends/0/1"); `rule` is 0 for a format problem, else the verifier's rule
// it breaks (passes/verify.h: 1 delivery, 2 holding, 6 staging overlap, 7 declared figures).
struct ScheduleProblem {
  int rule = 0;
  std::string place;
  std::string what;
};

// What to check beyond the format, and how many problems to collect before stopping.
struct RankCheckOptions {
  bool tiling = true;     // rule 1, this rank's side: the pieces tile every message of sends and recvs once
  bool staging = true;    // rules 2, 6, 7: staged sends forward bytes staged earlier; live ranges disjoint; staging_bytes is their end
  std::size_t max_problems = 1;
};
// What a plan reader checks: the format only, so that `commfit verify` can still read a plan
// that breaks a rule and name the rule.
inline constexpr RankCheckOptions kFormatOnly{false, false, 1};

// Checks what one rank can check of its schedule alone, without the other ranks' schedules or
// the matrix; the plan readers, the executor's load and the verifier all call it. Format:
// `rank` below `ranks`; max_outstanding 0 or in [2, kMaxWindow]; send_order empty or the peers of
// the send steps, each once; sends and recvs with peers in range and increasing, bytes in
// [1, 2^53], the self message the same in both; steps in step_less order, phases below
// `phases`, ranks in range, at least one byte, each op with a buffer it may use (a copy copies
// the self message into the receive buffer; only a message's src sends from its send buffer,
// only its dst receives into its receive buffer; a rank never sends to itself), pieces of this
// rank's own messages inside the sends or recvs entry, stage_offset on exactly the staged steps
// and inside staging_bytes. The rule checks (1, 2, 6, and 7: staging_bytes is the highest staged range's
// end, within the bytes staged) run only on a sound format. Returns the problems found, or none.
std::vector<ScheduleProblem> check_rank_schedule(const RankSchedule& rs, const RankCheckOptions& options = {});

}  // namespace commfit
