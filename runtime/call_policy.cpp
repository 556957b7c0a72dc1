// The PMPI interposer's per-call choice (runtime/call_policy.h): decisions from agreed numbers,
// no MPI.
#include "runtime/call_policy.h"

#include "runtime/pmpi_signature.h"

#include <algorithm>

namespace commfit::pmpi {

namespace {
// The timed calls after the first, sorted; their number.
int sorted_samples(const Timings& t, double (&v)[8]) {
  const int n = static_cast<int>(std::min<std::int64_t>(t.calls - 1, 8));
  std::copy(t.last, t.last + n, v);
  std::sort(v, v + n);
  return n;
}

double sorted_median(const Timings& t) {
  if (t.calls < 2) return t.first;
  double v[8];
  const int n = sorted_samples(t, v);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

void Timings::add(double seconds) {
  if (calls++ == 0) first = seconds;
  else last[(calls - 2) % 8] = seconds;
  median_ = sorted_median(*this);
}

Timings::Spread Timings::spread() const {
  if (calls < 2) return {first, first};
  double v[8];
  const int n = sorted_samples(*this, v);
  return {v[(n - 1) / 4], v[(3 * (n - 1) + 3) / 4]};
}

bool CallPolicy::budget_spent(const PatternRecord& p, bool has_plan, bool model, bool for_now) {
  if (planning_stopped_ || has_plan || p.failed || !due(p, model)) return false;
  planning_stopped_ = !for_now;
  if (budget_said_) return false;
  budget_said_ = true;
  return true;
}

Path CallPolicy::lagged_path(bool agreement_open, bool has_plan) const {
  // The call the next agreement is on is the one timed: it runs the trial, after the call before it.
  const Trial trial = agreement_due(agreement_open) || warm_up_due(agreement_open) ? trial_ : Trial::none;
  if (trial == Trial::mpi) return Path::mpi;
  if (trial == Trial::direct || (!has_plan && use_direct_)) return Path::direct;
  return has_plan ? Path::plan : Path::mpi;
}

bool CallPolicy::lagged_call_done(bool agreement_open) {
  const bool due = agreement_due(agreement_open);   // counted as it was before this call
  ++window_calls_, ++lagged_calls_;
  if (!agreement_open && lag_skip_ > 0) --lag_skip_;   // a call of the gap
  return due;
}

double CallPolicy::take_window() {
  const double calls = window_calls_;
  window_calls_ = 0;
  return calls;
}

void CallPolicy::measured(PatternRecord& p, Ran ran, double slowest, double weight) {
  p.weight += weight;
  switch (ran) {
    case Ran::direct:
      ++replays_;   // commfit's path, for stepping aside
      p.direct.add(slowest);
      p.direct_weight += weight;
      break;
    case Ran::own_plan:
      ++replays_;
      p.plan.add(slowest);
      p.replayed_calls += weight;
      break;
    case Ran::other_plan: ++replays_; break;
    case Ran::mpi: p.mpi.add(slowest); break;
  }
}

Verdict CallPolicy::judge_plan(PatternRecord& p, bool has_plan) const {
  if (!has_plan || p.mpi_kept || p.plan.calls <= kTrials || p.mpi.calls == 0) return Verdict::untried;
  if (p.plan.per_call() <= p.baseline_per_call()) return Verdict::kept;
  p.mpi_kept = true;
  return Verdict::dropped;
}

void CallPolicy::choose_baseline(const PatternRecord& p) {
  use_direct_ = p.baseline_known() ? p.direct_better() : true;
  const double mpi_t = p.mpi.per_call(), direct_t = p.direct.per_call();
  const bool close = std::max(mpi_t, direct_t) < 1.5 * std::min(mpi_t, direct_t);
  if (!p.baseline_settled()) trial_ = (agreed_calls_ & 1) ? Trial::direct : Trial::mpi;
  else if (close && agreed_calls_ % 4 == 0) trial_ = (agreed_calls_ / 4) & 1 ? Trial::direct : Trial::mpi;
  else trial_ = Trial::none;
}

std::uint64_t CallPolicy::window() const {
  return std::max<std::uint64_t>(64, 4 * static_cast<std::uint64_t>(settings_.threshold) * settings_.max_plans);
}

bool CallPolicy::steps_aside() {
  const std::uint64_t w = window();
  if (agreed_calls_ % w != 0) return false;
  const bool aside = 4 * (replays_ - window_replays_) < static_cast<std::int64_t>(w);
  window_replays_ = replays_;
  return aside;
}

void CallPolicy::space_agreements(const Signature& seen, const PatternRecord& p, bool has_plan, bool over_budget, bool planning_underway) {
  // With planning held or stopped there is nothing a prompt agreement could start: the gap grows
  // though the patterns change (a program whose patterns never settle pays least). A program that
  // alternates its patterns in step with the agreements still has each one seen: the draw.
  // A plan is settled once it has been judged: until its kTrials timed replays are in, agreements
  // follow one another with no gap, so that a plan slower than MPI or the direct exchange is
  // dropped within five agreements of its first replay, not after hundreds of calls.
  // A pattern with no plan yet whose baseline is timed is settled too until planning is due (at
  // COMMFIT_THRESHOLD calls and COMMFIT_PLAN_AFTER): the gap stops short of that call, and each
  // agreement counts the calls of the gap before it (counted_calls), so a threshold far off costs
  // few agreements and is met on time.
  const bool held = over_budget || planning_stopped_;
  const bool judged = has_plan && (p.plan.calls > kTrials || p.mpi.calls == 0);
  const long long due_in = std::max<long long>(settings_.threshold - p.calls, settings_.plan_after - lagged_calls_);
  const bool waiting = !has_plan && !p.failed && !p.mpi_kept && p.baseline_settled() && due_in > 1;
  const bool settled = judged || p.failed || p.mpi_kept || held || waiting;
  lag_gap_ = (seen == lag_last_ || held) && settled && !planning_underway ? std::min(kMaxGap, 2 * lag_gap_ + 1) : 0;
  if (waiting && !held) lag_gap_ = static_cast<int>(std::min<long long>(lag_gap_, due_in - 1));
  lag_last_ = seen;
  lag_skip_ = lag_gap_ + static_cast<int>(mix(agreed_calls_) & 1);
  // A trial's timed call comes after one call of its own (lagged_path): never the next call.
  if (trial_ != Trial::none) lag_skip_ = std::max(lag_skip_, 1);
}

bool CallPolicy::plan_lagged(const PatternRecord& p, bool has_plan, bool planning_underway, bool over_budget, bool file_everywhere) const {
  return !planning_underway && !has_plan && !p.failed && !p.mpi_kept && !over_budget && !file_everywhere && p.calls >= settings_.threshold &&
         lagged_calls_ >= settings_.plan_after;
}

NextPlan CallPolicy::next_plan(const PatternRecord& p, bool has_plan, bool file_everywhere, bool same_sparsity) const {
  if (has_plan && !p.mpi_kept) return NextPlan::own;
  if (file_everywhere) return NextPlan::file;
  if (same_sparsity && !p.mpi_kept && !p.failed) return NextPlan::keep;
  return NextPlan::none;
}

bool CallPolicy::plan_checked(const PatternRecord& p, bool has_plan, bool model) const {
  return !has_plan && !p.failed && !planning_stopped_ && due(p, model);
}

}  // namespace commfit::pmpi
