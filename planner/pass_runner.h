// Runs one pass at a time: times it, logs it, and with --verify-each lowers and verifies every
// schedule a pass returns, naming the pass that broke it (STYLE.md 5).
#pragma once

#include "ir/error.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "planner/pipeline.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>

namespace commfit {

class PassRunner {
 public:
  PassRunner(const CommMatrix& m, bool verify_each, PlanReport* report)
      : m_(m), verify_each_(verify_each), report_(report) {}

  // The rules the schedules of this run must keep (set by the strategy before its passes run).
  VerifyRules rules;
  // Told each pass's name as it starts (PlanOptions::progress).
  std::function<void(const std::string&)> progress;

  template <class F>
  auto run(const char* name, F&& pass) {
    if (progress) progress(name);
    const auto start = std::chrono::steady_clock::now();
    auto result = pass();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char line[160];
    std::snprintf(line, sizeof line, "%s: %.3f s", name, seconds);
    std::string entry = line;
    if constexpr (std::is_same_v<std::decay_t<decltype(result)>, Schedule>) {
      if (verify_each_) {
        const auto problems = verify(lower(result, m_), m_, rules);
        if (!problems.empty()) internal_error(name, "the schedule fails verification: " + problems.front());
        entry += ", verified";
      }
    }
    if (report_) report_->log.push_back(entry);
    return result;
  }

 private:
  const CommMatrix& m_;
  bool verify_each_;
  PlanReport* report_;
};

}  // namespace commfit
