// The planning options by name (planner/plan_option.h): every key sets its field, a value of the
// wrong kind is refused naming KEY=VALUE, and a key that is not a planning option is left to the
// caller.
#include "ir/error.h"
#include "planner/plan_option.h"
#include "planner/strategy_table.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace commfit {
namespace {

TEST_CASE("set_plan_option: every key sets its field") {
  PlanOptions o;
  const std::pair<const char*, const char*> settings[] = {
      {"strategy", "bounded"},   {"algorithm", "rs_n"},     {"variant", "bhj"},        {"method", "relaxation"},
      {"concurrency", "8"},      {"max-outstanding", "16"}, {"steps", "2"},            {"chunk", "64KiB"},
      {"topology", "torus:2x2x2"}, {"seed", "9"},           {"tau", "3us"},            {"bandwidth", "12.5GB/s"},
      {"network", "ib"},         {"ib-factors", "0.9,0.8,1.2"}, {"overhead", "500ns"}, {"eager-limit", "4KiB"},
      {"link-latency", "100ns"}, {"window", "4MiB"},        {"rtt-weight", "8775"},    {"intra-latency", "200ns"},
      {"intra-bandwidth", "5GB/s"}, {"cores-per-node", "2"}, {"rendezvous", "3us"}};
  std::set<std::string> set_keys;
  for (const auto& setting : settings) {   // no structured binding: doctest's macros capture it
    const std::string key = setting.first;
    CHECK_MESSAGE(set_plan_option(o, key, setting.second), key);
    set_keys.insert(key);
  }
  const std::vector<std::string> keys = plan_option_keys();
  std::set<std::string> listed(keys.begin(), keys.end());
  CHECK(listed == set_keys);   // the list names every key, and the test sets each
  CHECK(o.strategy == "bounded");
  CHECK(o.algorithm == "rs_n");
  CHECK(o.variant == "bhj");
  CHECK(o.method == "relaxation");
  CHECK(o.concurrency == 8);
  CHECK(o.max_outstanding == 16);
  CHECK(o.steps == 2);
  CHECK(o.chunk == 65536);
  CHECK(o.topology.spec() == "torus:2x2x2");
  CHECK(o.seed == 9);
  CHECK(o.cost.tau_s == doctest::Approx(3e-6));
  CHECK(o.cost.bandwidth_Bps == doctest::Approx(12.5e9));
  const NetworkOptions& n = o.cost.network;
  CHECK(n.model == Network::ib);
  CHECK(n.ib.be == 0.9);
  CHECK(n.ib.bs == 0.8);
  CHECK(n.ib.ys == 1.2);
  CHECK(n.overhead_s == doctest::Approx(5e-7));
  CHECK(n.eager_limit == 4096);
  CHECK(n.link_latency_s == doctest::Approx(1e-7));
  CHECK(n.window_bytes == 4194304);
  CHECK(n.rtt_weight_bytes == 8775);
  CHECK(n.intra_latency_s == doctest::Approx(2e-7));
  CHECK(n.intra_bandwidth_Bps == doctest::Approx(5e9));
  CHECK(n.cores_per_node == 2);
  CHECK(n.rendezvous_s == doctest::Approx(3e-6));
  CHECK_NOTHROW(check_plan_options(o));
}

TEST_CASE("set_plan_option: a value of the wrong kind is refused, naming it; other keys are the caller's") {
  const auto refused = [](const char* key, const char* value) -> std::string {
    PlanOptions o;
    try {
      set_plan_option(o, key, value);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refused("tau", "fast").starts_with("tau=fast: expected a time"));
  CHECK(refused("bandwidth", "-1GB/s").starts_with("bandwidth=-1GB/s: expected a rate"));
  CHECK(refused("network", "pigeon") == "network=pigeon: expected flow or ib");
  CHECK(refused("ib-factors", "1,2").starts_with("ib-factors=1,2: expected three positive numbers"));
  CHECK(refused("seed", "-3") == "seed=-3: expected a whole number");
  CHECK(refused("seed", "") == "seed=: expected a whole number");
  CHECK(refused("window", "inf").starts_with("window=inf: expected a size"));
  CHECK(refused("intra-bandwidth", "0").starts_with("intra-bandwidth=0: expected a rate above 0"));
  CHECK(refused("cores-per-node", "two") == "cores-per-node=two: expected a whole number of cores up to 2^20");
  CHECK(refused("cores-per-node", "2000000") == "cores-per-node=2000000: expected a whole number of cores up to 2^20");
  CHECK(refused("seed", "12abc") == "seed=12abc: expected a whole number");
  CHECK(refused("concurrency", "eight") == "concurrency=eight: expected a whole number below 2^32");
  CHECK(refused("steps", "4294967296") == "steps=4294967296: expected a whole number below 2^32");
  CHECK(refused("chunk", "1.5KB") == "chunk=1.5KB: expected a whole number of bytes (or with a unit: 64KiB)");
  CHECK(refused("eager-limit", "0.5") == "eager-limit=0.5: expected a whole number of bytes (or with a unit: 64KiB)");
  CHECK(refused("topology", "torus:0") == "topology=torus:0: every dimension size must be at least 1");
  CHECK_THROWS_WITH_AS(option_quantity("memory", "1e400", Quantity::bytes, "a size"), "memory=1e400: expected a size", UsageError);
  CHECK(option_quantity("memory", "8MiB", Quantity::bytes, "a size") == 8388608);
  CHECK(option_whole("root", "7", "a rank") == 7);
  PlanOptions o;
  CHECK(!set_plan_option(o, "keep", "dir"));
  CHECK(!set_plan_option(o, "root", "1"));
  // A strategy option the strategy does not read is refused by name, as on the command line.
  PlanOptions b;
  b.strategy = "bounded";
  const std::vector<std::string> algorithm{"algorithm"}, memory{"memory"}, none;
  CHECK_THROWS_WITH_AS(check_plan_option_keys(b, algorithm), "--algorithm does not apply to strategy bounded (it applies to: direct, two-stage)",
                       UsageError);
  CHECK_NOTHROW(check_plan_option_keys(b, none));
  b.strategy = "auto";
  CHECK_NOTHROW(check_plan_option_keys(b, memory));
  // Choices are checked once, with the strategy: a concurrency bounded does not offer.
  CHECK(set_plan_option(o, "strategy", "bounded"));
  CHECK(set_plan_option(o, "concurrency", "3"));
  CHECK_THROWS_AS(check_plan_options(o), UsageError);
}

}  // namespace
}  // namespace commfit

namespace commfit {
namespace {

TEST_CASE("plan options: each entry reads back what it writes, and the choices go through it") {
  // Every entry with a text: setting its default's text leaves the options as they were.
  for (const PlanOptionEntry& e : plan_option_table()) {
    if (!e.text) continue;
    PlanOptions o;
    const std::string before = e.text(o);
    CHECK_MESSAGE(e.set(o, before).empty(), e.key);
    CHECK_MESSAGE(e.text(o) == before, e.key);
  }
  // The strategy table's choices are set and read by name through the same entries.
  PlanOptions o;
  set_choice(o, StrategyOption::concurrency, "16");
  CHECK(o.concurrency == 16);
  CHECK(choice(o, StrategyOption::concurrency) == "16");
  set_choice(o, StrategyOption::algorithm, "lp");
  CHECK(o.algorithm == "lp");
  CHECK(choice(o, StrategyOption::steps) == "3");
  // A strategy option's entry names the option the strategy table knows it by.
  for (const PlanOptionEntry& e : plan_option_table())
    if (e.strategy_option) CHECK(std::string(flag(*e.strategy_option)) == std::string("--") + e.key);
}

}  // namespace
}  // namespace commfit
