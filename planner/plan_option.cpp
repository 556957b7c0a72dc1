#include "planner/plan_option.h"

#include "ir/error.h"
#include "planner/strategy_table.h"
#include "planner/units.h"

#include <cmath>
#include <exception>
#include <vector>

namespace commfit {

namespace {

constexpr const char* kKeys[] = {"strategy",     "algorithm",     "variant",       "method",         "concurrency",
                                 "max-outstanding", "steps",      "chunk",         "topology",       "seed",
                                 "tau",          "bandwidth",     "network",       "ib-factors",     "overhead",
                                 "eager-limit",  "link-latency",  "window",        "rtt-weight",     "intra-latency",
                                 "intra-bandwidth"};

}  // namespace

std::span<const char* const> plan_option_keys() { return kKeys; }

void check_plan_option_keys(const PlanOptions& o, std::span<const std::string> keys) {
  constexpr StrategyOption kAll[] = {StrategyOption::algorithm,   StrategyOption::variant,         StrategyOption::method,
                                     StrategyOption::chunk,       StrategyOption::memory,          StrategyOption::concurrency,
                                     StrategyOption::max_outstanding, StrategyOption::steps};
  std::vector<StrategyOption> given;
  for (const std::string& key : keys)
    for (StrategyOption option : kAll)
      if (key == flag(option) + 2) given.push_back(option);
  check_given_options(o.strategy, given);
  check_plan_options(o);
}

std::uint64_t option_whole(const std::string& key, const std::string& value, const char* what) {
  std::size_t used = 0;
  try {
    const unsigned long long v = std::stoull(value, &used);
    if (used == value.size() && !value.empty() && value[0] != '-') return v;
  } catch (const std::exception&) {
  }
  throw UsageError(key + "=" + value + ": expected " + what);
}

double option_quantity(const std::string& key, const std::string& value, Quantity kind, const char* what) {
  const std::optional<double> q = parse_quantity(value, kind);
  if (!q || !(*q >= 0) || !std::isfinite(*q)) throw UsageError(key + "=" + value + ": expected " + what);
  return *q;
}

bool set_plan_option(PlanOptions& o, const std::string& key, const std::string& value) {
  NetworkOptions& net = o.cost.network;
  auto refuse = [&](const std::string& what) { throw UsageError(key + "=" + value + ": expected " + what); };
  auto quantity = [&](Quantity kind, const char* what) { return option_quantity(key, value, kind, what); };
  auto whole = [&](const char* what) { return option_whole(key, value, what); };
  if (key == "strategy") o.strategy = value;
  else if (key == "algorithm") o.algorithm = value;
  else if (key == "variant") o.variant = value;
  else if (key == "method") o.method = value;
  else if (key == "concurrency") o.concurrency = value;
  else if (key == "max-outstanding") o.max_outstanding = value;
  else if (key == "steps") o.steps = value;
  else if (key == "chunk") o.chunk = static_cast<Bytes>(quantity(Quantity::bytes, "a size in bytes (or with a unit: 64KiB)"));
  else if (key == "topology") o.topology = Topology::parse(value);
  else if (key == "seed") o.seed = whole("a whole number");
  else if (key == "tau") o.cost.tau_s = quantity(Quantity::seconds, "a time (2us, 500ns, or seconds)");
  else if (key == "bandwidth") o.cost.bandwidth_Bps = quantity(Quantity::rate, "a rate (12.5GB/s, 100Gbps, or bytes per second)");
  else if (key == "network") {
    const std::optional<Network> n = parse_network(value);
    if (!n) refuse("flow or ib");
    net.model = *n;
  } else if (key == "ib-factors") {
    const std::optional<IbFactors> f = parse_ib_factors(value);
    if (!f) refuse("three positive numbers Be,Bs,ys (e.g. 0.965,0.925,1.35)");
    net.ib = *f;
  } else if (key == "overhead") net.overhead_s = quantity(Quantity::seconds, "a time (500ns, or seconds)");
  else if (key == "eager-limit") net.eager_limit = static_cast<Bytes>(quantity(Quantity::bytes, "a size in bytes (or with a unit: 64KiB)"));
  else if (key == "link-latency") net.link_latency_s = quantity(Quantity::seconds, "a time per link (100ns, or seconds)");
  else if (key == "window") net.window_bytes = quantity(Quantity::bytes, "a size in bytes (or with a unit: 4MiB)");
  else if (key == "rtt-weight") net.rtt_weight_bytes = quantity(Quantity::bytes, "a size in bytes (8775 under smpirun)");
  else if (key == "intra-latency") net.intra_latency_s = quantity(Quantity::seconds, "a time (200ns, or seconds)");
  else if (key == "intra-bandwidth") {
    net.intra_bandwidth_Bps = quantity(Quantity::rate, "a rate (7GB/s, or bytes per second)");
    if (!(net.intra_bandwidth_Bps > 0)) refuse("a rate above 0");
  } else return false;
  return true;
}

}  // namespace commfit
