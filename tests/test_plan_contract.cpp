// The plan contract (ir/plan_contract.h): one writer, one reader, the keys in one order, and every
// field read back as written; a field of the wrong type is refused at /options/KEY.
#include "ir/error.h"
#include "ir/plan_contract.h"

#include <doctest/doctest.h>

#include <string>

namespace commfit {
namespace {

using ordered_json = nlohmann::ordered_json;

PlanContract full_contract() {
  PlanContract c;
  c.chosen = "bounded/8";
  c.candidates = {{.name = "async", .skipped = "not applicable"},
                  {.name = "bounded/8", .skipped = "", .phases = 3, .max_message = 4096, .estimate_s = 1.5e-5, .simulated = false, .loose_s = 1.2e-5}};
  c.contention = Contention::bounded;
  c.per_port = 8;
  c.memory = std::vector<Bytes>{100, 200};
  c.topology = "torus:2x1x1";
  c.timing = Timing::async;
  c.tau_s = 3e-6;
  c.bandwidth_Bps = 12.5e9;
  c.network.model = Network::ib;
  c.network.overhead_s = 5e-7;
  c.network.eager_limit = 4096;
  c.network.ib = {0.9, 0.8, 1.2};
  c.network.link_latency_s = 1e-7;
  c.network.window_bytes = 4194304;
  c.network.rtt_weight_bytes = 8775;
  c.network.intra_latency_s = 2e-7;
  c.network.intra_bandwidth_Bps = 5e9;
  c.intra = true;
  c.simulated = false;
  return c;
}

TEST_CASE("plan_contract: written and read back, field by field, with the provenance in its place") {
  const PlanContract c = full_contract();
  ordered_json provenance;
  provenance["algorithm"] = "optimal";
  provenance["seed"] = 7;
  const ordered_json j = contract_json(c, provenance);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  const std::vector<std::string> expected = {"chosen", "concurrency", "algorithm", "seed", "tau_s", "bandwidth_Bps", "contention", "topology",
                                             "timing", "memory", "network", "overhead_s", "eager_limit", "ib_factors", "link_latency_s",
                                             "window_bytes", "rtt_weight_bytes", "intra_latency_s", "intra_bandwidth_Bps", "estimate",
                                             "candidates"};
  CHECK(keys == expected);

  ordered_json back_provenance;
  const PlanContract r = read_contract(j, "m.json", back_provenance);
  CHECK(back_provenance == provenance);
  CHECK(r.chosen == c.chosen);
  REQUIRE(r.candidates.size() == 2);
  CHECK(r.candidates[0].skipped == "not applicable");
  CHECK(r.candidates[1].phases == 3);
  CHECK(r.candidates[1].max_message == 4096);
  CHECK(r.candidates[1].estimate_s == 1.5e-5);
  CHECK(!r.candidates[1].simulated);
  CHECK(r.candidates[1].loose_s == 1.2e-5);
  CHECK(r.contention == Contention::bounded);
  CHECK(r.per_port == 8);
  CHECK(r.memory == c.memory);
  CHECK(r.topology == c.topology);
  CHECK(r.timing == Timing::async);
  CHECK(r.tau_s == c.tau_s);
  CHECK(r.bandwidth_Bps == c.bandwidth_Bps);
  CHECK(r.network.model == Network::ib);
  CHECK(r.network.overhead_s == c.network.overhead_s);
  CHECK(r.network.eager_limit == 4096);
  CHECK(r.network.ib.be == 0.9);
  CHECK(r.network.ib.ys == 1.2);
  CHECK(r.network.link_latency_s == 1e-7);
  CHECK(r.network.window_bytes == 4194304);
  CHECK(r.network.rtt_weight_bytes == 8775);
  CHECK(r.intra);
  CHECK(r.network.intra_latency_s == 2e-7);
  CHECK(r.network.intra_bandwidth_Bps == 5e9);
  CHECK(!r.simulated);
  // Written again: the same bytes.
  CHECK(contract_json(r, back_provenance).dump() == j.dump());
}

TEST_CASE("plan_contract: a plan that records nothing reads as the defaults; optional fields stay unwritten") {
  ordered_json provenance;
  const PlanContract r = read_contract(ordered_json::object(), "m.json", provenance);
  CHECK(r.contention == Contention::node);
  CHECK(r.timing == Timing::synchronous);
  CHECK(!r.memory);
  CHECK(r.topology.empty());
  CHECK(r.simulated);
  CHECK(r.chosen.empty());
  PlanContract plain;
  plain.tau_s = 2e-6;
  plain.bandwidth_Bps = 1e10;
  plain.network.overhead_s = 5e-7;
  const ordered_json j = contract_json(plain, ordered_json::object());
  for (const char* absent : {"chosen", "concurrency", "topology", "memory", "ib_factors", "link_latency_s", "window_bytes", "rtt_weight_bytes",
                             "intra_latency_s", "estimate", "candidates"})
    CHECK_MESSAGE(!j.contains(absent), absent);
}

TEST_CASE("plan_contract: a field of the wrong kind is refused at its place") {
  const auto refused = [](const ordered_json& options) -> std::string {
    ordered_json provenance;
    try {
      read_contract(options, "m.json", provenance);
    } catch (const InputError& e) {
      CHECK(e.file() == "m.json");
      return e.place() + ": " + e.problem();
    }
    return "accepted";
  };
  CHECK(refused({{"contention", "sometimes"}}) == "/options/contention: unknown contention rule \"sometimes\"");
  CHECK(refused({{"contention", "bounded"}}).starts_with("/options/concurrency: the bounded rule needs"));
  CHECK(refused({{"contention", "bounded"}, {"concurrency", 0}}).starts_with("/options/concurrency:"));
  CHECK(refused({{"memory", {1, -2}}}) == "/options/memory: expected non-negative integers");
  CHECK(refused({{"topology", 3}}) == "/options/topology: expected a topology spec");
  CHECK(refused({{"timing", "later"}}).starts_with("/options/timing:"));
  CHECK(refused({{"tau_s", "fast"}}).starts_with("/options/tau_s:"));
  CHECK(refused({{"network", "carrier pigeon"}}).starts_with("/options/network:"));
  CHECK(refused({{"ib_factors", "1;2"}}).starts_with("/options/ib_factors:"));
  CHECK(refused({{"eager_limit", -1}}).starts_with("/options/eager_limit:"));
  CHECK(refused({{"candidates", {{{"name", 5}}}}}).starts_with("/options/candidates/0/name: expected a string"));
  CHECK(refused({{"candidates", {{{"name", "x"}, {"phases", 1}}}}}).starts_with("/options/candidates/0/max_message:"));
  CHECK(refused({{"chosen", false}}).starts_with("/options/chosen:"));
  ordered_json provenance;
  CHECK_THROWS_AS(read_contract(ordered_json::array(), "m.json", provenance), InputError);
}

}  // namespace
}  // namespace commfit
