#include "planner/candidates.h"

#include "ir/cost_model.h"
#include "ir/error.h"
#include "planner/strategy_table.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

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
      if (value) choice(row.options, *s->sweep) = *value;
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

Comparison compare_candidates(const CommMatrix& m, const PlanOptions& base, bool keep_plan) {
  Comparison c;
  c.rows = candidates_for(m, base);
  for (std::size_t k = 0; k < c.rows.size(); ++k) {
    CandidateRow& row = c.rows[k];
    if (!row.skipped.empty()) continue;
    const auto start = std::chrono::steady_clock::now();
    if (base.progress) row.options.progress = [&base, &row](const std::string& pass) { base.progress(row.name + ": " + pass); };
    try {
      PlanReport report;
      Plan plan = make_plan(m, row.options, &report);
      for (const std::string& line : report.log) c.log.push_back(row.name + ": " + line);
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      row.phases = plan.manifest.phases;
      for (Bytes b : phase_max_message(plan)) row.max_message = std::max(row.max_message, b);
      row.estimate_s = plan.manifest.cost.estimate_s;
      row.simulated = !plan.manifest.options.contains("estimate");   // pipeline.cpp notes an analytic one
      row.loose_s = plan.manifest.options.value("timing", "") == "async" ? row.estimate_s : loose_estimate_s(plan, row.options.cost, row.options.topology);
      row.lower_bound_s = plan.manifest.cost.lower_bound_s;
      if (!c.chosen || candidate_cheaper(row, c.rows[*c.chosen])) {
        c.chosen = k;
        if (keep_plan) c.plan = std::move(plan);
      }
    } catch (const UsageError& e) {   // e.g. a strategy not implemented yet, or not applicable
      row.skipped = e.what();
    }
  }
  return c;
}

std::string format_comparison(const Comparison& c) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "  %-24s %8s %14s %12s %10s %12s %10s\n", "candidate", "phases", "max message B", "estimate s", "est/LB", "loose s",
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

nlohmann::ordered_json comparison_json(const Comparison& c) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CandidateRow& r : c.rows) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    if (!r.skipped.empty()) {
      j["skipped"] = r.skipped;
    } else {
      j["phases"] = r.phases;
      j["max_message"] = r.max_message;
      j["estimate_s"] = r.estimate_s;
      if (!r.simulated) j["simulated"] = false;
      j["loose_s"] = r.loose_s;
    }
    rows.push_back(j);
  }
  return rows;
}

}  // namespace commfit
