// libcommfit_pmpi.so: MPI_Alltoallv (MPI_Alltoall, MPI_Neighbor_alltoallv, and the Fortran MPI_ALLTOALLV and MPI_ALLTOALL) through commfit without a code change
// (docs/EXECUTOR.md, "The PMPI interposer"). Load it with LD_PRELOAD, or link it before MPI.
//
// No intercepted call waits for a collective of the interposer's own (the lagged path, the
// default). Each call runs what every rank already agreed on: MPI, or a cached whole and direct
// plan replayed with the call's own counts (Executor::execute_sized: both ends of every message
// know its size, so any counts that are MPI's are replayed right). On one call in every few the
// ranks agree (runtime/stepped_allreduce.h: recursive doubling over point-to-point messages on a
// private duplicate of the communicator, started by the next call, one step a call) on a 128-bit
// signature of that call's whole count matrix (each rank folds a hash of its own byte counts into
// it), a signature of where the counts are nonzero, and its time in the call; the calls after it
// carry it on as far as its messages have come, the one log2(p) calls after its start completes
// it, long done, and every rank takes the same decisions from it: a signature seen
// COMMFIT_THRESHOLD times is planned in-job (runtime/in_job.hpp) and its executor cached on the
// communicator; the plan replays the next calls (those of other sizes of its sparsity pattern
// too); a plan measured slower than MPI_Alltoallv on its pattern (the slowest rank's times) is
// dropped for MPI. A plan that forwards pieces (two-stage, node-aware, parked or split) cannot
// replay counts other than its own without an agreement: a communicator that gets one agrees on
// every call from then on,
// as COMMFIT_CHECK=1 makes every communicator do (the checking mode): one small MPI_Allreduce per
// call decides whether every rank can take commfit's path and which pattern it is; a pattern whose
// sparsity is a planned one's is adapted from that plan (runtime/adapt.hpp), or re-planned when
// the cost model says the adapted plan is too far off. Calls go to PMPI untouched for
// MPI_IN_PLACE, intercommunicators and one rank (and in the checking mode non-contiguous datatypes,
// a pattern that failed to plan, or one beyond COMMFIT_MAX_PLANS). Because every decision follows
// agreed values, all ranks always take the same path. The settings that decide it are compared at
// MPI_Init (a rank that differs turns the interposer off everywhere); planning stops on a
// communicator once it costs more than COMMFIT_PLAN_BUDGET of the time in its calls (a flag in the
// agreement), and a communicator whose plans replay too few of its calls steps aside to MPI with
// no agreement at all. Under MPI_THREAD_MULTIPLE, threads may call on different communicators at
// once (see "Threads" below); COMMFIT_THREAD_MULTIPLE=0 turns the interposer off for such programs.
// MPI_Finalize prints a summary on rank 0 (COMMFIT_VERBOSE=0 silences it).
//
// One file because it is one shared library whose parts (the settings and their check at
// MPI_Init, the per-communicator state, the lagged agreement, the paths a call runs, the
// summary) share file-local state that must be per rank under SMPI's privatization and hidden
// from the program it is loaded into. What needs none of that lives beside it: the count
// signatures (pmpi_signature.h), the stepped agreement (stepped_allreduce.h), and the per-call
// choice (call_policy.{h,cpp}: which path a call takes, when a plan is dropped, when MPI and the
// direct exchange are timed again, the budget's hold, the agreements' spacing), an object of each
// communicator's state that makes no MPI call, so a unit test drives it (tests/test_call_policy.cpp).

#include "backends/atomic_output.h"
#include "backends/exec/exec_support.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/near_miss.h"
#include "planner/pipeline.h"
#include "runtime/adapt.hpp"
#include "runtime/call_policy.h"
#include "runtime/in_job.hpp"
#include "runtime/pmpi_signature.h"
#include "runtime/stepped_allreduce.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using commfit::exec::Executor;
using commfit::runtime::InJobOptions;

// The root of an in-job plan plans on a thread of its own (the planner makes no MPI call). Not
// under SimGrid SMPI (bench/smpi/build_pmpi.sh): its ranks share one process whose globals it
// switches under them, and its simulated clock does not charge the planner's time anyway.
#ifdef COMMFIT_PMPI_NO_THREADS
constexpr bool kPlanInBackground = false;
#else
constexpr bool kPlanInBackground = true;
#endif

struct Config {
  bool on = false;                // set by MPI_Init (C or Fortran) unless COMMFIT_PMPI=0
  int threshold = 3;              // COMMFIT_THRESHOLD: plan a pattern on its Nth call (>= 1)
  long long plan_after = 64;      // COMMFIT_PLAN_AFTER: no planning on a communicator before its Nth
                                  // call (the lagged path): a program timing its alternatives at
                                  // set-up times them without commfit's planning in their calls
  int verbose = 1;                // COMMFIT_VERBOSE: 0 nothing, 1 the summary, 2 every decision
  std::size_t max_plans = 8;      // COMMFIT_MAX_PLANS: planned patterns per communicator (then the
                                  // least recently used one's plan is dropped)
  bool adapt = true;              // COMMFIT_ADAPT: reuse a plan for new sizes of its pattern
  bool check = false;             // COMMFIT_CHECK: agree on every call (the checking mode)
  bool speculate = false;         // COMMFIT_SPECULATE: try the last pattern before agreeing (checking mode)
  double slack = 1.25;            // COMMFIT_ADAPT_SLACK: adapted estimate / LB at most this x the plan's
  std::vector<std::string> plan_files;   // COMMFIT_PLAN: plans made by `commfit plan` (a list, ':' between),
                                         // each communicator served by the first made for its size
  std::string record;             // COMMFIT_RECORD: directory for every pattern's matrix
  double plan_budget = 0.1;       // COMMFIT_PLAN_BUDGET: planning stops on a communicator once its
                                  // planning time exceeds this fraction of the time in its calls
                                  // (or the job's, of the job's calls)
  bool record_force = false;      // COMMFIT_RECORD_FORCE: record into a directory the checks refuse
  bool plan_thread = kPlanInBackground;   // COMMFIT_PLAN_THREAD: the root plans on a thread while the calls go on
  bool thread_multiple = true;    // COMMFIT_THREAD_MULTIPLE: serve programs initialised with
                                  // MPI_THREAD_MULTIPLE (0: off for them, every call to MPI)
  bool concurrent = false;        // MPI_THREAD_MULTIPLE provided: threads may be in calls at once
                                  // (only then is the one-caller rule checked: an atomic exchange
                                  // per call, under perf 0.4 % of a small exchange's time at np 2)
  InJobOptions options;           // COMMFIT_STRATEGY, COMMFIT_TOPOLOGY, COMMFIT_NETWORK, COMMFIT_OPTIONS
  std::string why_off;            // set when the interposer turned itself off
};

Config config;
int world_rank = 0;

// Threads (MPI_THREAD_MULTIPLE). MPI lets threads call collectives on different communicators at
// once, never on one: so a communicator's state (CommState, reached through its attribute) has one
// caller at a time and takes no lock, and what a rank shares between its communicators is atomic
// (the counters, Sum) or behind `shared` (the table of live states, the summary's last strategy,
// the plan files said refused, the record directory), held for no MPI call. Under SimGrid SMPI
// (COMMFIT_PMPI_NO_THREADS) the ranks are contexts of one thread whose globals are privatized per
// rank but whose thread-local variables are not: the re-entrancy flag is a plain global there.
// The interposer's thread-local variables are few and small, and the library is loaded with the
// program (LD_PRELOAD or linked): the initial-exec model reaches them without a call to
// __tls_get_addr on every access (under perf, a quarter of the interposer's own time per call).
#ifdef COMMFIT_PMPI_NO_THREADS
#define COMMFIT_PER_THREAD
#else
#define COMMFIT_PER_THREAD thread_local __attribute__((tls_model("initial-exec")))
#endif
std::mutex shared;

// Set while the interposer's own code runs on this thread: the executor and the planner's gathers
// call MPI collectives (an MPI_Alltoall among them), which must go straight to MPI, not round again.
COMMFIT_PER_THREAD bool inside = false;
struct Inside {
  Inside() { inside = true; }
  ~Inside() { inside = false; }
};

// A rank's running sum that threads on different communicators add to at once. Relaxed: each
// value is read alone (the budget's test, the summary at MPI_Finalize).
class Sum {
 public:
  double operator+=(double x) {
    double old = v_.load(std::memory_order_relaxed);
    while (!v_.compare_exchange_weak(old, old + x, std::memory_order_relaxed)) {
    }
    return old + x;
  }
  double operator++() { return *this += 1; }
  operator double() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// What one rank saw, summed over its communicators (those freed, and at MPI_Finalize the rest).
struct Totals {
  Sum patterns, planned, plan_failed, from_file, adapted, replanned, evicted;
  Sum calls, replayed, to_mpi, not_eligible, at_once, missed, mpi_kept, other_counts, direct;
  // Planning: all of it (in calls and on the root's thread; the budget counts both), and the part
  // on the root's thread, beside the calls.
  Sum plan_seconds, thread_plan_seconds, saved_seconds, call_seconds, budget_stops, stepped_aside;
  // The time saved from the quartiles of the timed calls (MPI's low less the plan's high, and the
  // other way round), and the patterns it was measured on.
  Sum saved_low, saved_high, saved_patterns;
  // The verdict, by what each pattern ended with (kept): its plan, the direct exchange or MPI,
  // each weighted by the pattern's calls; and, over the patterns of each, the time per call of
  // what was kept and of MPI (or, where MPI was kept, of the plan or direct exchange it beat).
  Sum kept_plan, kept_direct, kept_mpi;
  Sum plan_time, plan_mpi_time, direct_time, direct_mpi_time, beaten_plan_time, beaten_mpi_time, beaten_direct_time,
      beaten_direct_mpi_time;
  std::string chosen;   // the last planned pattern's strategy, for the summary (under `shared`)
};
Totals totals;

using commfit::pmpi::mix;

using commfit::pmpi::CallPolicy;
using commfit::pmpi::PatternRecord;
using commfit::pmpi::Signature;

// One pattern of one communicator: what the agreements measured of it (PatternRecord, the
// policy's), and its plan.
struct Pattern : PatternRecord {
  std::uint64_t last_use = 0;        // the communicator's call count at its last call
  Signature structure;               // where its counts are nonzero
  std::unique_ptr<Executor> executor;
  commfit::RankSchedule schedule;    // this rank's part of the plan, for adapting it
  double estimate_s = 0;             // the plan's estimate under the planner's cost model
};

// A topology communicator's neighbour lists, as MPI_Neighbor_alltoallv maps them onto an
// MPI_Alltoallv over the communicator (found and agreed on its first neighbourhood call).
struct Neighbours {
  bool known = false, mappable = false;   // mappable: one message per peer, on every rank
  std::vector<int> sources, destinations;
  std::vector<int> sc, sd, rc, rd;        // the full-length counts and displacements of a call
};

struct CommState {
  MPI_Comm agree = MPI_COMM_NULL;    // private duplicate for the agreement
  std::atomic<bool> busy{false};     // a thread is in an intercepted call on the communicator
  bool passthrough = false;          // intercommunicator or one rank: nothing to do
  int rank = 0, size = 0;
  std::map<Signature, Pattern> patterns;
  std::size_t planned = 0;
  std::uint64_t calls = 0;
  std::uint64_t clock_calls = 0;                 // calls that made a CallClock (its sampling)
  Pattern* last = nullptr;                       // the last pattern replayed: tried first
  bool missed = false;                           // the last try missed: do not try on the next call
  std::vector<int> poison;                       // counts no plan has (-1): a certain miss
  std::vector<char> kept;                        // a speculative try's receive segments, as they were
  std::unique_ptr<Executor> file_plan;           // COMMFIT_PLAN, when it is a plan for this size
  std::vector<std::int64_t> file_sends, file_recvs;
  commfit::pmpi::CountView view;                 // this rank's counts, as of its last eligible call
  bool file_fits = false;                        // ... are the plan file's
  // The choice of each call's path from agreed values (runtime/call_policy.h), with the planning
  // budget's sums and the lagged agreements' spacing.
  CallPolicy policy{{config.threshold, config.plan_after, config.max_plans, config.plan_budget, !config.record.empty() || !config.plan_files.empty()}};
  // The lagged path: the agreement on one call (started when the next call begins, one step taken
  // in each call after that, its decisions taken by every rank at the start of the call `steps()`
  // calls after its start), what that call ran, and what every rank runs on the next one.
  std::unique_ptr<commfit::pmpi::SteppedAllreduce> agreement;
  bool lag_open = false;                         // an agreement due whose decisions are not taken yet
  bool lag_start_due = false;                    // ... not started yet: its words are `lag_words`
  std::uint64_t lag_words[commfit::pmpi::SteppedAllreduce::kWords] = {};
  // The plan being made for `job_pattern` while the calls go on (the lagged path): the root plans
  // on a thread of its own; every rank installs it at the agreement that says the root is done.
  std::unique_ptr<commfit::runtime::PlanningJob> job;
  Pattern* job_pattern = nullptr;
  int job_agreements = 0;                        // agreements started since it was
  Executor* sampled_ran = nullptr;               // what the call it agrees on replayed (null: MPI)
  double sampled_weight = 0;                     // the calls since the agreement before it
  // The direct exchange (AC): an executor of no plan, whose sized replays post every message at
  // once. Calls with no plan in use run it or MPI, whichever the agreed measurements of the last
  // agreed pattern found faster (the policy's use_direct and trial).
  std::unique_ptr<Executor> direct;
  bool direct_failed = false;
  Neighbours neighbours;
  // MPI_Alltoall's counts and displacements as an MPI_Alltoallv's, for the counts of the last call.
  struct Uniform {
    int sendcount = -1, recvcount = -1;
    std::vector<int> sc, sd, rc, rd;
  } uniform;
  Executor* current = nullptr;                   // the plan the next call replays; null: MPI
  Pattern* current_pattern = nullptr;            // its pattern (null for COMMFIT_PLAN's plan)
  bool agreed_only = false;                      // a plan that is not whole and direct: agree on every call
  std::vector<std::int64_t> sized[4];            // a sized call's send and receive bytes and byte displacements
  std::vector<char> packed_send, packed_recv;    // non-contiguous datatypes, packed and unpacked around a replay
  // The lagged path's calls and their time since they were last added to `totals` (whose atomic
  // sums other communicators' threads add to as well): added at each agreement and when the
  // communicator is retired, not on every call.
  struct Tally {
    double calls = 0, to_mpi = 0, direct = 0, replayed = 0, from_file = 0, call_seconds = 0;
  } tally;
  void add_tally() {
    if (tally.calls == 0 && tally.call_seconds == 0) return;
    totals.calls += tally.calls, totals.to_mpi += tally.to_mpi, totals.direct += tally.direct;
    totals.replayed += tally.replayed, totals.at_once += tally.replayed, totals.from_file += tally.from_file;
    totals.call_seconds += tally.call_seconds;
    tally = Tally{};
  }
  bool over_budget() const { return policy.over_budget(totals.plan_seconds, totals.call_seconds); }
};

// Adds an intercepted call's time, less its planning, to its communicator's and the job's (the
// planning budget's "time in calls" and the summary's). A clock reading costs tens of
// nanoseconds on a virtual machine's clock (kvm-clock here: two per call were a quarter of the
// interposer's own time per call at np 2), so a communicator's first kAllTimed calls are all
// timed and after them one call in kSampleEvery, drawn by a hash of its index (a program whose
// calls alternate in any period is still sampled fairly), counting for kSampleEvery calls.
// Planning inside a call is counted whether it is timed or not.
struct CallClock {
  static constexpr std::uint64_t kAllTimed = 256, kSampleEvery = 8;
  CommState* s;
  double weight = s->clock_calls < kAllTimed                                   ? 1.0
                  : (commfit::pmpi::mix(s->clock_calls) % kSampleEvery) == 0 ? double(kSampleEvery)
                                                                              : 0.0;
  double start = weight > 0 ? PMPI_Wtime() : 0, planning = 0;
  void planned(double seconds) {
    planning += seconds;
    s->policy.planned(seconds);
    totals.plan_seconds += seconds;
  }
  ~CallClock() {
    ++s->clock_calls;
    if (weight == 0) return;
    const double t = weight * std::max(0.0, PMPI_Wtime() - start - planning);
    s->policy.called(t);
    s->tally.call_seconds += t;
  }
};

int keyval = MPI_KEYVAL_INVALID;
std::vector<std::pair<MPI_Comm, CommState*>> live;   // for MPI_Finalize: the states still attached
MPI_Op fold_op = MPI_OP_NULL;

// The communicators this thread called on last and their states: a call on one of them skips the
// attribute lookup (PMPI_Comm_get_attr's hash table, under perf half the interposer's own time per
// call at np 2). An entry holds while no state has been retired since it was made: `retirements`
// counts them, so that a freed communicator's handle, which MPI may give to a new one, is looked
// up again. Four entries: a program cycles through a few communicators (a world, its halves, a
// graph).
std::atomic<std::uint64_t> retirements{0};
struct StateCache {
  static constexpr int kEntries = 4;
  MPI_Comm comm[kEntries] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  CommState* state[kEntries] = {};
  std::uint64_t epoch = 0;   // `retirements` when the entries were made
  int next = 0;              // the entry replaced next
  CommState* find(MPI_Comm c, std::uint64_t now) {
    if (epoch != now) {
      std::fill(std::begin(state), std::end(state), nullptr);
      epoch = now;
      return nullptr;
    }
    for (int k = 0; k < kEntries; ++k)
      if (state[k] && comm[k] == c) return state[k];
    return nullptr;
  }
  void keep(MPI_Comm c, CommState* s) {
    comm[next] = c, state[next] = s;
    next = (next + 1) % kEntries;
  }
};
COMMFIT_PER_THREAD StateCache state_cache;

void retire(CommState* s) {
  retirements.fetch_add(1, std::memory_order_acq_rel);
  s->agreement.reset();   // waits for an agreement still under way (every rank has it)
  s->job.reset();         // and for a plan being made (the root's thread)
  s->add_tally();
  for (auto& [sig, p] : s->patterns) {
    // Time saved: the plan's replays against MPI's time per call on the same pattern. (Not the
    // direct exchange's calls: they run where the samples are closest, and on an oversubscribed
    // node the sampled calls' waiting, times many calls, swamps the difference.)
    if (p.mpi.calls > 0 && p.plan.calls > 0) {
      const double n = p.replayed_calls;
      const commfit::pmpi::Timings::Spread m = p.mpi.spread(), r = p.plan.spread();
      totals.saved_seconds += n * (p.mpi.per_call() - p.plan.per_call());
      totals.saved_low += n * (m.low - r.high), totals.saved_high += n * (m.high - r.low);
      ++totals.saved_patterns;
    }
    const double w = p.weight, mpi_t = p.mpi.per_call();
    if (p.mpi.calls == 0 || w <= 0) {
      // never timed under MPI: the verdict has nothing to say of it
    } else if (p.executor && !p.mpi_kept && p.plan.calls > 0 && !s->passthrough) {
      totals.kept_plan += w, totals.plan_time += w * p.plan.per_call(), totals.plan_mpi_time += w * mpi_t;
    } else if (p.direct_better() && !s->passthrough) {   // no plan, or its plan dropped for the direct exchange
      totals.kept_direct += w, totals.direct_time += w * p.direct.per_call(), totals.direct_mpi_time += w * mpi_t;
    } else {
      totals.kept_mpi += w;   // a communicator stepped aside runs MPI, whatever its patterns measured
      // Its plan measured slower, or the direct exchange, both past their first call (not a
      // communicator stepped aside or a plan never judged).
      if (!s->passthrough && p.mpi_kept && p.plan.calls > 0) totals.beaten_plan_time += w * p.plan.per_call(), totals.beaten_mpi_time += w * mpi_t;
      if (!s->passthrough && p.baseline_known()) totals.beaten_direct_time += w * p.direct.per_call(), totals.beaten_direct_mpi_time += w * mpi_t;
    }
    p.executor.reset();   // frees the executor's duplicate
  }
  s->file_plan.reset();
  if (s->agree != MPI_COMM_NULL) PMPI_Comm_free(&s->agree);
  {
    const std::lock_guard lock(shared);
    for (auto it = live.begin(); it != live.end(); ++it)
      if (it->second == s) {
        live.erase(it);
        break;
      }
  }
  delete s;
}

int delete_state(MPI_Comm, int, void* value, void*) {
  retire(static_cast<CommState*>(value));
  return MPI_SUCCESS;
}

// v[0]: OR of flags; v[1..4]: XOR of the ranks' parts of the two signatures; v[5] (the lagged
// path's): the largest of the ranks' call times, doubles >= 0, whose bits order as integers do.
void fold_words(const std::uint64_t* a, std::uint64_t* b, int len) {
  b[0] |= a[0];
  for (int k = 1; k < std::min(len, 5); ++k) b[k] ^= a[k];
  if (len > 5) b[5] = std::max(a[5], b[5]);
}
void fold(void* in, void* inout, int* len, MPI_Datatype*) {
  fold_words(static_cast<const std::uint64_t*>(in), static_cast<std::uint64_t*>(inout), *len);
}
void fold_lagged(const std::uint64_t* in, std::uint64_t* inout) {
  fold_words(in, inout, commfit::pmpi::SteppedAllreduce::kWords);
}

void say(const char* fmt, const std::string& text) {
  if (world_rank == 0 && config.verbose > 0) std::fprintf(stderr, fmt, text.c_str());
}

// The interposer's variables. Every rank must see the same values (COMMFIT_VERBOSE excepted): they
// decide which collectives each call makes, so MPI_Init compares them (settings_agree).
constexpr const char* kVariables[] = {"COMMFIT_PMPI",        "COMMFIT_THRESHOLD", "COMMFIT_MAX_PLANS", "COMMFIT_ADAPT",
                                      "COMMFIT_ADAPT_SLACK", "COMMFIT_CHECK",     "COMMFIT_SPECULATE", "COMMFIT_PLAN",      "COMMFIT_PLAN_BUDGET",
                                      "COMMFIT_RECORD",      "COMMFIT_RECORD_FORCE", "COMMFIT_PLAN_THREAD", "COMMFIT_THREAD_MULTIPLE", "COMMFIT_PLAN_AFTER", "COMMFIT_OPTIONS",   "COMMFIT_STRATEGY",  "COMMFIT_TOPOLOGY",
                                      "COMMFIT_NETWORK",     "COMMFIT_MACHINE"};
constexpr const char* kVerbose = "COMMFIT_VERBOSE";

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// A whole number in [lo, hi]; anything else (text, a sign where none fits, out of range) refused.
long long whole(const char* name, long long lo, long long hi) {
  const char* v = env(name);
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || errno == ERANGE || x < lo || x > hi)
    throw commfit::UsageError(std::string(name) + "=" + v + ": expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return x;
}

// 0/1, off/on, no/yes (any case).
bool yes_no(const char* name) {
  std::string v = env(name);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "no") return false;
  throw commfit::UsageError(std::string(name) + "=" + env(name) + ": expected 0 or 1 (off/on, no/yes)");
}

// A finite number >= lo (a whole lo: 0 or 1 here).
double number(const char* name, int lo) {
  const char* v = env(name);
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (*end != '\0' || !(x >= lo) || !std::isfinite(x))
    throw commfit::UsageError(std::string(name) + "=" + v + ": expected a number >= " + std::to_string(static_cast<int>(lo)));
  return x;
}

// COMMFIT_ variables in the environment that the interposer does not read but nearly matches one it
// does: named once, with the near miss (they are ignored).
void name_misspelt(int rank) {
  std::vector<std::string> known(std::begin(kVariables), std::end(kVariables));
  known.emplace_back(kVerbose);
  const std::vector<std::string> planner = {"COMMFIT_VERIFY_EACH", "COMMFIT_PROGRESS_MESSAGES"};   // read by the planner
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("COMMFIT_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end() || std::find(planner.begin(), planner.end(), name) != planner.end()) continue;
    const std::string hint = commfit::did_you_mean(name, known);
    if (!hint.empty() && rank == 0) std::fprintf(stderr, "commfit-pmpi: %s is not a variable of the interposer%s; it is ignored\n", name.c_str(), hint.c_str());
  }
}

void read_config() {
  try {
    if (env(kVerbose)) config.verbose = static_cast<int>(whole(kVerbose, 0, 3));
    config.on = !env("COMMFIT_PMPI") || yes_no("COMMFIT_PMPI");
    if (env("COMMFIT_THRESHOLD")) config.threshold = static_cast<int>(whole("COMMFIT_THRESHOLD", 1, 1000000000));
    if (env("COMMFIT_PLAN_AFTER")) config.plan_after = whole("COMMFIT_PLAN_AFTER", 0, 1000000000);
    if (env("COMMFIT_MAX_PLANS")) config.max_plans = static_cast<std::size_t>(whole("COMMFIT_MAX_PLANS", 1, 1000000));
    if (env("COMMFIT_ADAPT")) config.adapt = yes_no("COMMFIT_ADAPT");
    if (env("COMMFIT_CHECK")) config.check = yes_no("COMMFIT_CHECK");
    if (env("COMMFIT_SPECULATE")) config.speculate = yes_no("COMMFIT_SPECULATE");
    if (env("COMMFIT_ADAPT_SLACK")) config.slack = number("COMMFIT_ADAPT_SLACK", 1);
    if (env("COMMFIT_PLAN_BUDGET")) config.plan_budget = number("COMMFIT_PLAN_BUDGET", 0);
    if (const char* v = env("COMMFIT_PLAN")) {
      std::string list = v;
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(':', at), list.size());
        if (end > at) config.plan_files.push_back(list.substr(at, end - at));
        at = end + 1;
      }
    }
    if (const char* v = env("COMMFIT_RECORD")) config.record = v;
    if (env("COMMFIT_RECORD_FORCE")) config.record_force = yes_no("COMMFIT_RECORD_FORCE");
    if (env("COMMFIT_PLAN_THREAD")) config.plan_thread = kPlanInBackground && yes_no("COMMFIT_PLAN_THREAD");
    if (env("COMMFIT_THREAD_MULTIPLE")) config.thread_multiple = yes_no("COMMFIT_THREAD_MULTIPLE");
    config.options.plan.strategy = "auto";   // the interposer's default: the cheapest candidate
    if (const char* v = env("COMMFIT_OPTIONS")) {
      InJobOptions parsed;
      try {
        parsed = commfit::runtime::parse_in_job_options(std::string("strategy=auto ") + v);
      } catch (const std::exception& e) {
        throw commfit::UsageError(std::string("COMMFIT_OPTIONS: ") + e.what());
      }
      config.options.plan = parsed.plan;
      config.options.memory_per_rank = parsed.memory_per_rank;
      config.options.keep = parsed.keep;
      config.options.root = parsed.root;
      config.options.detect_nodes = parsed.detect_nodes;
      config.options.given = parsed.given;
    }
    // Agreed calls need no count check of the executor's own (the signature says the counts are
    // the plan's); speculative tries need the executor's collective one.
    config.options.exec.count_check = config.speculate ? commfit::exec::CountCheck::every_call : commfit::exec::CountCheck::first_call;
    for (const auto& [name, key] : {std::pair{"COMMFIT_STRATEGY", "strategy"}, {"COMMFIT_TOPOLOGY", "topology"}, {"COMMFIT_NETWORK", "network"}})
      if (const char* v = env(name)) {
        try {
          commfit::runtime::set_in_job_option(config.options, key, v);
        } catch (const std::exception& e) {
          throw commfit::UsageError(std::string(name) + ": " + e.what());
        }
      }
    // The machine file last: its figures apply where no variable gave one.
    if (const char* v = env("COMMFIT_MACHINE")) {
      try {
        commfit::runtime::set_in_job_option(config.options, "machine", v);
      } catch (const std::exception& e) {
        throw commfit::UsageError(std::string("COMMFIT_MACHINE: ") + e.what());
      }
    }
    // A strategy or option value the planner would refuse is refused now, not once per pattern.
    try {
      commfit::runtime::check_in_job_options(config.options);
    } catch (const std::exception& e) {
      throw commfit::UsageError(std::string(env("COMMFIT_STRATEGY") ? "COMMFIT_STRATEGY" : "COMMFIT_OPTIONS") + ": " + e.what());
    }
  } catch (const std::exception& e) {
    config.on = false;
    config.why_off = e.what();
  }
}

// Collective over MPI_COMM_WORLD, once, at MPI_Init: every rank's COMMFIT_* values are compared with
// rank 0's, and every rank learns whether any rank is off. A rank whose values differ, or which is
// off for a reason of its own (a bad value, MPI_THREAD_MULTIPLE), prints its one line; then every
// rank is off: otherwise one rank would call MPI and another plan, and the job would hang.
void settings_agree() {
  std::string mine;
  for (const char* name : kVariables) mine += std::string(env(name) ? env(name) : "") + '\n';
  int n = static_cast<int>(std::min<std::size_t>(mine.size(), 1 << 20));
  PMPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string first = world_rank == 0 ? mine.substr(0, static_cast<std::size_t>(n)) : std::string(static_cast<std::size_t>(n), '\0');
  PMPI_Bcast(first.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::string differs;
  std::istringstream theirs(first), ours(mine);
  for (const char* name : kVariables) {
    std::string a, b;
    std::getline(theirs, a), std::getline(ours, b);
    if (a != b && differs.empty())
      differs = std::string(name) + (b.empty() ? " is unset" : "=" + b) + " here but " + (a.empty() ? "unset" : a) + " on rank 0";
  }
  // The lowest rank off for a reason of its own (a bad value, MPI_THREAD_MULTIPLE), the lowest rank
  // whose values differ from rank 0's, and whether any rank is off at all (COMMFIT_PMPI=0 included).
  const bool own_reason = !config.why_off.empty();
  int mine_flags[3] = {own_reason ? world_rank : INT_MAX, differs.empty() ? INT_MAX : world_rank, config.on && !own_reason ? 1 : 0};
  int lowest[3] = {0, 0, 0};
  PMPI_Allreduce(mine_flags, lowest, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const bool off = lowest[0] != INT_MAX || lowest[1] != INT_MAX || lowest[2] == 0;
  if (!off) return;
  config.on = false;
  if (config.verbose == 0) return;
  if (lowest[1] == world_rank)
    std::fprintf(stderr, "commfit-pmpi: rank %d: %s: every rank must see the same COMMFIT_* settings; off on every rank, every call goes to MPI\n",
                 world_rank, differs.c_str());
  if (lowest[0] == world_rank)
    std::fprintf(stderr, "commfit-pmpi: rank %d: off (%s); every call goes to MPI, on every rank\n", world_rank, config.why_off.c_str());
}

void after_init(int provided) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  read_config();
  config.concurrent = provided == MPI_THREAD_MULTIPLE;
  if (config.on && provided == MPI_THREAD_MULTIPLE && !config.thread_multiple) {
    config.on = false;
    config.why_off = "MPI_THREAD_MULTIPLE with COMMFIT_THREAD_MULTIPLE=0";
  }
  settings_agree();
  name_misspelt(world_rank);
  if (!config.on) return;
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, nullptr);
  PMPI_Op_create(fold, 1, &fold_op);
}

MPI_Comm agree_comm(MPI_Comm comm, CommState* s);

// Whether `item` is new to `said` (a rank's list shared by its threads), adding it.
bool first_time(std::vector<std::string>& said, const std::string& item) {
  const std::lock_guard lock(shared);
  if (std::find(said.begin(), said.end(), item) != said.end()) return false;
  said.push_back(item);
  return true;
}

// The state of `comm`, made on its first intercepted call (collective: every rank calls together).
CommState* state_of(MPI_Comm comm) {
  const std::uint64_t now = retirements.load(std::memory_order_acquire);
  if (CommState* known = state_cache.find(comm, now)) return known;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &value, &found);
  if (found) {
    state_cache.keep(comm, static_cast<CommState*>(value));
    return static_cast<CommState*>(value);
  }
  auto* s = new CommState;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  PMPI_Comm_rank(comm, &s->rank);
  PMPI_Comm_size(comm, &s->size);
  s->passthrough = inter || s->size < 2;
  if (!s->passthrough) {
    // The job's planning budget spent on any rank: this communicator goes to MPI from the start
    // (one MPI_Allreduce on the communicator itself, in place of the duplicate and an agreement
    // per call; every rank is in this call, so the collective matches).
    int spent = s->policy.spent(totals.plan_seconds, totals.call_seconds) ? 1 : 0, any = 0;
    PMPI_Allreduce(&spent, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) s->passthrough = true, ++totals.budget_stops;
  }
  if (!s->passthrough) {
    // COMMFIT_PLAN's plans, in order: the first made for this communicator's size serves it, when
    // every rank reads its schedule (agreed before the executor, which is collective, is built) and
    // the executor loads it with every check of Executor::load, the plan's recorded hash included
    // (it agrees on its own errors). A plan for another size is passed over quietly; a plan
    // refused is said once, not once per communicator.
    static std::vector<std::string> said;
    for (const std::string& path : config.plan_files) {
      bool other_size = false;
      try {
        std::string origin, error;
        commfit::RankSchedule rs;
        try {
          rs = commfit::exec::read_plan_rank(path, s->rank, s->size, origin);
          other_size = rs.ranks != s->size;
        } catch (const std::exception& e) {
          error = e.what();
        }
        commfit::exec::agree(agree_comm(comm, s), commfit::exec::Error::Kind::plan, error);
        s->file_plan = std::make_unique<Executor>(Executor::load(path, rs, comm, config.options.exec));
        s->file_sends.assign(static_cast<std::size_t>(s->size), 0);
        s->file_recvs.assign(static_cast<std::size_t>(s->size), 0);
        for (const auto& pb : rs.sends) s->file_sends[static_cast<std::size_t>(pb.peer)] = static_cast<std::int64_t>(pb.bytes);
        for (const auto& pb : rs.recvs) s->file_recvs[static_cast<std::size_t>(pb.peer)] = static_cast<std::int64_t>(pb.bytes);
        // A plan that forwards pieces replays its own counts only: the calls agree (whole_direct
        // is agreed at load).
        if (!s->file_plan->whole_direct()) s->agreed_only = true;
        break;
      } catch (const std::exception& e) {
        s->file_plan.reset();
        if (s->rank == 0 && other_size && config.verbose > 1)
          std::fprintf(stderr, "commfit-pmpi: COMMFIT_PLAN's %s not used on a %d-rank communicator: %s\n", path.c_str(), s->size, e.what());
        else if (!other_size && first_time(said, path)) {
          if (s->rank == 0 && config.verbose > 0)
            std::fprintf(stderr, "commfit-pmpi: COMMFIT_PLAN's %s refused (not used): %s\n", path.c_str(), e.what());
        }
      }
    }
  }
  PMPI_Comm_set_attr(comm, keyval, s);
  state_cache.keep(comm, s);
  const std::lock_guard lock(shared);
  live.emplace_back(comm, s);
  return s;
}

// The communicator's private duplicate for its agreements, made on first use (collective: every
// use is in the same call on every rank), so that a communicator used for a few calls and freed
// costs no duplicate. Its stepped agreement comes with it.
MPI_Comm agree_comm(MPI_Comm comm, CommState* s) {
  if (s->agree == MPI_COMM_NULL) {
    PMPI_Comm_dup(comm, &s->agree);
    s->agreement = std::make_unique<commfit::pmpi::SteppedAllreduce>(s->agree, 1, fold_lagged);
  }
  return s->agree;
}

// COMMFIT_RECORD: rank 0 of a communicator writes the matrix of each of its new patterns. The
// directory is opened and checked once per process (backends/atomic_output.h,
// Directory::private_dir): refused, it is said once and nothing is recorded (the gathers go on:
// the other ranks cannot know). A file is private (0600): the variable may point into a shared
// scratch, and a matrix shows what the application communicates.
void record_matrix(const commfit::CommMatrix& m, int ranks, std::uint64_t signature) {
  static std::optional<commfit::Directory> dir;
  static bool refused = false;
  const std::lock_guard lock(shared);
  if (refused) return;
  if (!dir) {
    try {
      dir.emplace(commfit::Directory::private_dir(config.record, config.record_force));
    } catch (const commfit::UsageError& e) {
      refused = true;
      say(config.record_force ? "commfit-pmpi: COMMFIT_RECORD=%s; not recording\n"
                              : "commfit-pmpi: COMMFIT_RECORD=%s; not recording (COMMFIT_RECORD_FORCE=1 records there anyway)\n",
          e.what());
      return;
    }
  }
  char name[64];
  std::snprintf(name, sizeof name, "alltoallv-p%d-%016" PRIx64 ".json", ranks, signature);
  commfit::write_file_atomic(commfit::matrix_json(m), *dir, name, 0600);
}

// The pattern of an agreed call (v: the agreement's words), made on its first call: counted (the
// calls the agreement stands for: `lagged`, those of the gap before it too), and its matrix
// recorded (COMMFIT_RECORD; collective). `is_new` says it was made.
Pattern& agreed_pattern(CommState* s, const std::uint64_t* v, bool lagged, bool& is_new) {
  const Signature sig{v[1], v[2]};
  auto [it, made] = s->patterns.try_emplace(sig);
  is_new = made;
  Pattern& p = it->second;
  p.last_use = s->calls;
  p.calls += lagged ? s->policy.counted_calls(sig) : 1;
  if (!is_new) return p;
  p.structure = {v[3], v[4]};
  // Sizes that never repeat must not grow the table without bound: past 1024 signatures, forget
  // those without a plan (the same ones on every rank).
  if (s->patterns.size() > 1024)
    for (auto k = s->patterns.begin(); k != s->patterns.end();)
      k = !k->second.executor && &k->second != &p && &k->second != s->job_pattern ? s->patterns.erase(k) : std::next(k);
  ++totals.patterns;
  if (config.verbose > 2) std::fprintf(stderr, "commfit-pmpi: rank %d: new pattern %016" PRIx64 " on a %d-rank communicator\n", world_rank, sig.a, s->size);
  if (!config.record.empty()) {   // the pattern's matrix, once, for offline `commfit plan`
    try {
      const commfit::CommMatrix m = commfit::runtime::gather_matrix(s->agree, s->view.sendbytes(), s->view.recvbytes(), 0);
      if (s->rank == 0) record_matrix(m, s->size, sig.a);
    } catch (const std::exception& e) {
      say("commfit-pmpi: recording a pattern failed: %s\n", e.what());
    }
  }
  return p;
}

// Plans pattern `p` (signature `sig`) from this rank's counts as of its last call (s->view): adapted
// from `model`'s plan when there is one, else planned in-job; first drops the least recently used
// plan when COMMFIT_MAX_PLANS are cached. Collective: every rank calls it in the same call. Its time,
// failed or not, counts against the planning budget.
void make_room(CommState* s, const Pattern* model) {
  if (s->planned >= config.max_plans) {
    // Make room: drop the least recently used plan (the same one on every rank).
    Pattern* lru = nullptr;
    for (auto& [other_sig, other] : s->patterns)
      if (other.executor && &other != model && (!lru || other.last_use < lru->last_use)) lru = &other;
    if (lru) {
      lru->executor.reset();
      lru->schedule = {};
      if (s->last == lru) s->last = nullptr;
      if (s->current_pattern == lru) s->current = nullptr, s->current_pattern = nullptr;
      --s->planned, ++totals.evicted;
    }
  }
}

// Pattern `p`'s in-job plan, made: cached, counted, said.
void adopt(CommState* s, Pattern& p, Executor executor, commfit::runtime::InJobReport& report) {
  p.executor = std::make_unique<Executor>(std::move(executor));
  p.schedule = std::move(report.schedule);
  p.estimate_s = report.estimate_s;
  ++s->planned, ++totals.planned;
  const std::string chosen = report.chosen.empty() ? report.strategy : report.strategy + " " + report.chosen;
  {
    const std::lock_guard lock(shared);
    totals.chosen = chosen;
  }
  if (config.verbose > 1 && world_rank == 0) {
    char took[48] = "";   // known on the rank that planned
    if (report.plan_seconds > 0) std::snprintf(took, sizeof took, ", %.3f s to plan", report.plan_seconds);
    std::fprintf(stderr, "commfit-pmpi: planned a %d-rank pattern (%" PRIu64 " messages) on %s: %s, %u phases, estimate %.3g s%s\n",
                 s->size, report.messages, report.topology.c_str(), chosen.c_str(), report.phases, report.estimate_s, took);
  }
}

void plan_pattern(MPI_Comm comm, CommState* s, const Signature& sig, Pattern& p, const Pattern* model, CallClock& clock) {
  make_room(s, model);
  const double plan_start = PMPI_Wtime();   // planning's time, failed or not, counts against the budget
  if (model && s->planned < config.max_plans) {
    commfit::runtime::AdaptReport report;
    try {
      // The adapted plan is named by the agreed count signature, not a SHA-256 of the matrix (the
      // interposer never gathers it); the name stays in memory and in messages, never in a plan file.
      char fingerprint[48];
      std::snprintf(fingerprint, sizeof fingerprint, "counts:%016" PRIx64 "%016" PRIx64, sig.a, sig.b);
      p.executor = std::make_unique<Executor>(commfit::runtime::adapt_or_plan(comm, model->schedule, s->view.sendbytes(), s->view.recvbytes(), fingerprint,
                                                                           config.options, config.slack, &report));
      p.schedule = std::move(report.schedule);
      ++s->planned, ++(report.adapted ? totals.adapted : totals.replanned);
      if (config.verbose > 1 && world_rank == 0)
        std::fprintf(stderr, "commfit-pmpi: new sizes of a planned %d-rank pattern: %s (estimate / LB %.3f, the plan's %.3f), %.4f s\n", s->size,
                     report.adapted ? "adapted" : ("re-planned: " + report.why).c_str(), report.new_ratio, report.old_ratio, report.seconds);
    } catch (const std::exception& e) {
      p.failed = true;
      ++totals.plan_failed;
      say("commfit-pmpi: adapting a pattern failed (%s); it goes to MPI\n", e.what());
    }
  } else if (s->planned < config.max_plans) {
    commfit::runtime::InJobReport report;
    try {
      adopt(s, p, commfit::runtime::plan_in_job(comm, s->view.sendbytes(), s->view.recvbytes(), config.options, &report), report);
    } catch (const std::exception& e) {
      p.failed = true;
      ++totals.plan_failed;
      say("commfit-pmpi: planning a pattern failed (%s); it goes to MPI\n", e.what());
    }
  }
  clock.planned(PMPI_Wtime() - plan_start);
}

// Pays or steps aside (CallPolicy::steps_aside): a communicator whose plans replayed too few of its
// agreed calls (patterns that never settle, or not planned) goes to MPI from then on, with no
// agreement. The counts are agreed, so every rank steps aside at the same call. True when it
// stepped aside now.
bool steps_aside(CommState* s) {
  if (!s->policy.steps_aside()) return false;
  ++totals.stepped_aside;
  if (config.verbose > 1 && s->rank == 0)
    std::fprintf(stderr, "commfit-pmpi: a %d-rank communicator steps aside: its plans replayed fewer than a quarter of its last %" PRIu64 " calls\n",
                 s->size, s->policy.window());
  s->passthrough = true;
  s->last = nullptr;
  s->current = nullptr, s->current_pattern = nullptr;
  s->job.reset(), s->job_pattern = nullptr;
  for (auto& [other_sig, other] : s->patterns) other.executor.reset();
  return true;
}

// The planning budget is spent on some rank (a flag of the agreement) where a pattern would be
// planned: in the checking mode no more planning on this communicator from then on; on the lagged
// path none until the time in the calls pays for the planning done (`for_now`). The policy
// decides (CallPolicy::stop_planning, hold_planning); `first` is its answer: counted and said
// once per communicator.
void say_budget(CommState* s, bool first, bool for_now) {
  if (!first) return;
  if (++totals.budget_stops == 1 && config.verbose > 0 && s->rank == 0)
    std::fprintf(stderr, "commfit-pmpi: planning %s on a %d-rank communicator: %.3f s planning against %.3f s in its calls "
                         "(COMMFIT_PLAN_BUDGET=%g); its new patterns go to MPI%s\n", for_now ? "held" : "stopped", s->size, s->policy.plan_seconds(),
                 s->policy.call_seconds(), config.plan_budget, for_now ? " or the direct exchange until the calls pay for it" : "");
}

// The lagged path, when a call begins: starts the agreement on the call before (its first
// messages leave now, not as that call ended: a rank done early would send them into a rank still
// in that call, the one whose time it reports), or takes the next step of the agreement under way
// (posted a call earlier, so its messages are there unless a partner is a call behind); `steps()`
// calls after its start (or at once, `now`: a call that agrees on its own first) it is complete,
// and every rank takes from it, alike, the decisions of this call: the pattern's count and
// measured time, step aside, plan, and which plan (or MPI) this call runs.
void settle(MPI_Comm comm, CommState* s, CallClock& clock, bool now = false) {
  if (!s->lag_open) return;
  if (s->lag_start_due) {
    s->lag_start_due = false;
    agree_comm(comm, s);
    s->agreement->start(s->lag_words);
    if (!now && s->agreement->active()) return;
  }
  if (now) s->agreement->finish();
  else if (!s->agreement->step()) return;
  s->lag_open = false;
  const std::uint64_t* all = s->agreement->result();
  double slowest = 0;   // the slowest rank's time in the last call
  std::memcpy(&slowest, &all[5], sizeof slowest);
  ++s->calls;
  s->policy.agreed();
  bool is_new = false;
  Pattern& p = agreed_pattern(s, all, true, is_new);
  // What the last call ran, timed by its slowest rank: the direct exchange, the plan of its own
  // pattern, another plan of the same sparsity, or MPI. The first replay is left out of the plan's
  // time (it pays its connections), as MPI's first call is of MPI's.
  using commfit::pmpi::Ran;
  const Ran ran = !s->sampled_ran                        ? Ran::mpi
                  : s->sampled_ran == s->direct.get()    ? Ran::direct
                  : s->sampled_ran == p.executor.get()   ? Ran::own_plan
                                                         : Ran::other_plan;
  if (ran == Ran::other_plan) ++totals.other_counts;   // another pattern's plan replayed these counts
  s->policy.measured(p, ran, slowest, s->sampled_weight);
  // Choice by measurement: a plan whose replays of its own pattern take longer than MPI's calls
  // of it did, or the direct exchange's, is dropped; the pattern goes to the faster of those two.
  const commfit::pmpi::Verdict verdict = s->policy.judge_plan(p, p.executor != nullptr);
  if (verdict != commfit::pmpi::Verdict::untried) {
    const double plan_t = p.plan.per_call(), base_t = p.baseline_per_call();
    if (p.plan.calls == CallPolicy::kTrials + 1 && config.verbose > 1 && s->rank == 0 && p.estimate_s > 0) {
      char direct[64] = "";
      if (p.direct.warm()) std::snprintf(direct, sizeof direct, ", the direct exchange %.3g s", p.direct.per_call());
      std::fprintf(stderr, "commfit-pmpi: a %d-rank pattern's plan measured %.3g s per call against its estimate %.3g s (%.2fx); MPI %.3g s%s\n",
                   s->size, plan_t, p.estimate_s, plan_t / p.estimate_s, p.mpi.per_call(), direct);
    }
    if (verdict == commfit::pmpi::Verdict::dropped) {
      ++totals.mpi_kept;
      if (config.verbose > 1 && s->rank == 0)
        std::fprintf(stderr, "commfit-pmpi: %s kept for a %d-rank pattern: its plan took %.3g s per call, that %.3g s (%.2fx)\n",
                     p.direct_better() ? "the direct exchange" : "MPI_Alltoallv", s->size, plan_t, base_t, plan_t / base_t);
    }
  }
  // Without a plan: the direct exchange or MPI, as measured on this pattern, and which of them the
  // next agreed call tries (CallPolicy::choose_baseline).
  s->policy.choose_baseline(p);
  if (steps_aside(s)) return;
  const bool file_everywhere = !(all[0] & 2) && s->file_plan;
  const bool over_budget = all[0] & 4;
  if (over_budget) say_budget(s, s->policy.hold_planning(p, p.executor != nullptr), true);
  // The next agreement: after a gap that doubles (up to 64 calls) while agreements see the same
  // settled pattern, or while planning is held (CallPolicy::space_agreements). A steady exchange
  // then pays about one message in 64 calls; what it replays needs no agreement.
  s->policy.space_agreements(Signature{all[1], all[2]}, p, p.executor != nullptr, over_budget, s->job != nullptr);
  // Planning off the critical path: the matrix is gathered in this call and the root plans while
  // the calls go on as they were; an agreement that finds the root done installs the plan on every
  // rank (the schedules sent, the executors built). The root's planner time counts against the
  // planning budget as the rest does.
  if (s->job && !(all[0] & 8)) {
    const double t0 = PMPI_Wtime();
    Pattern& q = *s->job_pattern;
    make_room(s, nullptr);
    commfit::runtime::InJobReport report;
    try {
      Executor executor = s->job->finish(&report);
      report.plan_seconds = s->job->root_seconds();   // the planner's time, not the calls' between start and finish
      adopt(s, q, std::move(executor), report);
    } catch (const std::exception& e) {
      q.failed = true;
      ++totals.plan_failed;
      say("commfit-pmpi: planning a pattern failed (%s); it goes to MPI\n", e.what());
    }
    // A root that planned on its thread did it beside the calls; one that planned at once did it
    // in the call that started the job, and that call's clock has it already.
    if (s->job->on_thread()) {
      const double root = s->job->root_seconds();
      s->policy.planned(root), totals.plan_seconds += root, totals.thread_plan_seconds += root;
    }
    s->job.reset(), s->job_pattern = nullptr;
    clock.planned(PMPI_Wtime() - t0);
    if (q.executor && !q.executor->whole_direct()) {   // agreed on every rank at load
      s->agreed_only = true;
      s->current = nullptr, s->current_pattern = nullptr;
      if (config.verbose > 1 && s->rank == 0)
        std::fprintf(stderr, "commfit-pmpi: a %d-rank communicator agrees on every call from now on: its plan forwards pieces\n", s->size);
      return;
    }
  }
  if (s->policy.plan_lagged(p, p.executor != nullptr, s->job != nullptr, over_budget, file_everywhere)) {
    const double t0 = PMPI_Wtime();
    try {
      s->job = std::make_unique<commfit::runtime::PlanningJob>(comm, s->view.sendbytes(), s->view.recvbytes(), config.options, config.plan_thread);
      s->job_pattern = &p, s->job_agreements = 0;
    } catch (const std::exception& e) {   // raised on every rank alike
      p.failed = true;
      ++totals.plan_failed;
      say("commfit-pmpi: planning a pattern failed (%s); it goes to MPI\n", e.what());
    }
    clock.planned(PMPI_Wtime() - t0);
  }
  // The plan of the next calls: the pattern's own; else COMMFIT_PLAN's when the last call was its
  // pattern on every rank; else the plan in use when the pattern is another size of its sparsity
  // (it replays those sizes as well); else none (MPI or the direct exchange).
  const bool same_sparsity = s->current_pattern && s->current_pattern->structure == p.structure;
  switch (s->policy.next_plan(p, p.executor != nullptr, file_everywhere, same_sparsity)) {
    case commfit::pmpi::NextPlan::own: s->current = p.executor.get(), s->current_pattern = &p; break;
    case commfit::pmpi::NextPlan::file: s->current = s->file_plan.get(), s->current_pattern = nullptr; break;
    case commfit::pmpi::NextPlan::keep: break;
    case commfit::pmpi::NextPlan::none: s->current = nullptr, s->current_pattern = nullptr; break;
  }
}

// A sized replay of `ex` (whole and direct) with this call's arguments: byte counts and
// displacements from the counts, element displacements (or, `stride` >= 0, displacement j is
// j * stride: MPI_Alltoall's, which may pass an int) and datatypes. A non-contiguous datatype's
// blocks are packed before and unpacked after (MPI_Pack, MPI_Unpack).
void replay_sized(MPI_Comm comm, CommState* s, Executor& ex, const void* sendbuf, const int* scounts, const int* sdispls, std::int64_t sstride,
                  MPI_Datatype stype, void* recvbuf, const int* rcounts, const int* rdispls, std::int64_t rstride, MPI_Datatype rtype) {
  const auto n = static_cast<std::size_t>(s->size);
  for (auto& v : s->sized) v.resize(n);
  std::int64_t* bytes[2] = {s->sized[0].data(), s->sized[1].data()};
  std::int64_t* displs[2] = {s->sized[2].data(), s->sized[3].data()};
  const char* buffers[2] = {static_cast<const char*>(sendbuf), static_cast<const char*>(recvbuf)};
  const int* counts[2] = {scounts, rcounts};
  const int* displ[2] = {sdispls, rdispls};
  const std::int64_t stride[2] = {sstride, rstride};
  const MPI_Datatype types[2] = {stype, rtype};
  std::vector<char>* packed[2] = {&s->packed_send, &s->packed_recv};
  bool plain[2];
  MPI_Aint extent[2];
  for (int side = 0; side < 2; ++side) {
    int size = 0;
    MPI_Aint lb = 0;
    // MPI_BOTTOM (absolute addresses) is packed too: its blocks' addresses are the displacements.
    plain[side] = commfit::exec::contiguous(types[side], &size) && buffers[side] != MPI_BOTTOM;
    PMPI_Type_get_extent(types[side], &lb, &extent[side]);
    std::int64_t at = 0;
    for (std::size_t j = 0; j < n; ++j) {
      bytes[side][j] = std::int64_t{counts[side][j]} * size;
      const std::int64_t d = stride[side] >= 0 ? static_cast<std::int64_t>(j) * stride[side] : displ[side][j];
      displs[side][j] = plain[side] ? d * size : at;
      if (!plain[side]) {
        if (bytes[side][j] > INT_MAX) {
          std::fprintf(stderr, "commfit-pmpi: rank %d: a block of %" PRId64 " bytes of a non-contiguous datatype is beyond MPI_Pack's int\n",
                       s->rank, bytes[side][j]);
          PMPI_Abort(comm, 3);
        }
        at += bytes[side][j];
      }
    }
    if (!plain[side]) packed[side]->resize(static_cast<std::size_t>(at) + 1);
  }
  auto block = [&](int side, std::size_t j) {
    const std::int64_t d = stride[side] >= 0 ? static_cast<std::int64_t>(j) * stride[side] : displ[side][j];
    return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(buffers[side]) + static_cast<std::uintptr_t>(d * extent[side]));
  };
  if (!plain[0])
    for (std::size_t j = 0; j < n; ++j) {
      int position = 0;
      PMPI_Pack(block(0, j), counts[0][j], stype, packed[0]->data() + displs[0][j], static_cast<int>(bytes[0][j]), &position, comm);
    }
  ex.execute_sized(plain[0] ? sendbuf : packed[0]->data(), bytes[0], displs[0], plain[1] ? recvbuf : packed[1]->data(), bytes[1], displs[1]);
  if (!plain[1])
    for (std::size_t j = 0; j < n; ++j) {
      int position = 0;
      PMPI_Unpack(packed[1]->data() + displs[1][j], static_cast<int>(bytes[1][j]), &position, block(1, j), counts[1][j], rtype, comm);
    }
}

// The communicator's direct exchange, made on the first call that runs it (the same call on every
// rank: the choice follows agreed values): an executor with no plan, whose sized replays send every
// message directly. Null when it could not be made (said once; those calls go to MPI).
Executor* direct_exchange(MPI_Comm comm, CommState* s) {
  if (!s->direct && !s->direct_failed) {
    commfit::RankSchedule none;
    none.rank = s->rank, none.ranks = s->size;
    try {
      s->direct = std::make_unique<Executor>(Executor::from_schedule(none, comm, config.options.exec, "the direct exchange"));
    } catch (const std::exception& e) {   // agreed on every rank at load
      s->direct_failed = true;
      say("commfit-pmpi: the direct exchange could not be set up (%s); calls with no plan go to MPI\n", e.what());
    }
  }
  return s->direct.get();
}

// One call on the lagged path (after settle): runs what every rank agreed on, then, on a call an
// agreement is on, keeps this rank's words for it (the next call starts it). No collective of the
// interposer's own completes inside the call.
template <class ToMpi>
int exchange_lagged(MPI_Comm comm, CommState* s, const void* sendbuf, const int* scounts, const int* sdispls, std::int64_t sstride,
                    MPI_Datatype stype, void* recvbuf, const int* rcounts, const int* rdispls, std::int64_t rstride, MPI_Datatype rtype,
                    ToMpi to_mpi) {
  // What every rank runs (CallPolicy::lagged_path): the call the next agreement is on is the one
  // timed, and runs the policy's trial.
  const bool timed = s->policy.agreement_due(s->lag_open);
  const double t = timed ? PMPI_Wtime() : 0;
  int rc = MPI_SUCCESS;
  const commfit::pmpi::Path path = s->policy.lagged_path(s->lag_open, s->current != nullptr);
  Executor* ran = path == commfit::pmpi::Path::direct ? direct_exchange(comm, s) : path == commfit::pmpi::Path::plan ? s->current : nullptr;
  if (ran) {
    replay_sized(comm, s, *ran, sendbuf, scounts, sdispls, sstride, stype, recvbuf, rcounts, rdispls, rstride, rtype);
    if (ran == s->direct.get()) {
      ++s->tally.direct;
    } else {
      ++s->tally.replayed;
      if (!s->current_pattern) ++s->tally.from_file;
    }
  } else {
    rc = to_mpi();
    ++s->tally.to_mpi;
  }
  const double took = timed ? PMPI_Wtime() - t : 0;
  // Is the next agreement on this call? Not while one is under way (it takes its next step in the
  // next call), nor in the gap, nor on a communicator's first calls (one used for a few calls and
  // freed pays none).
  if (!s->policy.lagged_call_done(s->lag_open)) return rc;
  // This call is the one the next agreement is on: this rank's counts, their hashes, its time.
  int ssize = 0, rsize = 0;
  PMPI_Type_size(stype, &ssize);
  PMPI_Type_size(rtype, &rsize);
  if (s->view.see(s->size, scounts, ssize, rcounts, rsize) && s->file_plan)
    s->file_fits = std::equal(s->file_sends.begin(), s->file_sends.end(), s->view.sendbytes()) &&
                   std::equal(s->file_recvs.begin(), s->file_recvs.end(), s->view.recvbytes());
  const std::uint64_t h = s->view.sizes(), z = s->view.structure();
  const std::uint64_t r1 = 0x5851f42d4c957f2dull * (s->rank + 1), r2 = 0x14057b7ef767814full * (s->rank + 1);
  const bool file_fits = s->file_plan && s->file_fits;
  std::uint64_t* mine = s->lag_words;
  // Flags (OR): 2 not the plan file's pattern here, 4 this rank's planning budget is spent, 8 this
  // rank is the root of a plan being made and has not finished it. The root waits for its plan
  // once four agreements have found it unfinished: a plan is taken up within five.
  if (s->job && ++s->job_agreements >= 4) s->job->wait();
  s->add_tally();
  mine[0] = (file_fits ? 0u : 2u) | (s->over_budget() ? 4u : 0u) | (s->job && !s->job->ready() ? 8u : 0u);
  mine[1] = mix(h ^ r1), mine[2] = mix(h + r2), mine[3] = mix(z ^ r1), mine[4] = mix(z + r2);
  std::memcpy(&mine[5], &took, sizeof took);
  s->sampled_ran = ran;
  s->sampled_weight = s->policy.take_window();
  s->lag_open = s->lag_start_due = true;   // started by the next call (settle)
  return rc;
}

// MPI's rule for collectives: one at a time on a communicator. A thread in an intercepted call on a
// communicator another thread is in one on breaks it; the interposer sees it (a flag of the
// communicator's state, no lock) and fails that call through the communicator's error handler
// (MPI_ERRORS_ARE_FATAL, the default, ends the job with the message) before it sends anything.
// Checked under MPI_THREAD_MULTIPLE only: at any other level one thread calls MPI at a time.
class OneCaller {
 public:
  explicit OneCaller(CommState* s) : s_(s), alone_(!config.concurrent || !s->busy.exchange(true, std::memory_order_acq_rel)) {}
  ~OneCaller() {
    if (alone_ && config.concurrent) s_->busy.store(false, std::memory_order_release);
  }
  OneCaller(const OneCaller&) = delete;
  OneCaller& operator=(const OneCaller&) = delete;
  bool alone() const { return alone_; }
  int refuse(MPI_Comm comm, const char* call) const {
    std::fprintf(stderr,
                 "commfit-pmpi: rank %d: %s on a %d-rank communicator while another thread is in a collective on it: MPI forbids "
                 "concurrent collectives on one communicator; this call fails (MPI_ERR_OTHER)\n",
                 world_rank, call, s_->size);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return MPI_ERR_OTHER;
  }

 private:
  CommState* s_;
  bool alone_;
};

template <class ToMpi>
int exchange_on(MPI_Comm comm, CommState* s, const void* sendbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* recvbuf,
                const int* rcounts, const int* rdispls, MPI_Datatype rtype, bool local_ok, ToMpi to_mpi, bool lagged_ok, std::int64_t sstride,
                std::int64_t rstride);

// The common entry of an intercepted call (`call`: the MPI function's name, for errors): MPI's own
// path while the interposer is off or inside itself, and on a communicator with nothing to do;
// otherwise `body(s)` on the communicator's state, one thread at a time.
template <class ToMpi, class Body>
int intercepted(const char* call, MPI_Comm comm, ToMpi& to_mpi, Body body) {
  if (!config.on || inside || comm == MPI_COMM_NULL) return to_mpi();
  const Inside guard;
  CommState* s = state_of(comm);
  if (s->passthrough) return to_mpi();
  const OneCaller one(s);
  if (!one.alone()) return one.refuse(comm, call);
  return body(s);
}

// One intercepted exchange; `local_ok` false: this rank cannot take commfit's path (the others are
// told through the agreement).
// `lagged_ok`: the lagged path can take this call on every rank (false for Fortran's calls where
// its MPI_IN_PLACE cannot be told; the neighbourhood collective's lists are agreed before).
template <class ToMpi>
int exchange(const char* call, MPI_Comm comm, const void* sendbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* recvbuf,
             const int* rcounts, const int* rdispls, MPI_Datatype rtype, bool local_ok, ToMpi to_mpi, bool lagged_ok = true) {
  return intercepted(call, comm, to_mpi, [&](CommState* s) {
    return exchange_on(comm, s, sendbuf, scounts, sdispls, stype, recvbuf, rcounts, rdispls, rtype, local_ok, to_mpi, lagged_ok, -1, -1);
  });
}

template <class ToMpi>
int exchange_on(MPI_Comm comm, CommState* s, const void* sendbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* recvbuf,
                const int* rcounts, const int* rdispls, MPI_Datatype rtype, bool local_ok, ToMpi to_mpi, bool lagged_ok, std::int64_t sstride,
                std::int64_t rstride) {
  ++s->tally.calls;
  CallClock clock{s};
  // MPI_IN_PLACE is the same on every rank (MPI's rule): such a call goes to MPI on all of them.
  if (sendbuf == MPI_IN_PLACE && !config.check) {
    ++s->tally.to_mpi;
    return to_mpi();
  }
  // Every rank makes the same call (a collective), so every rank takes the same path here.
  if (!config.check && !s->agreed_only && lagged_ok) {
    settle(comm, s, clock);
    if (s->passthrough) {
      ++s->tally.to_mpi;
      return to_mpi();
    }
    if (!s->agreed_only)
      return exchange_lagged(comm, s, sendbuf, scounts, sdispls, sstride, stype, recvbuf, rcounts, rdispls, rstride, rtype, to_mpi);
  } else if (s->lag_open) {
    settle(comm, s, clock, true);   // a lagged call's agreement before this call's own
  }
  // The fast path: replay the last pattern at once, with no agreement of its own. The executor
  // compares every rank's counts with its plan in an MPI_Iallreduce that overlaps the replay, and
  // raises the same Error on every rank when any differs; a rank that differs (or cannot take this
  // path: it passes counts no plan has) replays into scratch buffers and leaves the caller's alone.
  // The others may have received scratch bytes from it: the call is then agreed and done again
  // below, which writes every receive segment anew. MPI_IN_PLACE is the same on every rank (MPI's
  // rule), so it can skip this alone. After a miss the next call is not tried (every rank knows
  // the miss), so that alternating patterns pay a miss on at most every other call.
  const bool try_last = config.speculate && s->last && sendbuf != MPI_IN_PLACE && !s->missed;
  s->missed = false;
  if (try_last) {
    Pattern& p = *s->last;
    if (!local_ok && s->poison.empty()) s->poison.assign(static_cast<std::size_t>(s->size), -1);
    // Native MPI writes only what is sent; a try that misses may have filled receive positions that
    // the call done again below leaves alone (a peer whose counts no longer match sends scratch
    // bytes at the plan's sizes; in an erroneous program it sends fewer than expected). So this
    // rank's receive segments are kept, and put back on a miss before the call is done again.
    int keep_size = 0;
    const bool keep = local_ok && commfit::exec::contiguous(rtype, &keep_size);
    if (keep) {
      s->kept.clear();
      for (int j = 0; j < s->size; ++j) {
        const char* at = static_cast<const char*>(recvbuf) + std::int64_t{rdispls[j]} * keep_size;
        s->kept.insert(s->kept.end(), at, at + std::max<std::int64_t>(0, std::int64_t{rcounts[j]} * keep_size));
      }
    }
    const double t = PMPI_Wtime();
    try {
      p.executor->execute(sendbuf, local_ok ? scounts : s->poison.data(), sdispls, stype, recvbuf, rcounts, rdispls, rtype);
      p.plan.add(PMPI_Wtime() - t);
      ++p.replayed_calls, ++totals.replayed, ++totals.at_once;
      p.last_use = ++s->calls;
      return MPI_SUCCESS;
    } catch (const commfit::exec::Error&) {
      ++totals.missed;
      s->missed = true;
      std::size_t from = 0;
      for (int j = 0; keep && j < s->size; ++j) {
        const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(0, std::int64_t{rcounts[j]} * keep_size));
        std::memcpy(static_cast<char*>(recvbuf) + std::int64_t{rdispls[j]} * keep_size, s->kept.data() + from, n);
        from += n;
      }
    }
  }
  // This rank's view: can it take commfit's path, and its counts' hash.
  int ssize = 0, rsize = 0;
  bool eligible = local_ok && sendbuf != MPI_IN_PLACE && commfit::exec::contiguous(stype, &ssize) && commfit::exec::contiguous(rtype, &rsize);
  if (eligible && s->view.see(s->size, scounts, ssize, rcounts, rsize) && s->file_plan)
    s->file_fits = std::equal(s->file_sends.begin(), s->file_sends.end(), s->view.sendbytes()) &&
                   std::equal(s->file_recvs.begin(), s->file_recvs.end(), s->view.recvbytes());
  const bool file_fits = eligible && s->file_plan && s->file_fits;
  const std::uint64_t h = eligible ? s->view.sizes() : 0, z = eligible ? s->view.structure() : 0;
  const std::uint64_t r1 = 0x5851f42d4c957f2dull * (s->rank + 1), r2 = 0x14057b7ef767814full * (s->rank + 1);
  // Flags (OR): 1 not eligible here, 2 not the plan file's pattern here, 4 this rank's planning
  // budget is spent (so that every rank stops planning at the same call).
  s->add_tally();
  std::uint64_t mine[5] = {(eligible ? 0u : 1u) | (file_fits ? 0u : 2u) | (s->over_budget() ? 4u : 0u), mix(h ^ r1), mix(h + r2), mix(z ^ r1),
                           mix(z + r2)};
  std::uint64_t all[5];
  PMPI_Allreduce(mine, all, 5, MPI_UINT64_T, fold_op, agree_comm(comm, s));
  ++s->calls;
  s->policy.agreed();
  if (steps_aside(s)) {
    ++totals.to_mpi;
    return to_mpi();
  }
  if (all[0] & 1) {
    ++totals.not_eligible;
    return to_mpi();
  }
  if (!(all[0] & 2)) {   // the plan file's pattern, on every rank
    try {
      s->file_plan->execute(sendbuf, scounts, sdispls, stype, recvbuf, rcounts, rdispls, rtype);
      ++totals.replayed, ++totals.from_file;
      s->policy.replayed();
      return MPI_SUCCESS;
    } catch (const std::exception& e) {
      say("commfit-pmpi: the COMMFIT_PLAN replay failed (%s); it is not used again\n", e.what());
      s->file_plan.reset();
      ++totals.to_mpi;
      return to_mpi();
    }
  }
  const Signature sig{all[1], all[2]};
  bool is_new = false;
  Pattern& p = agreed_pattern(s, all, false, is_new);
  // New sizes of a planned sparsity pattern: adapt that plan now (or re-plan, as the cost model says).
  const Pattern* model = nullptr;
  if (is_new && config.adapt)
    for (const auto& [other_sig, other] : s->patterns)
      if (other.executor && other.structure == p.structure && !(other_sig == sig)) {
        model = &other;
        break;
      }
  if (all[0] & 4) say_budget(s, s->policy.stop_planning(p, p.executor != nullptr, model != nullptr), false);
  if (s->policy.plan_checked(p, p.executor != nullptr, model != nullptr)) plan_pattern(comm, s, sig, p, model, clock);
  if (p.executor) {
    const double t = PMPI_Wtime();
    try {
      p.executor->execute(sendbuf, scounts, sdispls, stype, recvbuf, rcounts, rdispls, rtype);
      p.plan.add(PMPI_Wtime() - t);
      ++p.replayed_calls, ++totals.replayed;
      s->policy.replayed();
      s->last = &p;
      return MPI_SUCCESS;
    } catch (const std::exception& e) {   // agreed on every rank: all fall back together
      say("commfit-pmpi: a replay failed (%s); this pattern goes to MPI\n", e.what());
      p.executor.reset();
      p.failed = true;
      if (s->last == &p) s->last = nullptr;
      if (s->current_pattern == &p) s->current = nullptr, s->current_pattern = nullptr;
    }
  }
  const double t = PMPI_Wtime();
  const int rc = to_mpi();
  p.mpi.add(PMPI_Wtime() - t);
  ++totals.to_mpi;
  return rc;
}

// MPI_Alltoall as the same exchange as an MPI_Alltoallv with equal counts and packed displacements.
template <class ToMpi>
int alltoall(const char* call, MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
             bool local_ok, ToMpi to_mpi, bool lagged_ok = true) {
  if (sendbuf == MPI_IN_PLACE) return to_mpi();
  return intercepted(call, comm, to_mpi, [&](CommState* s) {
    // Displacements beyond int: this rank cannot (the agreement sends every rank to MPI). The
    // arrays are made again only when the counts change.
    const bool fits = std::int64_t{s->size} * std::max(sendcount, recvcount) <= INT_MAX;
    auto& u = s->uniform;
    if (u.sendcount != sendcount || u.recvcount != recvcount) {
      const auto n = static_cast<std::size_t>(s->size);
      u.sc.assign(n, sendcount), u.rc.assign(n, recvcount), u.sd.assign(n, 0), u.rd.assign(n, 0);
      for (int j = 0; fits && j < s->size; ++j) u.sd[j] = j * sendcount, u.rd[j] = j * recvcount;
      u.sendcount = sendcount, u.recvcount = recvcount;
    }
    return exchange_on(comm, s, sendbuf, u.sc.data(), u.sd.data(), sendtype, recvbuf, u.rc.data(), u.rd.data(), recvtype, local_ok && fits, to_mpi,
                       lagged_ok, sendcount, recvcount);
  });
}

void print_summary() {
  // Per rank, then over MPI_COMM_WORLD: counts as the busiest rank saw them, times as means.
  constexpr int n = 19;
  double counts[n] = {totals.patterns, totals.planned, totals.plan_failed, totals.from_file,
                      totals.calls,    totals.replayed, totals.to_mpi,      totals.not_eligible,
                      totals.adapted,  totals.replanned, totals.evicted,   totals.at_once, totals.missed, totals.budget_stops,
                      totals.stepped_aside, totals.other_counts, totals.mpi_kept, totals.direct, totals.saved_patterns};
  // Time saved is measured: each pattern's MPI time per call, less that of what commfit ran in its
  // place, times the calls it ran, less the planning done inside calls (the root's thread plans
  // beside them: said apart).
  const double in_calls = totals.plan_seconds - totals.thread_plan_seconds;
  constexpr int nt = 13;
  double times[nt] = {totals.plan_seconds,      totals.saved_seconds - in_calls,
                      totals.thread_plan_seconds, totals.plan_time, totals.plan_mpi_time, totals.direct_time, totals.direct_mpi_time,
                      totals.beaten_plan_time,  totals.beaten_mpi_time, totals.beaten_direct_time, totals.beaten_direct_mpi_time,
                      totals.saved_low - in_calls, totals.saved_high - in_calls};
  double kept[3] = {totals.kept_plan, totals.kept_direct, totals.kept_mpi}, max_kept[3];
  double max_counts[n], sum_times[nt];
  int size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  PMPI_Reduce(counts, max_counts, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  PMPI_Reduce(times, sum_times, nt, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(kept, max_kept, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (world_rank != 0 || config.verbose < 1) return;
  // Four short lines: the calls, the patterns, what stopped or kept MPI, the time saved.
  auto counted = [](double n, const char* one, const char* many) {   // "1 pattern", "3 patterns"
    char text[64];
    std::snprintf(text, sizeof text, "%.0f %s", n, n == 1 ? one : many);
    return std::string(text);
  };
  std::fprintf(stderr,
               "commfit-pmpi: %s: %.0f replayed by commfit (%.0f from COMMFIT_PLAN), %.0f of them at once as the "
               "last pattern (%.0f tries missed), %.0f with counts other than their plan's, %.0f to MPI, %.0f as a direct exchange, "
               "%.0f not eligible\n",
               counted(max_counts[4], "intercepted call", "intercepted calls").c_str(), max_counts[5], max_counts[3], max_counts[11],
               max_counts[12], max_counts[15], max_counts[6], max_counts[17], max_counts[7]);
  std::fprintf(stderr,
               "commfit-pmpi: %s seen, %.0f planned in %.3f s%s%s%s, %.0f adapted from a plan of their sparsity pattern, "
               "%.0f re-planned instead, %.0f failed to plan, %s dropped (COMMFIT_MAX_PLANS)\n",
               counted(max_counts[0], "pattern", "patterns").c_str(), max_counts[1], sum_times[0] / size,
               totals.chosen.empty() ? "" : " (last: ", totals.chosen.c_str(), totals.chosen.empty() ? "" : ")", max_counts[8],
               max_counts[9], max_counts[2], counted(max_counts[10], "plan", "plans").c_str());
  std::fprintf(stderr,
               "commfit-pmpi: planning held or stopped by the budget on %s (COMMFIT_PLAN_BUDGET), %.0f stepped aside "
               "to MPI (their plans replayed too few calls), MPI_Alltoallv kept for %s (their plans measured slower)\n",
               counted(max_counts[13], "communicator", "communicators").c_str(), max_counts[14],
               counted(max_counts[16], "pattern", "patterns").c_str());
  char beside[96] = "";
  if (sum_times[2] > 0) std::snprintf(beside, sizeof beside, "; %.3f s more planned on the root's thread, beside the calls", sum_times[2] / size);
  // The same from the quartiles of the timed calls: whether the figure is a gain, a loss, or noise.
  char range[160] = "";
  if (max_counts[18] > 0) {
    const double low = 1e3 * sum_times[11] / size, high = 1e3 * sum_times[12] / size;
    std::snprintf(range, sizeof range, "; %+.3f to %+.3f ms from the timed calls' quartiles: %s", low, high,
                  low > 0 ? "a measured gain" : high < 0 ? "a measured loss" : "within the noise, no gain or loss measured");
  }
  std::fprintf(stderr,
               "commfit-pmpi: time saved per rank %+.3f ms (measured: each pattern's MPI time per call less its plan's, times the "
               "plan's replays, less the planning inside calls%s)%s\n",
               1e3 * sum_times[1] / size, range, beside);
  // The verdict, one short line: what the patterns ended with (their plans, the direct exchange or
  // MPI) against MPI, measured on the same patterns: the outcome with most of the calls, and the
  // next one too when it has at least a quarter of them (a program whose patterns went different
  // ways), each with its share.
  auto ratio = [](double slower, double faster, const char* what) {
    char text[96];
    std::snprintf(text, sizeof text, "%.2fx %s", slower >= faster ? slower / faster : faster / slower,
                  slower >= faster ? "faster" : "slower");
    return std::string(text) + what;
  };
  std::string said[3];   // each outcome as measured: a plan, the direct exchange, MPI ("" unmeasured)
  if (sum_times[3] > 0)
    said[0] = "replaying" + std::string(totals.chosen.empty() ? "" : " ") + totals.chosen + ": " + ratio(sum_times[4], sum_times[3], " than MPI_Alltoallv here");
  if (sum_times[5] > 0)
    said[1] = "the direct exchange kept (every message posted at once, no plan): " + ratio(sum_times[6], sum_times[5], " than MPI_Alltoallv here");
  // What MPI beat, against MPI. Summed over patterns the dropped plans (or the direct exchange)
  // may come out ahead of MPI: each was judged on its own pattern, against the fastest there.
  auto beaten = [&](double other, double mpi) {
    return ratio(mpi, other, other < mpi ? " here in sum, each slower where it was judged" : " here");
  };
  if (sum_times[7] > 0)
    said[2] = "MPI_Alltoallv kept: plans " + beaten(sum_times[7], sum_times[8]);
  else if (sum_times[9] > 0)
    said[2] = "MPI_Alltoallv kept: the direct exchange " + beaten(sum_times[9], sum_times[10]) + ", no plan measured";
  int order[3] = {0, 1, 2};   // by calls kept, ties to the order above
  std::stable_sort(order, order + 3, [&](int a, int b) { return max_kept[a] > max_kept[b]; });
  const double all_kept = max_kept[0] + max_kept[1] + max_kept[2];
  auto measured = [&](int o) { return max_kept[o] > 0 && !said[o].empty(); };
  // The outcome with most calls, or the next measured one when that is a plan or the direct
  // exchange not measured against MPI; MPI kept with nothing measured is said so.
  const int* const end = order + 3;
  const int* first = order[0] == 2 && !measured(2) ? end : std::find_if<const int*>(order, end, measured);
  const int* second = first == end ? end : std::find_if(first + 1, end, measured);
  if (first != end && second != end && max_kept[*second] >= 0.25 * all_kept)
    std::fprintf(stderr, "commfit-pmpi: %s, on %.0f %% of the calls; %s, on %.0f %% (per call, measured)\n", said[*first].c_str(),
                 100 * max_kept[*first] / all_kept, said[*second].c_str(), 100 * max_kept[*second] / all_kept);
  else if (first != end)
    std::fprintf(stderr, "commfit-pmpi: %s (per call, measured)\n", said[*first].c_str());
  else if (max_kept[2] > 0)
    std::fprintf(stderr, "commfit-pmpi: MPI_Alltoallv kept: no plan was measured slower, but the communicators stepped aside or held "
                         "planning before one was judged\n");
  else
    std::fprintf(stderr, "commfit-pmpi: not measured: no pattern was timed both under MPI_Alltoallv and under a plan or the direct exchange\n");
}

// Detach every state still on a communicator (its delete callback retires it), then tell.
void before_finalize() {
  if (!config.on) return;
  const Inside guard;
  for (;;) {   // each delete retires its state, which leaves `live`
    MPI_Comm comm = MPI_COMM_NULL;
    {
      const std::lock_guard lock(shared);
      if (live.empty()) break;
      comm = live.front().first;
    }
    PMPI_Comm_delete_attr(comm, keyval);
  }
  print_summary();
  PMPI_Comm_free_keyval(&keyval);
  PMPI_Op_free(&fold_op);
  config.on = false;
}

// Fortran (mpif.h and `use mpi`): Open MPI's MPI_ALLTOALLV and MPI_ALLTOALL call PMPI_Alltoallv and
// PMPI_Alltoall, past the C entry points, so the interposer answers to the Fortran names as well
// and hands what it does not take to the Fortran PMPI entry (found at run time: the program that
// calls these has MPI's Fortran library loaded). Buffers that are Fortran's MPI_IN_PLACE or
// MPI_BOTTOM (Open MPI's common blocks; another MPI's are not known) are not taken; nor is anything
// when MPI_Fint is not an int. The mpi_f08 module's bindings call an Open MPI-internal entry
// (ompi_alltoallv_f), which is not intercepted: its calls go to MPI.
using FortranAlltoallv = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FortranAlltoall = void (*)(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);

void* fortran_symbol(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  if (!f) {
    std::fprintf(stderr, "commfit-pmpi: %s not found: a Fortran MPI call without MPI's Fortran library\n", name);
    std::abort();
  }
  return f;
}

// A Fortran buffer as the C side must see it: Fortran's MPI_IN_PLACE is C's (the same on every rank,
// MPI's rule, so it may skip the agreement); `plain` is false for MPI_BOTTOM, and for every buffer
// under an MPI whose Fortran constants are not Open MPI's common blocks.
// Fortran's MPI_BOTTOM becomes C's on the lagged path, which packs what it addresses.
const void* fortran_buffer(const void* buffer, bool& plain) {
  static const void* const in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
  static const void* const bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
  if (!in_place || !bottom) plain = false;
  else if (buffer == in_place) return MPI_IN_PLACE;
  else if (buffer == bottom) plain = false, buffer = MPI_BOTTOM;
  return buffer;
}
// Whether this MPI's Fortran constants are known (the same on every rank): the lagged path can
// take Fortran calls then.
bool fortran_known() {
  static const bool known = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_") && dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
  return known;
}

// Open MPI's Fortran MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE call the PMPI entries too.
void fortran_init(MPI_Fint* ierr) {
  reinterpret_cast<void (*)(MPI_Fint*)>(fortran_symbol("pmpi_init_"))(ierr);
  int provided = MPI_THREAD_SINGLE;
  if (*ierr == MPI_SUCCESS) PMPI_Query_thread(&provided), after_init(provided);
}

void fortran_init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*)>(fortran_symbol("pmpi_init_thread_"))(required, provided, ierr);
  if (*ierr == MPI_SUCCESS) after_init(static_cast<int>(*provided));
}

void fortran_finalize(MPI_Fint* ierr) {
  before_finalize();
  reinterpret_cast<void (*)(MPI_Fint*)>(fortran_symbol("pmpi_finalize_"))(ierr);
}

constexpr bool fint_is_int = sizeof(MPI_Fint) == sizeof(int);

void fortran_alltoallv(void* sendbuf, MPI_Fint* scounts, MPI_Fint* sdispls, MPI_Fint* stype, void* recvbuf, MPI_Fint* rcounts, MPI_Fint* rdispls,
                       MPI_Fint* rtype, MPI_Fint* comm, MPI_Fint* ierr) {
  auto to_mpi = [&] {
    static const auto pmpi = reinterpret_cast<FortranAlltoallv>(fortran_symbol("pmpi_alltoallv_"));
    pmpi(sendbuf, scounts, sdispls, stype, recvbuf, rcounts, rdispls, rtype, comm, ierr);
    return *ierr;
  };
  if (!fint_is_int) {
    to_mpi();
    return;
  }
  bool ok = true;
  const void* send = fortran_buffer(sendbuf, ok);
  fortran_buffer(recvbuf, ok);
  *ierr = exchange("MPI_ALLTOALLV", PMPI_Comm_f2c(*comm), send, reinterpret_cast<const int*>(scounts), reinterpret_cast<const int*>(sdispls),
                   PMPI_Type_f2c(*stype), recvbuf, reinterpret_cast<const int*>(rcounts), reinterpret_cast<const int*>(rdispls),
                   PMPI_Type_f2c(*rtype), ok, to_mpi, fortran_known());
}

void fortran_alltoall(void* sendbuf, MPI_Fint* scount, MPI_Fint* stype, void* recvbuf, MPI_Fint* rcount, MPI_Fint* rtype, MPI_Fint* comm,
                      MPI_Fint* ierr) {
  auto to_mpi = [&] {
    static const auto pmpi = reinterpret_cast<FortranAlltoall>(fortran_symbol("pmpi_alltoall_"));
    pmpi(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, ierr);
    return *ierr;
  };
  bool ok = true;
  const void* send = fortran_buffer(sendbuf, ok);
  fortran_buffer(recvbuf, ok);
  *ierr = alltoall("MPI_ALLTOALL", PMPI_Comm_f2c(*comm), send, static_cast<int>(*scount), PMPI_Type_f2c(*stype), recvbuf,
                   static_cast<int>(*rcount), PMPI_Type_f2c(*rtype), ok, to_mpi, fortran_known());
}

}  // namespace

// The interposer's only exported symbols (the library is built with hidden visibility and the
// static libraries' symbols excluded).
#define COMMFIT_PMPI_EXPORT __attribute__((visibility("default")))

extern "C" {

COMMFIT_PMPI_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    after_init(provided);
  }
  return rc;
}

COMMFIT_PMPI_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) after_init(*provided);
  return rc;
}

COMMFIT_PMPI_EXPORT int MPI_Finalize(void) {
  before_finalize();
  return PMPI_Finalize();
}

COMMFIT_PMPI_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return exchange("MPI_Alltoallv", comm, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, true, [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

COMMFIT_PMPI_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm) {
  return alltoall("MPI_Alltoall", comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, true,
                  [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

// MPI_Neighbor_alltoallv on a distributed-graph (or graph, or Cartesian) communicator: the same
// exchange as an MPI_Alltoallv over the communicator with zero counts for non-neighbours, when each
// neighbour appears once in each list (a multigraph, or a Cartesian neighbour that is MPI_PROC_NULL
// or appears twice, cannot be mapped: the agreement sends every rank to MPI then).
COMMFIT_PMPI_EXPORT int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                               void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                               MPI_Comm comm) {
  auto to_mpi = [&] {
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  };
  return intercepted("MPI_Neighbor_alltoallv", comm, to_mpi, [&](CommState* s) {
    Neighbours& nb = s->neighbours;
    if (!nb.known) {
      // Once per communicator (its topology does not change): the lists, and whether they map to one
      // message per peer on every rank (a neighbour listed twice or MPI_PROC_NULL does not), agreed.
      int kind = MPI_UNDEFINED;
      PMPI_Topo_test(comm, &kind);
      if (kind == MPI_DIST_GRAPH) {
        int indegree = 0, outdegree = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted);
        nb.sources.resize(static_cast<std::size_t>(indegree));
        nb.destinations.resize(static_cast<std::size_t>(outdegree));
        PMPI_Dist_graph_neighbors(comm, indegree, nb.sources.data(), MPI_UNWEIGHTED, outdegree, nb.destinations.data(), MPI_UNWEIGHTED);
      } else if (kind == MPI_GRAPH) {
        int n = 0;
        PMPI_Graph_neighbors_count(comm, s->rank, &n);
        nb.sources.resize(static_cast<std::size_t>(n));
        PMPI_Graph_neighbors(comm, s->rank, n, nb.sources.data());
        nb.destinations = nb.sources;
      } else if (kind == MPI_CART) {
        int dims = 0;
        PMPI_Cartdim_get(comm, &dims);
        for (int d = 0; d < dims; ++d) {   // the MPI standard's order: -1 then +1 in each dimension
          int lo = 0, hi = 0;
          PMPI_Cart_shift(comm, d, 1, &lo, &hi);
          nb.sources.push_back(lo), nb.sources.push_back(hi);
        }
        nb.destinations = nb.sources;
      } else {
        return to_mpi();   // no topology: MPI reports the error (on every rank: none is known)
      }
      const auto n = static_cast<std::size_t>(s->size);
      std::vector<char> seen_out(n, 0), seen_in(n, 0);
      int ok = 1, everywhere = 0;
      for (const int d : nb.destinations) ok &= d >= 0 && d < s->size && !seen_out[static_cast<std::size_t>(d)]++;
      for (const int q : nb.sources) ok &= q >= 0 && q < s->size && !seen_in[static_cast<std::size_t>(q)]++;
      PMPI_Allreduce(&ok, &everywhere, 1, MPI_INT, MPI_MIN, agree_comm(comm, s));
      nb.mappable = everywhere == 1;
      for (auto* v : {&nb.sc, &nb.sd, &nb.rc, &nb.rd}) v->assign(n, 0);
      nb.known = true;
    }
    if (!nb.mappable) return to_mpi();
    // Full-length counts and displacements (zero for non-neighbours).
    for (std::size_t k = 0; k < nb.destinations.size(); ++k) {
      const auto d = static_cast<std::size_t>(nb.destinations[k]);
      nb.sc[d] = sendcounts[k], nb.sd[d] = sdispls[k];
    }
    for (std::size_t k = 0; k < nb.sources.size(); ++k) {
      const auto q = static_cast<std::size_t>(nb.sources[k]);
      nb.rc[q] = recvcounts[k], nb.rd[q] = rdispls[k];
    }
    return exchange_on(comm, s, sendbuf, nb.sc.data(), nb.sd.data(), sendtype, recvbuf, nb.rc.data(), nb.rd.data(), recvtype, sendbuf != MPI_IN_PLACE,
                       to_mpi, true, -1, -1);
  });
}

// The Fortran names, in each of the spellings Fortran compilers use (gfortran: lower case with one
// underscore).
#define COMMFIT_FORTRAN(lower, upper, fn, params, args) \
  COMMFIT_PMPI_EXPORT void lower params { fn args; }      \
  COMMFIT_PMPI_EXPORT void lower##_ params { fn args; }   \
  COMMFIT_PMPI_EXPORT void lower##__ params { fn args; }  \
  COMMFIT_PMPI_EXPORT void upper params { fn args; }
COMMFIT_FORTRAN(mpi_alltoallv, MPI_ALLTOALLV, fortran_alltoallv,
                (void* sb, MPI_Fint* sc, MPI_Fint* sd, MPI_Fint* st, void* rb, MPI_Fint* rc, MPI_Fint* rd, MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* ierr),
                (sb, sc, sd, st, rb, rc, rd, rt, comm, ierr))
COMMFIT_FORTRAN(mpi_alltoall, MPI_ALLTOALL, fortran_alltoall,
                (void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb, MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* ierr),
                (sb, sc, st, rb, rc, rt, comm, ierr))
COMMFIT_FORTRAN(mpi_init, MPI_INIT, fortran_init, (MPI_Fint * ierr), (ierr))
COMMFIT_FORTRAN(mpi_init_thread, MPI_INIT_THREAD, fortran_init_thread, (MPI_Fint * required, MPI_Fint* provided, MPI_Fint* ierr),
                (required, provided, ierr))
COMMFIT_FORTRAN(mpi_finalize, MPI_FINALIZE, fortran_finalize, (MPI_Fint * ierr), (ierr))
#undef COMMFIT_FORTRAN

}  // extern "C"
