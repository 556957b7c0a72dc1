// The PMPI interposer's per-call choice (runtime/pmpi.cpp): which path a call takes (MPI, the
// direct exchange, or a plan's replay), which of MPI and the direct exchange the next timed call
// tries, when a plan measured slower than both is dropped, when planning starts, is held or
// stopped by the planning budget, how far apart the lagged agreements are, and when a
// communicator steps aside to MPI. The interposer runs the paths and the agreements; this object
// only decides, from numbers it is given, and makes no MPI call, so a unit test drives it
// (tests/test_call_policy.cpp).
//
// Invariant: every rank of a communicator gives its policy the same inputs in the same order
// (agreed values: the slowest rank's times, the agreed signatures and flags, counts of agreed
// calls), so every rank's policy takes the same decisions and all ranks take the same path. Only
// the budget's own sums (planned, called) are this rank's; they reach decisions through an
// agreed flag (over_budget is OR-ed over the ranks before anything branches on it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace commfit::pmpi {

// One pattern of one communicator: the agreed signature of its counts.
struct Signature {
  std::uint64_t a = 0, b = 0;
  friend bool operator<(const Signature& x, const Signature& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; }
  friend bool operator==(const Signature& x, const Signature& y) { return x.a == y.a && x.b == y.b; }
};

// A method's time per call on one pattern: the median of its last 8 timed calls after the first
// (which pays connections), or the first alone until there is another. Calls timed long apart are
// compared by what they take now, not by the cold ones of the first trials.
struct Timings {
  std::int64_t calls = 0;
  double first = 0, last[8] = {};
  void add(double seconds);
  bool warm() const { return calls > 1; }
  double per_call() const { return median_; }
  // The lower and upper quartiles of the same calls (nearest sample; the first alone until there
  // is another): how far a figure made from per_call() can be trusted.
  struct Spread {
    double low = 0, high = 0;
  };
  Spread spread() const;

 private:
  double median_ = 0;   // per_call(), kept by add() (read several times per agreement)
};

// What the agreements measured of one pattern, and what became of its plan.
struct PatternRecord {
  std::int64_t calls = 0;            // its calls the agreements counted (CallPolicy::counted_calls)
  bool failed = false;               // planning or a replay failed: always MPI from now on
  bool mpi_kept = false;             // its plan measured slower than MPI or the direct exchange
  // Its time per call under MPI, its plan and the direct exchange (the slowest rank's, on the calls
  // the agreements are on; every call in the checking mode).
  Timings mpi, plan, direct;
  // The calls its plan replayed and the calls the direct exchange ran, each agreement on the lagged
  // path standing for the calls since the one before.
  double replayed_calls = 0, direct_weight = 0;
  // All the calls of it the agreements stood for, whatever ran them.
  double weight = 0;
  // What runs this pattern best without its plan, once both have been timed past their first
  // call: MPI or the direct exchange; and its time per call.
  bool baseline_known() const { return mpi.warm() && direct.warm(); }
  // Both timed on three calls past their first: a median that one slow call (the rank off its
  // core a moment) does not decide. Until then the timed calls try the two in turn.
  bool baseline_settled() const { return mpi.calls > 3 && direct.calls > 3; }
  bool direct_better() const { return baseline_known() && direct.per_call() < mpi.per_call(); }
  double baseline_per_call() const { return direct_better() ? direct.per_call() : mpi.per_call(); }
};

// The paths of a call.
enum class Path { mpi, direct, plan };
// What the call an agreement was on ran: MPI, the direct exchange, the plan of the agreed pattern,
// or the plan of another pattern of the same sparsity.
enum class Ran { mpi, direct, own_plan, other_plan };
// What the call an agreement is on tries in place of the usual path, to time it.
enum class Trial { none, mpi, direct };
// A plan against the faster of MPI and the direct exchange: not yet timed enough, kept, dropped.
enum class Verdict { untried, kept, dropped };
// The plan the calls after an agreement replay: the pattern's own, the COMMFIT_PLAN file's, the one
// in use (another size of its sparsity), or none (MPI or the direct exchange).
enum class NextPlan { own, file, keep, none };

// The interposer's settings the choice depends on (COMMFIT_THRESHOLD, COMMFIT_PLAN_AFTER,
// COMMFIT_MAX_PLANS, COMMFIT_PLAN_BUDGET).
struct PolicySettings {
  int threshold = 3;
  long long plan_after = 64;
  std::size_t max_plans = 8;
  double plan_budget = 0.1;
  // Patterns are watched from the first calls (COMMFIT_RECORD records them, COMMFIT_PLAN's plans
  // replay them): the first agreement does not wait for plan_after.
  bool watch_from_start = false;
};

// One communicator's choice.
class CallPolicy {
 public:
  static constexpr std::int64_t kTrials = 4;   // a plan's timed replays before it is judged
  static constexpr int kMaxGap = 64;           // calls between two lagged agreements at most

  explicit CallPolicy(const PolicySettings& settings) : settings_(settings) {}
  const PolicySettings& settings() const { return settings_; }

  // The planning budget. This rank's time planning this communicator's patterns and in its
  // calls less that; over budget when either it or the job's (given) planning exceeds
  // COMMFIT_PLAN_BUDGET of the matching time in calls.
  void planned(double seconds) { plan_seconds_ += seconds; }
  void called(double seconds) { call_seconds_ += seconds; }
  double plan_seconds() const { return plan_seconds_; }
  double call_seconds() const { return call_seconds_; }
  bool spent(double plan_seconds, double call_seconds) const { return plan_seconds > settings_.plan_budget * call_seconds; }
  bool over_budget(double job_plan_seconds, double job_call_seconds) const {
    return spent(plan_seconds_, call_seconds_) || spent(job_plan_seconds, job_call_seconds);
  }
  bool planning_stopped() const { return planning_stopped_; }
  // The budget is spent on some rank (agreed) where pattern `p` would be planned. In the checking
  // mode (stop_planning; `model`: a plan of its sparsity to adapt) no more planning on the
  // communicator; on the lagged path (hold_planning) none while the flag stays up. True the first
  // time on this communicator: the interposer counts and says it then.
  bool stop_planning(const PatternRecord& p, bool has_plan, bool model) { return budget_spent(p, has_plan, model, false); }
  bool hold_planning(const PatternRecord& p, bool has_plan) { return budget_spent(p, has_plan, false, true); }

  // The lagged path, in a call: what it runs. `agreement_open`: an agreement is under way (its
  // decisions not yet taken); `has_plan`: a plan is in use for the calls. The call the next
  // agreement is on (none under way, no call left to skip, past first_agreement()) runs the trial the
  // last agreement chose, and so does the call before it, untimed: a method timed on the call
  // after another's runs cold (its code and MPI's state for it not in the caches; timed so at np 2,
  // MPI_Alltoall's 0.6 us measured 2-3 times that after the direct exchange), which would favour
  // whatever ran the calls before. The others run a plan when there is one, else the faster of
  // MPI and the direct exchange (the direct exchange until both are timed).
  Path lagged_path(bool agreement_open, bool has_plan) const;
  // True when the next agreement is on the coming call (the one lagged_call_done then reports):
  // the call that is timed.
  bool agreement_due(bool agreement_open) const { return !agreement_open && lag_skip_ == 0 && lagged_calls_ >= first_agreement(); }
  // True when the call after the coming one is the one timed: the trial's warm-up.
  bool warm_up_due(bool agreement_open) const {
    return !agreement_open && !agreement_due(agreement_open) && lag_skip_ <= 1 && lagged_calls_ + 1 >= first_agreement();
  }
  // The call the first agreement is on: after COMMFIT_PLAN_AFTER calls (at least three), every one
  // of them MPI's with nothing of the interposer's in it. A program that times its alternatives
  // at set-up times MPI's calls, not the trials of the direct exchange (under oversubscription
  // those made the set-up's MPI_Alltoallv 1.5x slower); a communicator used for a few calls and
  // freed pays nothing. With COMMFIT_RECORD or COMMFIT_PLAN (watch_from_start), after three.
  long long first_agreement() const { return settings_.watch_from_start ? 3 : std::max<long long>(3, settings_.plan_after); }
  // After a call on the lagged path: counts it; true when the next agreement is on it (the call
  // then starts it). Not while one is under way, nor on the calls the gap skips, nor before
  // first_agreement().
  bool lagged_call_done(bool agreement_open);
  // The calls since the last agreement started, for the one starting now (and the count restarts).
  double take_window();
  long long lagged_calls() const { return lagged_calls_; }

  // An agreement's decisions taken (either path): counted. Then, in this order on the lagged path:
  void agreed() { ++agreed_calls_; }
  std::uint64_t agreed_calls() const { return agreed_calls_; }
  // ... the time of the call it was on, the slowest rank's, to what that call ran (`weight`: the
  // calls it stands for). A replay (a plan or the direct exchange) counts for stepping aside.
  void measured(PatternRecord& p, Ran ran, double slowest, double weight);
  // ... the plan judged: after kTrials timed replays past its first, one slower than the faster of
  // MPI and the direct exchange is dropped (p.mpi_kept; the pattern goes to that faster one).
  Verdict judge_plan(PatternRecord& p, bool has_plan) const;
  // ... which of MPI and the direct exchange the calls with no plan take, and the trial of the
  // next agreed call: the two in turn until both are timed on three calls past their first; then,
  // while they are within 1.5x of each other, each again in turn every fourth agreement, so that
  // each is compared by what it takes now; one far slower is not paid for again.
  void choose_baseline(const PatternRecord& p);
  bool use_direct() const { return use_direct_; }
  Trial trial() const { return trial_; }
  // ... pays or steps aside: every window of agreed calls (also on the checking path), a
  // communicator whose plans replayed fewer than a quarter of them steps aside to MPI for good.
  // True when it steps aside now. A replay on the checking path is counted with replayed().
  bool steps_aside();
  void replayed() { ++replays_; }
  std::uint64_t window() const;
  // ... the gap to the next agreement: doubling (up to kMaxGap) while agreements see the same
  // pattern (`seen`) and it is settled (its plan judged, failed, MPI kept, planning held, or its
  // baseline timed with planning not yet due), or while planning is held, 0 otherwise; then one
  // call more or not by a draw every rank makes alike; at least one when a trial is due (its
  // warm-up call). Called after choose_baseline.
  void space_agreements(const Signature& seen, const PatternRecord& p, bool has_plan, bool over_budget, bool planning_underway);
  // The calls an agreement completing now counts for the pattern it saw (`seen`): its own, and the
  // gap before it when the agreement before saw the same pattern.
  int counted_calls(const Signature& seen) const { return seen == lag_last_ ? 1 + lag_gap_ : 1; }
  // ... whether pattern `p` starts being planned (the lagged path): `threshold` calls counted, no plan,
  // not failed, not kept for MPI, within budget, not COMMFIT_PLAN's pattern, none being planned,
  // and the communicator past COMMFIT_PLAN_AFTER calls.
  bool plan_lagged(const PatternRecord& p, bool has_plan, bool planning_underway, bool over_budget, bool file_everywhere) const;
  // ... and which plan the next calls replay. `same_sparsity`: the plan in use is of another
  // pattern with `p`'s nonzero structure (it replays `p`'s sizes too).
  NextPlan next_plan(const PatternRecord& p, bool has_plan, bool file_everywhere, bool same_sparsity) const;

  // The checking path (an agreement on every call): pattern `p` is planned (or adapted from
  // `model`'s plan) now.
  bool plan_checked(const PatternRecord& p, bool has_plan, bool model) const;

 private:
  bool budget_spent(const PatternRecord& p, bool has_plan, bool model, bool for_now);
  bool due(const PatternRecord& p, bool model) const { return model || p.calls >= settings_.threshold; }

  PolicySettings settings_;
  double plan_seconds_ = 0, call_seconds_ = 0;
  bool planning_stopped_ = false;   // agreed: stays stopped
  bool budget_said_ = false;
  long long lagged_calls_ = 0;      // calls on the lagged path (the same on every rank)
  double window_calls_ = 0;         // ... since the last agreement started
  int lag_skip_ = 0;                // calls to let pass before the next agreement starts
  int lag_gap_ = 0;                 // ... doubled while agreements see one settled pattern
  Signature lag_last_;              // the pattern the last agreement saw
  std::uint64_t agreed_calls_ = 0;
  std::int64_t replays_ = 0;        // agreed calls a plan or the direct exchange ran
  std::int64_t window_replays_ = 0; // `replays_` when the current window began
  bool use_direct_ = false;         // MPI until the first agreement, then as measured
  Trial trial_ = Trial::mpi;        // the first agreed call times MPI
};

}  // namespace commfit::pmpi
