// Runs one pass at a time, by its entry in the pass table (planner/pass_table.h): times it, logs
// it, keeps the verifier's rules in step with the schedules the passes return, and with
// --verify-each checks every result (a schedule is lowered and verified, a CCOM checked against
// its matrix), naming the pass that broke it. --print-after PASS dumps what a pass
// returned.
#pragma once

#include "ir/ccom.h"
#include "ir/error.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "planner/pass_table.h"
#include "planner/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace commfit {

// The schedule as text, one transfer a line: what --print-after prints.
std::string format_schedule(const Schedule& s);

// What the lowering and the verifier read of the matrix besides the matrix: its columns and
// fingerprint, computed once per plan.
struct MatrixReading {
  MatrixColumns columns;
  std::string fingerprint;
};

// Lowers `s` rank by rank (passes/lower.h) and verifies the plan as it streams by, never holding
// it: each rank's schedule, with the plan's request window `window` and its posting order
// `send_order[rank]` (none when `send_order` is empty), goes to the verifier and then to `each`,
// which may move it away. `mf` gets the plan's ranks, phases, fingerprint and
// staging_bytes_max; the seconds spent lowering and verifying are added to `lower_s` and
// `verify_s`. Returns the verifier's problems (empty: the plan is valid).
std::vector<std::string> lower_and_verify(const Schedule& s, const CommMatrix& m, const MatrixReading& reading, const VerifyRules& rules,
                                          std::uint32_t window, std::span<const std::vector<Rank>> send_order, Manifest& mf,
                                          const std::function<void(RankSchedule&)>& each, double& lower_s, double& verify_s);

class PassRunner {
 public:
  // `links`: the machine has shared links (a link rule is then more than the node rule).
  PassRunner(const CommMatrix& m, const PlanOptions& o, PlanReport* report)
      : m_(m), verify_each_(o.verify_each || verify_each_by_default()), links_(o.topology.link_count() > 0),
        print_after_(o.print_after), report_(report) {}

  // The rules the schedules of this run keep: set from the entry of each schedule-producing pass
  // (a link rule is the node rule on a machine without shared links). The route is the caller's.
  VerifyRules rules;
  // Told each pass's name as it starts (PlanOptions::progress).
  std::function<void(const std::string&)> progress;

  // The matrix's columns and fingerprint, computed on first use.
  const MatrixReading& reading() {
    if (!reading_) reading_ = MatrixReading{matrix_columns(m_), matrix_fingerprint(m_)};
    return *reading_;
  }

  // A pass timed and logged by the caller (the lowering and the verifier run interleaved, rank
  // by rank): its log line.
  void log(Pass p, double seconds) {
    char line[160];
    std::snprintf(line, sizeof line, "%s: %.3f s", pass_entry(p).entry.name, seconds);
    if (report_) report_->log.push_back(line);
  }

  // `per_port`: the messages per port per phase the schedule keeps, for a pass whose entry says
  // the bounded rule (the strategy's --concurrency).
  template <class F>
  auto run(Pass p, F&& pass, int per_port = 0) {
    const PassEntry& entry = pass_entry(p);
    if (progress) progress(entry.entry.name);
    const auto start = std::chrono::steady_clock::now();
    auto result = pass();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char line[160];
    std::snprintf(line, sizeof line, "%s: %.3f s", entry.entry.name, seconds);
    std::string log = line;
    using Result = std::decay_t<decltype(result)>;
    if constexpr (std::is_same_v<Result, Schedule>) {
      after_schedule(entry, result, log, per_port);
    } else if constexpr (std::is_same_v<Result, std::optional<Schedule>>) {
      if (result) after_schedule(entry, *result, log, per_port);
    } else if constexpr (std::is_same_v<Result, CompressedMatrix>) {
      if (verify_each_) {
        if (const std::string problem = check_ccom(result, m_); !problem.empty())
          internal_error(entry.entry.name, "the CCOM fails its check: " + problem);
        log += ", verified";
      }
    }
    if (report_) report_->log.push_back(log);
    return result;
  }

 private:
  void after_schedule(const PassEntry& entry, const Schedule& s, std::string& log, int per_port) {
    commfit_assert(entry.schedule, entry.entry.name, "returns a schedule but its pass table entry says it does not");
    if (entry.contention) {
      rules.contention = *entry.contention == Contention::link && !links_ ? Contention::node : *entry.contention;
      commfit_assert((rules.contention == Contention::bounded) == (per_port > 0), entry.entry.name, "a bounded pass runs with a per-port limit, and only it");
      rules.per_port = std::max(per_port, 1);
    }
    if (entry.contention || entry.memory) rules.memory = entry.memory;
    if (verify_each_) {
      Manifest mf;
      double lower_s = 0, verify_s = 0;
      const auto problems = lower_and_verify(s, m_, reading(), rules, 0, {}, mf, {}, lower_s, verify_s);
      if (!problems.empty()) internal_error(entry.entry.name, "the schedule fails verification: " + problems.front());
      log += ", verified";
    }
    if (print_after_ == entry.entry.name) std::fprintf(stderr, "commfit: after %s:\n%s", entry.entry.name, format_schedule(s).c_str());
  }

  const CommMatrix& m_;
  bool verify_each_;
  bool links_;
  std::string print_after_;
  PlanReport* report_;
  std::optional<MatrixReading> reading_;
};

}  // namespace commfit
