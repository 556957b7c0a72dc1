#include "ir/plan_contract.h"

#include "ir/error.h"

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
constexpr const char* kTrailing[] = {"tau_s", "bandwidth_Bps", "contention", "topology", "timing", "memory", "network", "overhead_s",
                                     "eager_limit", "ib_factors", "link_latency_s", "window_bytes", "rtt_weight_bytes",
                                     "intra_latency_s", "intra_bandwidth_Bps", "estimate", "candidates"};

bool is_contract_key(const std::string& key) {
  for (const char* k : kLeading)
    if (key == k) return true;
  for (const char* k : kTrailing)
    if (key == k) return true;
  return false;
}

// A non-negative integer, as parsed (unsigned) or as built in memory (signed).
bool natural(const ordered_json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0); }

// The typed reads, each naming /options/KEY (or deeper) in its error.
class Reader {
 public:
  Reader(const ordered_json& obj, const std::string& file, std::string place) : obj_(obj), file_(file), place_(std::move(place)) {}
  const ordered_json* find(const char* key) const {
    const auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  std::string at(const char* key) const { return place_ + "/" + key; }
  [[noreturn]] void fail(const char* key, const std::string& problem) const { throw InputError(file_, at(key), problem); }

  std::optional<std::string> string(const char* key) const {
    const ordered_json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
    return v->get<std::string>();
  }
  // A finite number >= `min`.
  std::optional<double> number(const char* key, double min) const {
    const ordered_json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || !(v->get<double>() >= min))
      fail(key, std::string(min == 0 ? "expected a non-negative number" : "expected a number") + ", got " + v->dump());
    return v->get<double>();
  }
  std::optional<std::uint64_t> uint(const char* key) const {
    const ordered_json* v = find(key);
    if (!v) return std::nullopt;
    if (!natural(*v))
      fail(key, "expected a non-negative integer, got " + v->dump());
    return v->get<std::uint64_t>();
  }

 private:
  const ordered_json& obj_;
  const std::string& file_;
  std::string place_;
};

std::vector<CandidateRecord> read_candidates(const ordered_json& rows, const std::string& file) {
  if (!rows.is_array()) throw InputError(file, "/options/candidates", "expected an array of candidate rows");
  if (rows.size() > 1000) throw InputError(file, "/options/candidates", "more than 1000 candidate rows");
  std::vector<CandidateRecord> out;
  std::size_t k = 0;
  for (const ordered_json& row : rows) {
    const std::string at = "/options/candidates/" + std::to_string(k++);
    if (!row.is_object()) throw InputError(file, at, "expected an object");
    const Reader r(row, file, at);
    CandidateRecord c;
    const auto name = r.string("name");
    if (!name) r.fail("name", "expected a string");
    c.name = *name;
    if (const auto skipped = r.string("skipped")) {
      c.skipped = *skipped;
    } else {
      const auto phases = r.find("phases"), max_message = r.find("max_message"), estimate = r.find("estimate_s");
      if (!phases || !natural(*phases) || phases->get<std::uint64_t>() > 0xffffffffu) r.fail("phases", "expected a phase count");
      if (!max_message || !natural(*max_message)) r.fail("max_message", "expected a byte count");
      if (!estimate || !estimate->is_number() || !(estimate->get<double>() >= 0))
        r.fail("estimate_s", "expected a non-negative number of seconds");
      c.phases = phases->get<Phase>();
      c.max_message = max_message->get<Bytes>();
      c.estimate_s = estimate->get<double>();
      if (const ordered_json* s = r.find("simulated")) {
        if (!s->is_boolean()) r.fail("simulated", "expected true or false");
        c.simulated = s->get<bool>();
      }
      c.loose_s = r.number("loose_s", 0);
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
  if (!c.simulated) j["estimate"] = kAnalytic;
  if (!c.chosen.empty() || !c.candidates.empty()) j["candidates"] = candidates_json(c.candidates);
  return j;
}

PlanContract read_contract(const ordered_json& options, const std::string& file, ordered_json& provenance) {
  if (!options.is_object()) throw InputError(file, "/options", "expected an object");
  const Reader r(options, file, "/options");
  PlanContract c;
  provenance = ordered_json::object();
  for (const auto& [key, value] : options.items())
    if (!is_contract_key(key)) provenance[key] = value;

  c.chosen = r.string("chosen").value_or("");
  if (const ordered_json* rows = r.find("candidates")) c.candidates = read_candidates(*rows, file);

  const std::string contention = r.string("contention").value_or("node");
  const auto rule = parse_contention(contention);
  if (!rule) r.fail("contention", "unknown contention rule \"" + contention + "\"");
  c.contention = *rule;
  if (c.contention == Contention::bounded) {
    const ordered_json* k = r.find("concurrency");
    if (!k || !natural(*k) || k->get<std::uint64_t>() < 1 || k->get<std::uint64_t>() > 1u << 30)
      r.fail("concurrency", "the bounded rule needs a positive \"concurrency\"");
    c.per_port = static_cast<int>(k->get<std::uint64_t>());
  }
  if (const ordered_json* mem = r.find("memory")) {
    if (!mem->is_array()) r.fail("memory", "expected one free-byte count per rank");
    std::vector<Bytes> free;
    free.reserve(mem->size());
    for (const ordered_json& v : *mem) {
      if (!natural(v)) r.fail("memory", "expected non-negative integers");
      free.push_back(v.get<Bytes>());
    }
    c.memory = std::move(free);
  }
  if (const ordered_json* t = r.find("topology")) {
    if (!t->is_string()) r.fail("topology", "expected a topology spec");
    c.topology = t->get<std::string>();
  }
  if (const auto timing = r.string("timing")) {
    if (*timing != "async" && *timing != "synchronous") r.fail("timing", "expected \"async\" or \"synchronous\", got \"" + *timing + "\"");
    c.timing = *timing == "async" ? Timing::async : Timing::synchronous;
  }

  c.tau_s = r.number("tau_s", 0).value_or(0);
  c.bandwidth_Bps = r.number("bandwidth_Bps", 0).value_or(0);
  NetworkOptions& n = c.network;
  if (const auto model = r.string("network")) {
    const auto m = parse_network(*model);
    if (!m) r.fail("network", "unknown network model \"" + *model + "\" (flow or ib)");
    n.model = *m;
  }
  n.overhead_s = r.number("overhead_s", -std::numeric_limits<double>::max()).value_or(n.overhead_s);   // < 0: tau / 4
  n.eager_limit = r.uint("eager_limit").value_or(n.eager_limit);
  if (const auto f = r.string("ib_factors")) {
    const auto ib = parse_ib_factors(*f);
    if (!ib) r.fail("ib_factors", "expected three positive numbers Be;Bs;ys, got \"" + *f + "\"");
    n.ib = *ib;
  }
  n.link_latency_s = r.number("link_latency_s", 0).value_or(n.link_latency_s);
  n.window_bytes = r.number("window_bytes", 0).value_or(n.window_bytes);
  n.rtt_weight_bytes = r.number("rtt_weight_bytes", 0).value_or(n.rtt_weight_bytes);
  const auto intra_latency = r.number("intra_latency_s", 0), intra_bandwidth = r.number("intra_bandwidth_Bps", 0);
  c.intra = intra_latency || intra_bandwidth;
  n.intra_latency_s = intra_latency.value_or(n.intra_latency_s);
  n.intra_bandwidth_Bps = intra_bandwidth.value_or(n.intra_bandwidth_Bps);
  c.simulated = !r.find("estimate");
  return c;
}

}  // namespace commfit
