// The PMPI interposer's per-call choice (runtime/call_policy.h), driven without MPI: which path a
// call takes as MPI, the direct exchange and a plan are measured; when the two without a plan are
// timed again; when a plan is dropped; the planning budget's hold and stop; the agreements' spacing;
// stepping aside.
#include "runtime/call_policy.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using commfit::pmpi::CallPolicy;
using commfit::pmpi::NextPlan;
using commfit::pmpi::Path;
using commfit::pmpi::PatternRecord;
using commfit::pmpi::PolicySettings;
using commfit::pmpi::Ran;
using commfit::pmpi::Signature;
using commfit::pmpi::Timings;
using commfit::pmpi::Trial;
using commfit::pmpi::Verdict;

namespace {

// `n` calls of `seconds` each (the first pays connections and is not in the median).
void timed(Timings& t, double seconds, int n) {
  for (int k = 0; k < n; ++k) t.add(seconds);
}

// A pattern with MPI and the direct exchange both timed on three calls past their first.
PatternRecord measured(double mpi_s, double direct_s) {
  PatternRecord p;
  timed(p.mpi, mpi_s, 4);
  timed(p.direct, direct_s, 4);
  return p;
}

// The policy after `n` agreements.
CallPolicy after_agreements(int n, const PolicySettings& settings = {}) {
  CallPolicy policy(settings);
  for (int k = 0; k < n; ++k) policy.agreed();
  return policy;
}

// The policy with its lagged path past the first calls and no agreement gap: the next call is
// the one an agreement is on.
void past_first_calls(CallPolicy& policy) {
  while (policy.lagged_calls() <= policy.first_agreement()) policy.lagged_call_done(true);
}

}  // namespace

TEST_CASE("call policy: a method's time is the median of its calls after the first") {
  Timings t;
  t.add(9.0);
  CHECK_FALSE(t.warm());
  CHECK(t.per_call() == 9.0);   // the first alone until there is another
  t.add(1.0);
  CHECK(t.warm());
  CHECK(t.per_call() == 1.0);   // the cold first call left out
  t.add(3.0);
  CHECK(t.per_call() == 2.0);   // an even count: the mean of the middle two
  for (double x : {5.0, 100.0, 4.0}) t.add(x);
  CHECK(t.per_call() == 4.0);   // median of 1, 3, 5, 100, 4
  for (int k = 0; k < 8; ++k) t.add(7.0);
  CHECK(t.per_call() == 7.0);   // only the last 8 count
}

TEST_CASE("call policy: a method's spread is the quartiles of the same calls") {
  Timings t;
  t.add(9.0);
  CHECK(t.spread().low == 9.0);   // the first alone until there is another
  CHECK(t.spread().high == 9.0);
  for (double x : {4.0, 2.0}) t.add(x);
  CHECK(t.spread().low == 2.0);   // two or three samples: their extremes
  CHECK(t.spread().high == 4.0);
  for (double x : {50.0, 1.0, 3.0, 5.0, 6.0, 7.0, 8.0}) t.add(x);   // the last 8: 2 50 1 3 5 6 7 8
  CHECK(t.spread().low == 2.0);   // sorted 1 2 3 5 6 7 8 50: the second and the seventh
  CHECK(t.spread().high == 8.0);
  CHECK(t.spread().low <= t.per_call());
  CHECK(t.per_call() <= t.spread().high);
}

TEST_CASE("call policy: MPI faster than the direct exchange is chosen, and the reverse") {
  CallPolicy policy = after_agreements(3);
  past_first_calls(policy);
  // 2x apart: no re-timing, the faster one runs every call without a plan.
  policy.choose_baseline(measured(1e-3, 2e-3));
  CHECK_FALSE(policy.use_direct());
  CHECK(policy.trial() == Trial::none);
  CHECK(policy.lagged_path(false, false) == Path::mpi);
  CHECK(policy.lagged_path(false, true) == Path::plan);   // a plan in use replays

  policy.choose_baseline(measured(2e-3, 1e-3));
  CHECK(policy.use_direct());
  CHECK(policy.trial() == Trial::none);
  CHECK(policy.lagged_path(false, false) == Path::direct);
  CHECK(policy.lagged_path(false, true) == Path::plan);
}

TEST_CASE("call policy: until both are timed, the direct exchange runs and the timed calls alternate") {
  PatternRecord p;
  timed(p.mpi, 1e-3, 1);   // MPI timed once: not warm
  for (int n = 1; n <= 6; ++n) {
    CallPolicy policy = after_agreements(n);
    past_first_calls(policy);
    policy.choose_baseline(p);
    CHECK(policy.use_direct());
    CHECK(policy.trial() == (n % 2 ? Trial::direct : Trial::mpi));
    // The call the next agreement is on runs the trial; with an agreement under way, the usual.
    CHECK(policy.lagged_path(false, true) == (n % 2 ? Path::direct : Path::mpi));
    CHECK(policy.lagged_path(true, false) == Path::direct);
    CHECK(policy.lagged_path(true, true) == Path::plan);
  }
}

TEST_CASE("call policy: a trial runs on the call before the timed one too, untimed") {
  // MPI timed once, the direct exchange not at all: the second agreement's trial is MPI, while the
  // calls without a trial run the direct exchange.
  CallPolicy policy = after_agreements(2);
  past_first_calls(policy);
  PatternRecord p;
  timed(p.mpi, 1e-3, 1);
  policy.choose_baseline(p);
  REQUIRE(policy.trial() == Trial::mpi);
  REQUIRE(policy.use_direct());
  policy.space_agreements(Signature{1, 2}, p, false, false, false);
  // The call after the agreement is never the timed one: it warms MPI up.
  CHECK_FALSE(policy.agreement_due(false));
  CHECK(policy.warm_up_due(false));
  CHECK(policy.lagged_path(false, false) == Path::mpi);
  CHECK_FALSE(policy.lagged_call_done(false));
  // The next is timed, on MPI again.
  CHECK(policy.agreement_due(false));
  CHECK_FALSE(policy.warm_up_due(false));
  CHECK(policy.lagged_path(false, false) == Path::mpi);
  CHECK(policy.lagged_call_done(false));
  // While its agreement is under way, the usual path.
  CHECK(policy.lagged_path(true, false) == Path::direct);
}

TEST_CASE("call policy: one slow call does not settle MPI against the direct exchange") {
  // One MPI call 20x the others (the rank off its core): until each has three timed calls past
  // its first, the trials go on; then the median decides.
  PatternRecord p;
  timed(p.direct, 2e-6, 2);
  p.mpi.add(1e-6);
  p.mpi.add(20e-6);
  CallPolicy policy = after_agreements(3);
  policy.choose_baseline(p);
  CHECK(policy.use_direct());   // for now, by the one sample
  CHECK(policy.trial() == Trial::direct);
  timed(p.mpi, 1e-6, 2);
  timed(p.direct, 2e-6, 2);
  CallPolicy later = after_agreements(5);
  later.choose_baseline(p);
  CHECK_FALSE(later.use_direct());   // MPI's median: 1 us against 2
  CHECK(later.trial() == Trial::none);   // 2x apart: not timed again
}

TEST_CASE("call policy: within 1.5x of each other, MPI and the direct exchange are timed again every fourth agreement") {
  const PatternRecord close = measured(1.0e-3, 1.4e-3), far = measured(1.0e-3, 1.6e-3);
  std::vector<Trial> trials;
  for (int n = 1; n <= 16; ++n) {
    CallPolicy policy = after_agreements(n);
    policy.choose_baseline(close);
    trials.push_back(policy.trial());
    CHECK_FALSE(policy.use_direct());   // MPI is the faster: it runs the other calls
    CallPolicy other = after_agreements(n);
    other.choose_baseline(far);
    CHECK(other.trial() == Trial::none);   // one far slower is not paid for again
  }
  // Agreements 4, 8, 12, 16: the two in turn (4 / 4 odd: the direct exchange).
  for (int n = 1; n <= 16; ++n) {
    const Trial expect = n % 4 ? Trial::none : (n / 4) % 2 ? Trial::direct : Trial::mpi;
    CHECK_MESSAGE(trials[static_cast<std::size_t>(n - 1)] == expect, "agreement " << n);
  }
}

TEST_CASE("call policy: a communicator's first COMMFIT_PLAN_AFTER calls are MPI's, with no agreement") {
  // (COMMFIT_RECORD or COMMFIT_PLAN given: patterns watched from the start, after three calls.)
  for (const auto& setting : {std::pair{64LL, false}, std::pair{0LL, false}, std::pair{64LL, true}}) {
    const long long plan_after = setting.first;
    const bool watch = setting.second;
    CAPTURE(plan_after);
    CAPTURE(watch);
    PolicySettings settings;
    settings.plan_after = plan_after;
    settings.watch_from_start = watch;
    CallPolicy policy(settings);
    const long long first = watch ? 3 : std::max<long long>(3, plan_after);   // at least three calls
    for (long long k = 0; k < first; ++k) {
      CHECK(policy.lagged_path(false, false) == Path::mpi);   // the call as the program made it
      CHECK_FALSE(policy.agreement_due(false));
      CHECK_FALSE(policy.lagged_call_done(false));
    }
    // The next call starts the first agreement, standing for every call so far; it times MPI
    // (after MPI's calls: warm).
    CHECK(policy.agreement_due(false));
    CHECK(policy.lagged_path(false, false) == Path::mpi);
    CHECK(policy.lagged_call_done(false));
    CHECK(policy.take_window() == static_cast<double>(first + 1));
    CHECK(policy.take_window() == 0);
    // Once MPI is timed far faster, the calls with no plan stay with it.
    policy.agreed();
    policy.choose_baseline(measured(1e-3, 5e-3));
    CHECK(policy.lagged_path(false, false) == Path::mpi);
  }
}

TEST_CASE("call policy: a plan slower than the faster of MPI and the direct exchange is dropped") {
  const CallPolicy policy({});
  SUBCASE("not judged before its trials, nor without MPI's time") {
    PatternRecord p = measured(1e-3, 2e-3);
    timed(p.plan, 5e-3, static_cast<int>(CallPolicy::kTrials));
    CHECK(policy.judge_plan(p, true) == Verdict::untried);
    PatternRecord q;
    timed(q.plan, 5e-3, 10);
    CHECK(policy.judge_plan(q, true) == Verdict::untried);
    CHECK_FALSE(q.mpi_kept);
    CHECK(policy.judge_plan(p, false) == Verdict::untried);   // no plan: nothing to judge
  }
  SUBCASE("slower than MPI") {
    PatternRecord p = measured(1e-3, 2e-3);
    timed(p.plan, 1.2e-3, static_cast<int>(CallPolicy::kTrials) + 1);
    CHECK(policy.judge_plan(p, true) == Verdict::dropped);
    CHECK(p.mpi_kept);
    CHECK(policy.judge_plan(p, true) == Verdict::untried);   // judged once
    CHECK(policy.next_plan(p, true, false, true) == NextPlan::none);
  }
  SUBCASE("faster than MPI but slower than the direct exchange") {
    PatternRecord p = measured(3e-3, 1e-3);
    timed(p.plan, 2e-3, 6);
    CHECK(policy.judge_plan(p, true) == Verdict::dropped);
    CHECK(p.direct_better());
  }
  SUBCASE("faster than both: kept, and replayed") {
    PatternRecord p = measured(3e-3, 2e-3);
    timed(p.plan, 1e-3, 6);
    CHECK(policy.judge_plan(p, true) == Verdict::kept);
    CHECK_FALSE(p.mpi_kept);
    CHECK(policy.next_plan(p, true, true, false) == NextPlan::own);
  }
}

TEST_CASE("call policy: each agreed call's time goes to what it ran") {
  CallPolicy policy({});
  PatternRecord p;
  policy.measured(p, Ran::mpi, 1.0, 1);
  policy.measured(p, Ran::direct, 2.0, 3);
  policy.measured(p, Ran::own_plan, 3.0, 5);
  policy.measured(p, Ran::other_plan, 4.0, 7);
  CHECK(p.mpi.calls == 1);
  CHECK(p.direct.calls == 1);
  CHECK(p.direct_weight == 3);
  CHECK(p.plan.calls == 1);
  CHECK(p.replayed_calls == 5);
}

TEST_CASE("call policy: the plan of the next calls") {
  const CallPolicy policy({});
  PatternRecord p;
  CHECK(policy.next_plan(p, true, true, true) == NextPlan::own);
  CHECK(policy.next_plan(p, false, true, true) == NextPlan::file);
  CHECK(policy.next_plan(p, false, false, true) == NextPlan::keep);   // another size of the plan's sparsity
  CHECK(policy.next_plan(p, false, false, false) == NextPlan::none);
  p.failed = true;
  CHECK(policy.next_plan(p, false, false, true) == NextPlan::none);
}

TEST_CASE("call policy: planning starts at the threshold, after COMMFIT_PLAN_AFTER calls, once") {
  PolicySettings settings;
  settings.threshold = 3;
  settings.plan_after = 10;
  CallPolicy policy(settings);
  PatternRecord p;
  p.calls = 3;
  for (int k = 0; k < 9; ++k) policy.lagged_call_done(true);
  CHECK_FALSE(policy.plan_lagged(p, false, false, false, false));   // 9 calls: too early
  policy.lagged_call_done(true);
  CHECK(policy.plan_lagged(p, false, false, false, false));
  CHECK_FALSE(policy.plan_lagged(p, true, false, false, false));    // planned already
  CHECK_FALSE(policy.plan_lagged(p, false, true, false, false));    // a plan is being made
  CHECK_FALSE(policy.plan_lagged(p, false, false, false, true));    // COMMFIT_PLAN's pattern
  p.calls = 2;
  CHECK_FALSE(policy.plan_lagged(p, false, false, false, false));   // below the threshold
  CHECK(policy.plan_checked(p, false, true));                       // adapted from a plan of its sparsity
  CHECK_FALSE(policy.plan_checked(p, false, false));
}

TEST_CASE("call policy: the planning budget holds planning on the lagged path and resumes it") {
  PolicySettings settings;
  settings.plan_budget = 0.1;
  CallPolicy policy(settings);
  policy.called(10.0);
  policy.planned(0.5);
  CHECK_FALSE(policy.over_budget(0, 0));
  policy.planned(0.6);   // 1.1 s against 10 s in calls
  CHECK(policy.over_budget(0, 0));
  CHECK(CallPolicy(settings).over_budget(2.0, 10.0));   // the job's budget spent

  PatternRecord p;
  p.calls = 5;
  for (int k = 0; k < 100; ++k) policy.lagged_call_done(true);
  CHECK(policy.hold_planning(p, false));          // said once
  CHECK_FALSE(policy.hold_planning(p, false));
  CHECK_FALSE(policy.planning_stopped());         // only held
  CHECK_FALSE(policy.plan_lagged(p, false, false, true, false));
  // The calls pay for the planning done (the agreed flag down): planning resumes.
  policy.called(10.0);
  CHECK_FALSE(policy.over_budget(0, 0));
  CHECK(policy.plan_lagged(p, false, false, false, false));
}

TEST_CASE("call policy: the planning budget stops planning for good in the checking mode") {
  CallPolicy policy({});
  PatternRecord p;
  p.calls = 1;
  CHECK_FALSE(policy.stop_planning(p, false, false));   // not due: below the threshold, no model
  CHECK_FALSE(policy.planning_stopped());
  CHECK_FALSE(policy.stop_planning(p, true, true));     // planned already
  CHECK(policy.stop_planning(p, false, true));          // due: a plan of its sparsity to adapt
  CHECK(policy.planning_stopped());
  p.calls = 100;
  CHECK_FALSE(policy.plan_checked(p, false, true));
  CHECK_FALSE(policy.stop_planning(p, false, false));   // said once
}

TEST_CASE("call policy: agreements space out while they see one settled pattern") {
  CallPolicy policy({});
  PatternRecord planned;   // its plan judged
  timed(planned.mpi, 2e-3, 2);
  timed(planned.plan, 1e-3, static_cast<int>(CallPolicy::kTrials) + 1);
  const Signature a{1, 2}, b{3, 4};
  // The lag_skip is the gap plus a draw of 0 or 1: measured by the calls until the next agreement.
  auto skipped = [&] {
    int calls = 0;
    while (!policy.lagged_call_done(false)) ++calls;
    return calls;
  };
  past_first_calls(policy);
  const std::vector<int> gaps = {0, 1, 3, 7, 15, 31, 63, 64, 64};
  for (std::size_t k = 0; k < gaps.size(); ++k) {
    policy.agreed();
    policy.space_agreements(a, planned, true, false, false);
    const int calls = skipped();
    CHECK_MESSAGE((calls == gaps[k] || calls == gaps[k] + 1), "agreement " << k << ": " << calls << " calls skipped");
  }
  // Another pattern: back to agreeing at once.
  policy.agreed();
  policy.space_agreements(b, planned, true, false, false);
  CHECK(skipped() <= 1);
  // A plan not judged yet (fewer than kTrials timed replays past its first): agreements stay close
  // together until it is, then space out.
  PatternRecord trying;
  timed(trying.mpi, 2e-3, 2);
  for (int k = 0; k <= static_cast<int>(CallPolicy::kTrials); ++k) {
    policy.agreed();
    policy.space_agreements(a, trying, true, false, false);
    CHECK(skipped() <= 1);
    trying.plan.add(1e-3);
  }
  for (int k = 0; k < 3; ++k) {
    policy.agreed();
    policy.space_agreements(a, trying, true, false, false);
    skipped();
  }
  policy.agreed();
  policy.space_agreements(a, trying, true, false, false);
  CHECK(skipped() >= 3);
  // Not settled (no plan yet, none held): no gap though the pattern repeats.
  PatternRecord fresh;
  policy.agreed();
  policy.space_agreements(b, fresh, false, false, false);
  CHECK(skipped() <= 1);
  // Held by the budget: the gap grows though the patterns change.
  int last = 0;
  for (int k = 0; k < 4; ++k) {
    policy.agreed();
    policy.space_agreements(k % 2 ? a : b, fresh, false, true, false);
    last = skipped();
  }
  CHECK(last >= 15);
}

// A pattern with no plan whose MPI and direct times are settled waits for planning to be due: the
// agreements space out, each counts the calls of the gap before it, and the gap ends by the call
// planning is due on (the threshold's, then COMMFIT_PLAN_AFTER's).
TEST_CASE("call policy: agreements space out while planning is not yet due") {
  for (const auto& due_at : {std::pair{1000, 0LL}, std::pair{3, 500LL}}) {
    const int threshold = due_at.first;
    const long long plan_after = due_at.second;
    CAPTURE(threshold);
    PolicySettings settings;
    settings.threshold = threshold;
    settings.plan_after = plan_after;
    CallPolicy policy(settings);
    PatternRecord p;
    timed(p.mpi, 2e-3, 4);
    timed(p.direct, 1e-3, 4);
    const Signature a{1, 2};
    past_first_calls(policy);
    int agreements = 0;
    while (!policy.plan_lagged(p, false, false, false, false)) {
      REQUIRE(agreements < 2000);
      while (!policy.lagged_call_done(false)) {
      }
      ++agreements;
      policy.agreed();
      p.calls += policy.counted_calls(a);
      CHECK(p.calls <= policy.lagged_calls());   // never more calls counted than were made
      policy.space_agreements(a, p, false, false, false);
    }
    // Due on time: late by at most the calls not counted (the first four, and the draw's call
    // after each agreement). Far fewer agreements than calls.
    const long long due = std::max<long long>(threshold, plan_after);
    CHECK(policy.lagged_calls() <= due + 4 + agreements);
    CHECK(agreements < 40);
  }
  // A pattern seen after another counts its own call only.
  CallPolicy policy({});
  PatternRecord p;
  timed(p.mpi, 2e-3, 4);
  timed(p.direct, 1e-3, 4);
  past_first_calls(policy);
  for (int k = 0; k < 4; ++k) policy.space_agreements(Signature{1, 2}, p, false, false, false);
  CHECK(policy.counted_calls(Signature{1, 2}) > 1);
  CHECK(policy.counted_calls(Signature{3, 4}) == 1);
}

TEST_CASE("call policy: a communicator whose plans replay too few calls steps aside") {
  PolicySettings settings;
  settings.threshold = 3;
  settings.max_plans = 8;   // the window: 4 * 3 * 8 = 96 agreed calls
  CallPolicy policy(settings);
  CHECK(policy.window() == 96);
  PatternRecord p;
  for (int k = 1; k <= 96; ++k) {
    policy.agreed();
    if (k % 4 == 0) policy.measured(p, Ran::own_plan, 1e-3, 1);   // a quarter replayed
    if (k < 96) CHECK_FALSE(policy.steps_aside());
  }
  CHECK_FALSE(policy.steps_aside());   // 24 of 96 replayed: pays
  for (int k = 1; k <= 96; ++k) {
    policy.agreed();
    if (k <= 23) policy.replayed();   // 23 of 96: fewer than a quarter
    if (k < 96) CHECK_FALSE(policy.steps_aside());
  }
  CHECK(policy.steps_aside());
}
