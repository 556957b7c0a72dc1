#include "ir/plan_contract.h"

#include "ir/error.h"
#include "ir/json_fields.h"

#include <cmath>
#include <initializer_list>
#include <limits>

namespace commfit {

const char* to_string(Contention c) {
  switch (c) {
    case Contention::none: return "none";
    case Contention::node: return "node";
    case Contention::link: return "link";
    case Contention::bounded: return "bounded";
  }
  return "?";
}

std::optional<Contention> parse_contention(std::string_view name) {
  for (Contention c : {Contention::none, Contention::node, Contention::link, Contention::bounded})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kAnalytic = "analytic (beyond the simulation's work limit)";

// The contract's keys, in the order they are written: "chosen" and "concurrency" lead (as they
// always have), the strategy's provenance follows, then these and "candidates" last.
constexpr const char* kLeading[] = {"chosen", "concurrency"};
constexpr const char* kTrailing[] = {"machine", "tau_s", "bandwidth_Bps", "contention", "topology", "timing", "memory", "network", "overhead_s",
                                     "eager_limit", "ib_factors", "link_latency_s", "window_bytes", "rtt_weight_bytes",
                                     "intra_latency_s", "intra_bandwidth_Bps", "cores_per_node", "rendezvous_s", "estimate", "candidates"};

bool is_contract_key(const std::string& key) {
  for (const char* k : kLeading)
    if (key == k) return true;
  for (const char* k : kTrailing)
    if (key == k) return true;
  return false;
}

std::vector<CandidateRecord> read_candidates(const ordered_json& rows, const std::string& file) {
  if (!rows.is_array()) throw InputError(file, "/options/candidates", "expected an array of candidate rows");
  if (rows.size() > 1000) throw InputError(file, "/options/candidates", "more than 1000 candidate rows");
  std::vector<CandidateRecord> out;
  std::size_t k = 0;
  for (const ordered_json& row : rows) {
    const std::string at = "/options/candidates/" + std::to_string(k++);
    if (!row.is_object()) throw InputError(file, at, "expected an object");
    JsonFields r(row, file, at);
    CandidateRecord c;
    const auto name = r.maybe_string("name");
    if (!name) r.fail("name", "expected a string");
    c.name = *name;
    if (const auto skipped = r.maybe_string("skipped")) {
      c.skipped = *skipped;
    } else {
      const auto phases = r.maybe("phases"), max_message = r.maybe("max_message"), estimate = r.maybe("estimate_s");
      if (!phases || !json_natural(*phases) || phases->get<std::uint64_t>() > 0xffffffffu) r.fail("phases", "expected a phase count");
      if (!max_message || !json_natural(*max_message)) r.fail("max_message", "expected a byte count");
      if (!estimate || !estimate->is_number() || !(estimate->get<double>() >= 0))
        r.fail("estimate_s", "expected a non-negative number of seconds");
      c.phases = phases->get<Phase>();
      c.max_message = max_message->get<Bytes>();
      c.estimate_s = estimate->get<double>();
      if (const ordered_json* s = r.maybe("simulated")) {
        if (!s->is_boolean()) r.fail("simulated", "expected true or false");
        c.simulated = s->get<bool>();
      }
      c.loose_s = r.maybe_number("loose_s", 0);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

ordered_json candidates_json(const std::vector<CandidateRecord>& rows) {
  ordered_json out = ordered_json::array();
  for (const CandidateRecord& r : rows) {
    ordered_json j;
    j["name"] = r.name;
    if (!r.skipped.empty()) {
      j["skipped"] = r.skipped;
    } else {
      j["phases"] = r.phases;
      j["max_message"] = r.max_message;
      j["estimate_s"] = r.estimate_s;
      if (!r.simulated) j["simulated"] = false;
      if (r.loose_s) j["loose_s"] = *r.loose_s;
    }
    out.push_back(std::move(j));
  }
  return out;
}

ordered_json contract_json(const PlanContract& c, const ordered_json& provenance) {
  ordered_json j = ordered_json::object();
  if (!c.chosen.empty()) j["chosen"] = c.chosen;
  if (c.contention == Contention::bounded) j["concurrency"] = c.per_port;
  for (const auto& [key, value] : provenance.items())
    if (!is_contract_key(key)) j[key] = value;
  if (!c.machine.empty()) j["machine"] = c.machine;
  j["tau_s"] = c.tau_s;
  j["bandwidth_Bps"] = c.bandwidth_Bps;
  j["contention"] = to_string(c.contention);
  if (!c.topology.empty()) j["topology"] = c.topology;
  j["timing"] = c.timing == Timing::async ? "async" : "synchronous";
  if (c.memory) j["memory"] = *c.memory;
  const NetworkOptions& n = c.network;
  j["network"] = to_string(n.model);
  j["overhead_s"] = n.overhead_s;
  j["eager_limit"] = n.eager_limit;
  if (n.model == Network::ib) j["ib_factors"] = format_ib_factors(n.ib);
  if (n.link_latency_s >= 0) j["link_latency_s"] = n.link_latency_s;
  if (n.window_bytes > 0) j["window_bytes"] = n.window_bytes;
  if (n.rtt_weight_bytes >= 0) j["rtt_weight_bytes"] = n.rtt_weight_bytes;
  if (c.intra) {
    j["intra_latency_s"] = n.intra_latency_s;
    j["intra_bandwidth_Bps"] = n.intra_bandwidth_Bps;
  }
  if (n.cores_per_node > 0) j["cores_per_node"] = n.cores_per_node;
  if (n.rendezvous_s > 0) j["rendezvous_s"] = n.rendezvous_s;
  if (!c.simulated) j["estimate"] = kAnalytic;
  if (!c.chosen.empty() || !c.candidates.empty()) j["candidates"] = candidates_json(c.candidates);
  return j;
}

PlanContract read_contract(const ordered_json& options, const std::string& file, ordered_json& provenance) {
  JsonFields r(options, file, "/options");
  PlanContract c;
  provenance = ordered_json::object();
  for (const auto& [key, value] : options.items())
    if (!is_contract_key(key)) provenance[key] = value;

  c.chosen = r.maybe_string("chosen").value_or("");
  if (const ordered_json* rows = r.maybe("candidates")) c.candidates = read_candidates(*rows, file);

  const std::string contention = r.maybe_string("contention").value_or("node");
  const auto rule = parse_contention(contention);
  if (!rule) r.fail("contention", "unknown contention rule \"" + contention + "\"");
  c.contention = *rule;
  if (c.contention == Contention::bounded) {
    const ordered_json* k = r.maybe("concurrency");
    if (!k || !json_natural(*k) || k->get<std::uint64_t>() < 1 || k->get<std::uint64_t>() > 1u << 30)
      r.fail("concurrency", "the bounded rule needs a positive \"concurrency\"");
    c.per_port = static_cast<int>(k->get<std::uint64_t>());
  }
  if (const ordered_json* mem = r.maybe("memory")) {
    if (!mem->is_array()) r.fail("memory", "expected one free-byte count per rank");
    std::vector<Bytes> free;
    free.reserve(mem->size());
    for (const ordered_json& v : *mem) {
      if (!json_natural(v)) r.fail("memory", "expected non-negative integers");
      free.push_back(v.get<Bytes>());
    }
    c.memory = std::move(free);
  }
  if (const ordered_json* t = r.maybe("topology")) {
    if (!t->is_string()) r.fail("topology", "expected a topology spec");
    c.topology = t->get<std::string>();
  }
  if (const auto timing = r.maybe_string("timing")) {
    if (*timing != "async" && *timing != "synchronous") r.fail("timing", "expected \"async\" or \"synchronous\", got \"" + *timing + "\"");
    c.timing = *timing == "async" ? Timing::async : Timing::synchronous;
  }

  c.machine = r.maybe_string("machine").value_or("");
  c.tau_s = r.maybe_number("tau_s", 0).value_or(0);
  c.bandwidth_Bps = r.maybe_number("bandwidth_Bps", 0).value_or(0);
  NetworkOptions& n = c.network;
  if (const auto model = r.maybe_string("network")) {
    const auto m = parse_network(*model);
    if (!m) r.fail("network", "unknown network model \"" + *model + "\" (flow or ib)");
    n.model = *m;
  }
  n.overhead_s = r.maybe_number("overhead_s", -std::numeric_limits<double>::max()).value_or(n.overhead_s);   // < 0: tau / 4
  n.eager_limit = r.maybe_uint("eager_limit").value_or(n.eager_limit);
  if (const auto f = r.maybe_string("ib_factors")) {
    const auto ib = parse_ib_factors(*f);
    if (!ib) r.fail("ib_factors", "expected three positive numbers Be;Bs;ys, got \"" + *f + "\"");
    n.ib = *ib;
  }
  n.link_latency_s = r.maybe_number("link_latency_s", 0).value_or(n.link_latency_s);
  n.window_bytes = r.maybe_number("window_bytes", 0).value_or(n.window_bytes);
  n.rtt_weight_bytes = r.maybe_number("rtt_weight_bytes", 0).value_or(n.rtt_weight_bytes);
  const auto intra_latency = r.maybe_number("intra_latency_s", 0), intra_bandwidth = r.maybe_number("intra_bandwidth_Bps", 0);
  c.intra = intra_latency || intra_bandwidth;
  n.intra_latency_s = intra_latency.value_or(n.intra_latency_s);
  n.intra_bandwidth_Bps = intra_bandwidth.value_or(n.intra_bandwidth_Bps);
  n.rendezvous_s = r.maybe_number("rendezvous_s", 0).value_or(n.rendezvous_s);
  if (const auto cores = r.maybe_uint("cores_per_node")) {
    if (*cores < 1 || *cores > kMaxCoresPerNode) r.fail("cores_per_node", "expected a whole number of cores from 1 to 2^20");
    n.cores_per_node = static_cast<std::uint32_t>(*cores);
  }
  c.simulated = !r.maybe("estimate");
  return c;
}

}  // namespace commfit
