#include "planner/plan_option.h"

#include "ir/error.h"
#include "planner/strategy_table.h"
#include "planner/units.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <exception>
#include <sstream>

namespace commfit {

namespace {

// The readers of one value: each returns "" or why it refuses it ("expected WHAT").
std::string whole(const std::string& value, std::uint64_t& field) {
  std::size_t used = 0;
  try {
    const unsigned long long v = std::stoull(value, &used);
    if (used == value.size() && !value.empty() && value[0] != '-') {
      field = v;
      return "";
    }
  } catch (const std::exception&) {
  }
  return "expected a whole number";
}

std::string whole(const std::string& value, unsigned& field) {
  std::uint64_t v = 0;
  if (!whole(value, v).empty() || v > 0xffffffffu) return "expected a whole number below 2^32";
  field = static_cast<unsigned>(v);
  return "";
}

std::string quantity(const std::string& value, Quantity kind, double& field, const char* what) {
  const std::optional<double> q = parse_quantity(value, kind);
  if (!q || !(*q >= 0) || !std::isfinite(*q)) return std::string("expected ") + what;
  field = *q;
  return "";
}

// A whole number of bytes, with or without a unit (1.5KiB is refused: 1536 is what to write).
std::string whole_bytes(const std::string& value, Bytes& field, const char* what) {
  double q = 0;
  if (!quantity(value, Quantity::bytes, q, what).empty() || q >= 0x1p64 || q != std::floor(q)) return std::string("expected ") + what;
  field = static_cast<Bytes>(q);
  return "";
}

template <class T>
std::string as_text(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

constexpr const char* kTime = "a time (2us, 500ns, or seconds)";

// Every planning option. Each entry's set is the one reader of its value; a value a strategy does
// not offer (--concurrency 3) is refused later, with the strategy (check_choices).
const PlanOptionEntry kOptions[] = {
    {"strategy", "NAME", "Strategy", std::nullopt,
     [](PlanOptions& o, const std::string& v) { return o.strategy = v, std::string(); },
     [](const PlanOptions& o) { return o.strategy; }},
    {"algorithm", "NAME", "Decomposition", StrategyOption::algorithm,
     [](PlanOptions& o, const std::string& v) { return o.algorithm = v, std::string(); },
     [](const PlanOptions& o) { return o.algorithm; }},
    {"variant", "NAME", "Split", StrategyOption::variant,
     [](PlanOptions& o, const std::string& v) { return o.variant = v, std::string(); },
     [](const PlanOptions& o) { return o.variant; }},
    {"method", "NAME", "Memory method", StrategyOption::method,
     [](PlanOptions& o, const std::string& v) { return o.method = v, std::string(); },
     [](const PlanOptions& o) { return o.method; }},
    {"concurrency", "N", "bounded: messages per port per phase", StrategyOption::concurrency,
     [](PlanOptions& o, const std::string& v) { return whole(v, o.concurrency); },
     [](const PlanOptions& o) { return std::to_string(o.concurrency); }},
    {"max-outstanding", "N", "throttled: requests in flight per rank", StrategyOption::max_outstanding,
     [](PlanOptions& o, const std::string& v) { return whole(v, o.max_outstanding); },
     [](const PlanOptions& o) { return std::to_string(o.max_outstanding); }},
    {"steps", "N", "node: hops between nodes", StrategyOption::steps,
     [](PlanOptions& o, const std::string& v) { return whole(v, o.steps); },
     [](const PlanOptions& o) { return std::to_string(o.steps); }},
    {"chunk", "BYTES", "direct/quantised: piece size in bytes (0: chosen by the cost model)", StrategyOption::chunk,
     [](PlanOptions& o, const std::string& v) { return whole_bytes(v, o.chunk, "a whole number of bytes (or with a unit: 64KiB)"); },
     [](const PlanOptions& o) { return std::to_string(o.chunk); }},
    {"topology", "SPEC",
     "Machine: full, hypercube:D, mesh:AxB, torus:AxBxC, fattree:L;down;up;parallel, dragonfly:G,b;C,k;B,g;N, each +nodeN or +map:LIST",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       try {
         o.topology = Topology::parse(v);
       } catch (const UsageError& e) {
         // Its messages name the spec ("topology \"torus:0\": ..."); the caller names it too.
         const std::string what = e.what(), named = "topology \"" + v + "\": ";
         return what.starts_with(named) ? what.substr(named.size()) : what;
       }
       return std::string();
     },
     [](const PlanOptions& o) { return o.topology.spec(); }},
    {"seed", "N", "Seed of every random choice", std::nullopt,
     [](PlanOptions& o, const std::string& v) { return whole(v, o.seed); },
     [](const PlanOptions& o) { return std::to_string(o.seed); }},
    {"tau", "SECONDS", "Per-message start-up time, seconds (or with a unit: 2us, 500ns)", std::nullopt,
     [](PlanOptions& o, const std::string& v) { return quantity(v, Quantity::seconds, o.cost.tau_s, kTime); },
     [](const PlanOptions& o) { return as_text(o.cost.tau_s); }},
    {"bandwidth", "RATE", "Link bandwidth, bytes per second (or with a unit: 12.5GB/s, 100Gbps)", std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       return quantity(v, Quantity::rate, o.cost.bandwidth_Bps, "a rate (12.5GB/s, 100Gbps, or bytes per second)");
     },
     [](const PlanOptions& o) { return as_text(o.cost.bandwidth_Bps); }},
    {"network", "MODEL",
     "Network model plans are priced on: flow (max-min sharing of ports and links) or ib (plus SimGrid's InfiniBand penalties "
     "for a node's concurrent flows)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       const std::optional<Network> n = parse_network(v);
       if (!n) return std::string("expected flow or ib");
       o.cost.network.model = *n;
       return std::string();
     },
     [](const PlanOptions& o) { return std::string(to_string(o.cost.network.model)); }},
    {"ib-factors", "Be,Bs,ys", "--network ib: penalty factors Be,Bs,ys (SimGrid's smpi/IB-penalty-factors; default 0.965,0.925,1.35)", std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       const std::optional<IbFactors> f = parse_ib_factors(v);
       if (!f) return std::string("expected three positive numbers Be,Bs,ys (e.g. 0.965,0.925,1.35)");
       o.cost.network.ib = *f;
       return std::string();
     },
     nullptr},
    {"overhead", "SECONDS", "CPU seconds per message at each end (default: tau / 4; tau = latency + 2 overhead)", std::nullopt,
     [](PlanOptions& o, const std::string& v) { return quantity(v, Quantity::seconds, o.cost.network.overhead_s, "a time (500ns, or seconds)"); },
     nullptr},
    {"eager-limit", "BYTES", "Messages below BYTES are sent eagerly, larger ones by rendezvous", std::nullopt,
     [](PlanOptions& o, const std::string& v) { return whole_bytes(v, o.cost.network.eager_limit, "a whole number of bytes (or with a unit: 64KiB)"); },
     [](const PlanOptions& o) { return std::to_string(o.cost.network.eager_limit); }},
    {"rendezvous", "SECONDS",
     "A message of --eager-limit bytes or more waits SECONDS more before its bytes move: the rendezvous handshake of a real "
     "MPI library (default 0, as under SimGrid)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) { return quantity(v, Quantity::seconds, o.cost.network.rendezvous_s, "a time (3us, or seconds)"); },
     nullptr},
    {"link-latency", "SECONDS", "With --topology: seconds per link of a route (default: every route costs tau - 2 overhead)", std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       return quantity(v, Quantity::seconds, o.cost.network.link_latency_s, "a time per link (100ns, or seconds)");
     },
     nullptr},
    {"window", "BYTES", "A flow's rate is at most BYTES / (2 x its route's latency), SimGrid's TCP-gamma (default: no bound)", std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       return quantity(v, Quantity::bytes, o.cost.network.window_bytes, "a size in bytes (or with a unit: 4MiB)");
     },
     nullptr},
    {"rtt-weight", "BYTES",
     "With --topology: flows share a link in proportion to 1 / (route latency + BYTES x sum of 1 / link bandwidth), SimGrid's "
     "network/weight-S (8775 under smpirun; default: equal shares)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       return quantity(v, Quantity::bytes, o.cost.network.rtt_weight_bytes, "a size in bytes (8775 under smpirun)");
     },
     nullptr},
    {"intra-latency", "SECONDS",
     "With +nodeN: a message between two ranks of one node waits SECONDS besides both overheads (default 0: shared memory's "
     "0.49 us is below them)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) { return quantity(v, Quantity::seconds, o.cost.network.intra_latency_s, "a time (200ns, or seconds)"); },
     nullptr},
    {"intra-bandwidth", "RATE",
     "With +nodeN: the rate of a message between two ranks of one node, unshared (default 7.04 GB/s: Open MPI's shared memory, "
     "bench/bench_pingpong)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       double rate = 0;
       if (!quantity(v, Quantity::rate, rate, "").empty() || !(rate > 0)) return std::string("expected a rate above 0 (7GB/s, or bytes per second)");
       o.cost.network.intra_bandwidth_Bps = rate;
       return std::string();
     },
     nullptr},
    {"cores-per-node", "N",
     "With +nodeN: the cores a node's ranks run on; a node holding more ranks shares N x the intra-node rate among the messages "
     "inside it (default 0: not known, nothing shared)",
     std::nullopt,
     [](PlanOptions& o, const std::string& v) {
       unsigned n = 0;
       if (!whole(v, n).empty() || n > kMaxCoresPerNode) return std::string("expected a whole number of cores up to 2^20");
       o.cost.network.cores_per_node = n;
       return std::string();
     },
     nullptr},
};

}  // namespace

std::span<const PlanOptionEntry> plan_option_table() { return kOptions; }

const PlanOptionEntry* find_plan_option(std::string_view key) {
  for (const PlanOptionEntry& e : kOptions)
    if (key == e.key) return &e;
  return nullptr;
}

std::vector<std::string> plan_option_keys() {
  std::vector<std::string> keys;
  for (const PlanOptionEntry& e : kOptions) keys.emplace_back(e.key);
  return keys;
}

bool set_plan_option(PlanOptions& o, const std::string& key, const std::string& value) {
  const PlanOptionEntry* e = find_plan_option(key);
  if (!e) return false;
  if (const std::string why = e->set(o, value); !why.empty()) throw UsageError(key + "=" + value + ": " + why);
  return true;
}

std::vector<std::pair<std::string, CLI::Option*>> add_plan_options(CLI::App* sub, PlanOptions& o, std::span<const char* const> keys) {
  std::vector<std::pair<std::string, CLI::Option*>> added;
  for (const char* key : keys) {
    const PlanOptionEntry* e = find_plan_option(key);
    if (!e) internal_error("plan options", std::string("no planning option \"") + key + "\"");
    std::string help = e->help;
    if (std::string_view(e->key) == "strategy") help += ": " + strategy_names();
    if (e->strategy_option) {
      const std::string choices = option_choices_text(*e->strategy_option);
      if (!choices.empty()) help += " (" + choices + ")";
    }
    const std::string flag = std::string("--") + e->key;
    CLI::Option* option = sub->add_option_function<std::string>(
        flag,
        [&o, e, flag](const std::string& value) {
          if (const std::string why = e->set(o, value); !why.empty()) throw CLI::ValidationError(flag + " " + value, why);
        },
        help);
    option->type_name(e->value);
    if (e->text) option->default_str(e->text(o));
    added.emplace_back(e->key, option);
  }
  return added;
}

void check_plan_option_keys(const PlanOptions& o, std::span<const std::string> keys) {
  std::vector<StrategyOption> given;
  for (const std::string& key : keys) {
    if (key == "memory") given.push_back(StrategyOption::memory);
    else if (const PlanOptionEntry* e = find_plan_option(key); e && e->strategy_option) given.push_back(*e->strategy_option);
  }
  check_given_options(o.strategy, given);
  check_plan_options(o);
}

std::uint64_t option_whole(const std::string& key, const std::string& value, const char* what) {
  std::uint64_t v = 0;
  if (!whole(value, v).empty()) throw UsageError(key + "=" + value + ": expected " + what);
  return v;
}

double option_quantity(const std::string& key, const std::string& value, Quantity kind, const char* what) {
  double q = 0;
  if (!quantity(value, kind, q, what).empty()) throw UsageError(key + "=" + value + ": expected " + what);
  return q;
}

}  // namespace commfit
