#include "planner/candidates.h"

#include "ir/cost_model.h"
#include "ir/error.h"
#include "planner/strategy_table.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

namespace commfit {

std::vector<CandidateRow> candidates_for(const CommMatrix& m, const PlanOptions& base) {
  // Memory limits decide the field: the strategies that honour them, or all the others.
  const bool limited = !base.memory.empty() || !m.memory.empty();
  std::vector<CandidateRow> rows;
  for (const Strategy* s : strategy_table()) {
    if (s->needs_memory_limits != limited) continue;
    const std::string skipped = s->auto_skip ? s->auto_skip(m) : "";
    auto add = [&](const std::string& name, const std::string* value) {
      CandidateRow row;
      row.name = name;
      row.options = base;
      row.options.strategy = s->entry.name;
      if (value) set_choice(row.options, *s->sweep, *value);
      row.skipped = skipped;
      rows.push_back(std::move(row));
    };
    if (!s->sweep) {
      add(s->entry.name, nullptr);
      continue;
    }
    for (const NamedEntry& value : sweep_choices(*s)) {
      const std::string v = value.name;
      add(std::string(s->entry.name) + "/" + v, &v);
    }
  }
  return rows;
}

// a beats b: a simulated estimate beats an analytic one (a plan beyond the simulation's limits is
// priced without its contention, often far below what it costs: it is not bet on while a priced
// plan exists); then a lower estimate; estimates equal up to floating-point rounding (1e-9
// relative: an h-phase plan and the one-phase async plan of a uniform pattern price the same sums
// in another order) go to fewer phases.
bool candidate_cheaper(const CandidateRow& a, const CandidateRow& b) {
  if (a.simulated != b.simulated) return a.simulated;
  const double tol = 1e-9 * std::max(a.estimate_s, b.estimate_s);
  if (a.estimate_s < b.estimate_s - tol) return true;
  if (a.estimate_s > b.estimate_s + tol) return false;
  return a.phases < b.phases;
}

namespace {

// a beats b by more than any chain of near-ties can make up: a simulated estimate against an
// analytic one, or an estimate lower by more than 1e-5 relative. candidate_cheaper lets the
// scan's choice rise by at most 1e-9 relative per switch, so over fewer than 10^4 candidates
// the choice after a's step stays below b's.
bool clearly_cheaper(const CandidateRow& a, const CandidateRow& b) {
  if (a.simulated != b.simulated) return a.simulated;
  return b.estimate_s > a.estimate_s * (1 + 1e-5);
}

// The serial loop's choice, made while candidates finish in any order. candidate_cheaper is not
// transitive (its tolerance), so the choice is the serial scan itself: rows are taken in index
// order, as far as every candidate before them has finished. A finished plan is held only while
// it can still be the final choice, rather than every plan until the end (memory: up to ~20
// plans of a large matrix) or none (the chosen one would be planned twice: async, say, which
// takes the longest). It is dropped
//   (a) once the scan has passed it and not chosen it, or has chosen another since;
//   (b) once a later candidate is cheaper than it: at that candidate's step it would replace it,
//       and a replaced candidate never comes back;
//   (c) once an earlier candidate is clearly cheaper (above): the choice at its own step is then
//       still cheaper than it.
// So besides the plans being made, the chosen one and near-ties waiting for an earlier candidate
// are alive.
class Choice {
 public:
  Choice(const std::vector<CandidateRow>& rows, bool keep_plans) : rows_(rows), keep_plans_(keep_plans), finished_(rows.size()), plans_(rows.size()) {
    for (std::size_t k = 0; k < rows.size(); ++k) finished_[k] = !rows[k].skipped.empty();
    scan();
  }

  // Candidate k is done: its row is filled in (or skipped) and `plan` is its plan, if any.
  void finished(std::size_t k, std::optional<Plan> plan) {
    finished_[k] = true;
    if (keep_plans_) plans_[k] = std::move(plan);
    scan();
    for (std::size_t j = 0; j < plans_.size(); ++j)
      if (plans_[j] && !may_be_final(j)) plans_[j].reset();
  }

  std::optional<std::size_t> chosen() const { return chosen_; }
  std::optional<Plan> take_plan() { return chosen_ ? std::move(plans_[*chosen_]) : std::nullopt; }

 private:
  bool planned(std::size_t k) const { return finished_[k] && rows_[k].skipped.empty(); }

  void scan() {
    for (; next_ < rows_.size() && finished_[next_]; ++next_)
      if (planned(next_) && (!chosen_ || candidate_cheaper(rows_[next_], rows_[*chosen_]))) chosen_ = next_;
  }

  bool may_be_final(std::size_t j) const {
    if (j < next_ && j != chosen_) return false;                                           // (a)
    for (std::size_t l = 0; l < rows_.size(); ++l) {
      if (l == j || !planned(l)) continue;
      if (l > j ? candidate_cheaper(rows_[l], rows_[j]) : clearly_cheaper(rows_[l], rows_[j])) return false;   // (b), (c)
    }
    return true;
  }

  const std::vector<CandidateRow>& rows_;
  bool keep_plans_;
  std::vector<bool> finished_;
  std::vector<std::optional<Plan>> plans_;
  std::size_t next_ = 0;                 // the scan has taken rows [0, next_)
  std::optional<std::size_t> chosen_;    // the serial loop's choice after row next_ - 1
};

// Plans one candidate and fills in its row; the plan is returned, its pass log appended to `log`.
// A UsageError (a strategy that does not apply) marks the row skipped.
std::optional<Plan> plan_candidate(const CommMatrix& m, CandidateRow& row, std::vector<std::string>& log) {
  const auto start = std::chrono::steady_clock::now();
  try {
    PlanReport report;
    Plan plan = make_plan(m, row.options, &report);
    for (const std::string& line : report.log) log.push_back(row.name + ": " + line);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    row.phases = plan.manifest.phases;
    for (Bytes b : phase_max_message(plan)) row.max_message = std::max(row.max_message, b);
    row.estimate_s = plan.manifest.cost.estimate_s;
    row.simulated = plan.manifest.contract.simulated;
    row.loose_s = plan.manifest.contract.timing == Timing::async ? row.estimate_s : loose_estimate_s(plan, row.options.cost, row.options.topology);
    row.lower_bound_s = plan.manifest.cost.lower_bound_s;
    return plan;
  } catch (const UsageError& e) {   // e.g. a strategy not implemented yet, or not applicable
    row.skipped = e.what();
    return std::nullopt;
  }
}

}  // namespace

Comparison compare_candidates(const CommMatrix& m, const PlanOptions& base, bool keep_plan) {
  Comparison c;
  c.rows = candidates_for(m, base);
  const std::size_t n = c.rows.size();
  // The candidates to plan, longest first by the strategy table's hint, so that the threads
  // finish together; this order decides only when a candidate is planned.
  std::vector<std::size_t> order;
  std::vector<double> cost(n, 1);
  for (std::size_t k = 0; k < n; ++k) {
    if (!c.rows[k].skipped.empty()) continue;
    order.push_back(k);
    if (const Strategy* s = find_strategy(c.rows[k].options.strategy); s && s->plan_cost) cost[k] = s->plan_cost(c.rows[k].options);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  std::mutex progress_mutex;   // base.progress is told one pass at a time
  for (CandidateRow& row : c.rows)
    if (base.progress)
      row.options.progress = [&base, &row, &progress_mutex](const std::string& pass) {
        const std::lock_guard lock(progress_mutex);
        base.progress(row.name + ": " + pass);
      };

  // Each thread takes the next candidate of `order` until none is left. An error other than a
  // UsageError is the serial loop's: the one of the first candidate (by index) that throws, so
  // candidates after it are not started and those before it still are.
  std::mutex mutex;   // guards choice and errors
  Choice choice(c.rows, keep_plan);
  std::vector<std::vector<std::string>> logs(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0}, first_error{n};
  auto work = [&] {
    for (std::size_t t; (t = next++) < order.size();) {
      const std::size_t k = order[t];
      if (k > first_error) continue;
      std::optional<Plan> plan;
      std::exception_ptr error;
      try {
        plan = plan_candidate(m, c.rows[k], logs[k]);
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      if (error) {
        errors[k] = error;
        first_error = std::min<std::size_t>(first_error, k);
      } else {
        choice.finished(k, std::move(plan));
      }
    }
  };
  // --print-after prints from inside the passes: one thread keeps its output in candidate order.
  const std::size_t threads = base.print_after.empty() ? std::min<std::size_t>(std::max(base.threads, 1u), std::max<std::size_t>(order.size(), 1)) : 1;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first_error < n) std::rethrow_exception(errors[first_error]);

  c.chosen = choice.chosen();
  if (keep_plan) {
    c.plan = choice.take_plan();
    commfit_assert(c.plan.has_value() == c.chosen.has_value(), "compare_candidates", "the chosen candidate's plan was not kept");
  }
  for (const std::vector<std::string>& lines : logs) c.log.insert(c.log.end(), lines.begin(), lines.end());
  return c;
}

std::string format_comparison(const Comparison& c) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "  %-24s %8s %14s %12s %10s %12s %10s\n", "candidate", "phases", "max message B", "estimate s", "est/bound", "loose s",
                "plan s");
  out += line;
  bool analytic = false;
  for (std::size_t k = 0; k < c.rows.size(); ++k) {
    const CandidateRow& r = c.rows[k];
    const char mark = c.chosen && *c.chosen == k ? '*' : ' ';
    if (!r.skipped.empty()) {
      std::snprintf(line, sizeof line, "%c %-24s skipped: %s\n", mark, r.name.c_str(), r.skipped.c_str());
    } else {
      analytic |= !r.simulated;
      std::snprintf(line, sizeof line, "%c %-24s %8u %14llu %12.4g%c%10.3f %12.4g %10.3f\n", mark, r.name.c_str(), r.phases,
                    static_cast<unsigned long long>(r.max_message), r.estimate_s, r.simulated ? ' ' : '~',
                    r.lower_bound_s > 0 ? r.estimate_s / r.lower_bound_s : 1.0, r.loose_s, r.seconds);
    }
    out += line;
  }
  if (analytic) out += "  ~ analytic: beyond the simulation's limits (chosen only if no candidate was simulated)\n";
  return out;
}

std::vector<CandidateRecord> candidate_records(const Comparison& c) {
  std::vector<CandidateRecord> rows;
  rows.reserve(c.rows.size());
  for (const CandidateRow& r : c.rows) {
    CandidateRecord x{.name = r.name, .skipped = r.skipped};
    if (r.skipped.empty()) {
      x.phases = r.phases;
      x.max_message = r.max_message;
      x.estimate_s = r.estimate_s;
      x.simulated = r.simulated;
      x.loose_s = r.loose_s;
    }
    rows.push_back(std::move(x));
  }
  return rows;
}

nlohmann::ordered_json bound_json(const ExchangeBound& b) {
  return {{"direct_s", b.direct_s},   {"direct_term", b.binding(false)}, {"relay_s", b.relay_s},  {"relay_term", b.binding(true)},
          {"latency_s", b.latency_s}, {"posting_s", b.posting_s},        {"port_s", b.port_s},    {"port_direct_s", b.port_direct_s}, {"link_s", b.link_s},
          {"ib_node_s", b.ib_s},      {"ib_flows_s", b.ib_direct_s}};
}

}  // namespace commfit
