#include "planner/strategy_table.h"

#include "ir/error.h"
#include "planner/near_miss.h"
#include "planner/plan_option.h"

#include <algorithm>
#include <limits>

namespace commfit {
namespace {

#define COMMFIT_STRATEGY_ENTRY(name) &name##_strategy,
using StrategyGetter = const Strategy& (*)();
constexpr StrategyGetter kStrategies[] = {COMMFIT_STRATEGIES(COMMFIT_STRATEGY_ENTRY)};
#undef COMMFIT_STRATEGY_ENTRY

const OptionEntry* find_option(const Strategy& s, StrategyOption option) {
  for (const OptionEntry& e : s.options)
    if (e.option == option) return &e;
  return nullptr;
}

}  // namespace

std::span<const Strategy* const> strategy_table() {
  // Built on first use (each entry is a function-local static of its own file: no order of
  // static initialisation to depend on).
  static const std::vector<const Strategy*> table = [] {
    std::vector<const Strategy*> t;
    for (StrategyGetter get : kStrategies) t.push_back(&get());
    return t;
  }();
  return table;
}

const Strategy* find_strategy(const std::string& name) {
  for (const Strategy* s : strategy_table())
    if (name == s->entry.name) return s;
  return nullptr;
}

std::string strategy_names() {
  std::string out = "auto";
  for (const Strategy* s : strategy_table()) out += std::string(", ") + s->entry.name;
  return out;
}

const char* flag(StrategyOption o) {
  switch (o) {
    case StrategyOption::algorithm: return "--algorithm";
    case StrategyOption::variant: return "--variant";
    case StrategyOption::method: return "--method";
    case StrategyOption::chunk: return "--chunk";
    case StrategyOption::memory: return "--memory";
    case StrategyOption::concurrency: return "--concurrency";
    case StrategyOption::max_outstanding: return "--max-outstanding";
    case StrategyOption::steps: return "--steps";
  }
  return "?";
}

namespace {

const PlanOptionEntry& option_entry(StrategyOption option) {
  for (const PlanOptionEntry& e : plan_option_table())
    if (e.strategy_option == option && e.text) return e;
  internal_error("strategy table", std::string(flag(option)) + " is not a choice option");
}

}  // namespace

std::string choice(const PlanOptions& o, StrategyOption option) { return option_entry(option).text(o); }

void set_choice(PlanOptions& o, StrategyOption option, const std::string& name) {
  if (const std::string why = option_entry(option).set(o, name); !why.empty())
    internal_error("strategy table", std::string(flag(option)) + " " + name + ": " + why);
}

std::span<const NamedEntry> sweep_choices(const Strategy& s) {
  if (!s.sweep) return {};
  const OptionEntry* e = find_option(s, *s.sweep);
  return e ? e->choices : std::span<const NamedEntry>{};
}

std::string option_choices_text(StrategyOption option) {
  std::string out;
  for (const Strategy* s : strategy_table())
    if (const OptionEntry* e = find_option(*s, option); e && !e->choices.empty())
      out += (out.empty() ? "" : "; ") + std::string(s->entry.name) + ": " + entry_names(e->choices);
  return out;
}

void check_given_options(const std::string& strategy, std::span<const StrategyOption> given) {
  const Strategy* s = find_strategy(strategy);
  if (!s && strategy != "auto") return;   // make_plan names the unknown strategy
  for (StrategyOption option : given) {
    if (s ? find_option(*s, option) != nullptr : option == StrategyOption::memory) continue;
    std::string readers = option == StrategyOption::memory ? "auto" : "";
    for (const Strategy* t : strategy_table())
      if (find_option(*t, option)) readers += (readers.empty() ? "" : ", ") + std::string(t->entry.name);
    throw UsageError(std::string(flag(option)) + " does not apply to strategy " + strategy + " (it applies to: " + readers + ")");
  }
}

void check_choices(const Strategy& s, const PlanOptions& o) {
  for (const OptionEntry& e : s.options) {
    if (e.choices.empty()) continue;
    const std::string value = choice(o, e.option);
    if (!has_entry(e.choices, value)) {
      std::vector<std::string> names;
      for (const NamedEntry& c : e.choices) names.emplace_back(c.name);
      throw UsageError(std::string("unknown ") + (flag(e.option) + 2) + " \"" + value + "\" for strategy " + s.entry.name +
                       did_you_mean(value, names) + " (choose from: " + entry_names(e.choices) + ")");
    }
  }
}

std::uint64_t network_messages(const CommMatrix& m) {
  std::uint64_t n = 0;
  m.for_each([&](Rank i, Rank j, Bytes) { n += i != j; });
  return n;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  return a > max - b ? max : a + b;
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  return b != 0 && a > max / b ? max : a * b;
}

}  // namespace commfit
