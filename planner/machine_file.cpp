#include "planner/machine_file.h"

#include "ir/error.h"
#include "ir/human_units.h"
#include "ir/json_fields.h"
#include "ir/matrix_io.h"
#include "ir/network_sim.h"

#include <algorithm>
#include <cstdio>

namespace commfit {

namespace {

constexpr std::size_t kMaxMachineFileBytes = std::size_t{16} << 20;

// "12 GB/s": a rate as people read it (decimal units, as network rates are quoted).
std::string human_rate(double bytes_per_second) {
  char buf[48];
  if (bytes_per_second >= 1e9) std::snprintf(buf, sizeof buf, "%.3g GB/s", bytes_per_second / 1e9);
  else if (bytes_per_second >= 1e6) std::snprintf(buf, sizeof buf, "%.3g MB/s", bytes_per_second / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3g B/s", bytes_per_second);
  return buf;
}

bool given(std::span<const std::string> keys, const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); }

}  // namespace

MachineFile read_machine_file(const std::string& path) { return parse_machine_file(read_text_file(path, kMaxMachineFileBytes), path); }

MachineFile parse_machine_file(std::string_view text, const std::string& path) {
  const nlohmann::ordered_json doc = parse_strict_json(text, path);
  JsonFields f(doc, path, "");
  f.expect("format", "commfit-machine");
  f.version();
  MachineFile m;
  m.path = path;
  m.name = f.maybe_string("name").value_or("");
  if (m.name.size() > 256) f.fail("name", "longer than 256 characters");
  // Times and sizes >= 0; rates > 0.
  auto positive = [&](const char* key) -> std::optional<double> {
    const std::optional<double> v = f.maybe_number(key, 0);
    if (v && !(*v > 0)) f.fail(key, "expected a number above 0, got 0");
    return v;
  };
  m.tau_s = positive("tau_s");
  m.bandwidth_Bps = positive("bandwidth_Bps");
  if (const auto model = f.maybe_string("network")) {
    m.network = parse_network(*model);
    if (!m.network) f.fail("network", "unknown network model \"" + *model + "\" (flow or ib)");
  }
  m.overhead_s = f.maybe_number("overhead_s", 0);
  if (m.overhead_s && m.tau_s && *m.overhead_s > *m.tau_s / 2)
    f.fail("overhead_s", "an overhead of " + human_seconds(*m.overhead_s) + " is above half of tau_s (" + human_seconds(*m.tau_s) +
                             "): tau is the latency plus both ends' overheads");
  m.eager_limit = f.maybe_uint("eager_limit");
  m.rendezvous_s = f.maybe_number("rendezvous_s", 0);
  if (const auto factors = f.maybe_string("ib_factors")) {
    m.ib_factors = parse_ib_factors(*factors);
    if (!m.ib_factors) f.fail("ib_factors", "expected three positive numbers Be;Bs;ys, got \"" + *factors + "\"");
    if (m.network && *m.network != Network::ib) f.fail("ib_factors", "applies to \"network\": \"ib\" only");
  }
  m.link_latency_s = f.maybe_number("link_latency_s", 0);
  m.window_bytes = f.maybe_number("window_bytes", 0);
  m.rtt_weight_bytes = f.maybe_number("rtt_weight_bytes", 0);
  m.intra_latency_s = f.maybe_number("intra_latency_s", 0);
  m.intra_bandwidth_Bps = positive("intra_bandwidth_Bps");
  if (const auto cores = f.maybe_uint("cores_per_node")) {
    if (*cores < 1 || *cores > kMaxCoresPerNode) f.fail("cores_per_node", "expected a whole number of cores from 1 to 2^20, got " + std::to_string(*cores));
    m.cores_per_node = static_cast<std::uint32_t>(*cores);
  }
  // How the figures were found (commfit-calibrate's measurements and fit): kept in the file for
  // people, not read.
  if (const auto* c = f.maybe("calibration"); c && !c->is_object()) f.fail("calibration", "expected an object");
  f.no_others();
  return m;
}

void apply_machine_file(const MachineFile& m, PlanOptions& o, std::span<const std::string> keys) {
  NetworkOptions& net = o.cost.network;
  auto set = [&](const char* key, const auto& value, auto& field) {
    if (value && !given(keys, key)) field = *value;
  };
  set("tau", m.tau_s, o.cost.tau_s);
  set("bandwidth", m.bandwidth_Bps, o.cost.bandwidth_Bps);
  set("network", m.network, net.model);
  set("ib-factors", m.ib_factors, net.ib);
  set("overhead", m.overhead_s, net.overhead_s);
  set("eager-limit", m.eager_limit, net.eager_limit);
  set("rendezvous", m.rendezvous_s, net.rendezvous_s);
  set("link-latency", m.link_latency_s, net.link_latency_s);
  set("window", m.window_bytes, net.window_bytes);
  set("rtt-weight", m.rtt_weight_bytes, net.rtt_weight_bytes);
  set("intra-latency", m.intra_latency_s, net.intra_latency_s);
  set("intra-bandwidth", m.intra_bandwidth_Bps, net.intra_bandwidth_Bps);
  set("cores-per-node", m.cores_per_node, net.cores_per_node);
  o.machine = m.name.empty() ? m.path : m.path + " (" + m.name + ")";
}

std::string machine_line(const PlanOptions& o) {
  const NetworkOptions& net = o.cost.network;
  std::string line = o.machine.empty() ? "machine: defaults" : "machine " + o.machine;
  line += std::string(": network ") + to_string(net.model) + ", tau " + human_seconds(o.cost.tau_s) + ", bandwidth " +
          human_rate(o.cost.bandwidth_Bps) + ", overhead " + human_seconds(sim_overhead_s(o.cost.tau_s, net)) + ", eager limit " +
          human_bytes(static_cast<double>(net.eager_limit));
  if (net.rendezvous_s > 0) line += " (then a rendezvous of " + human_seconds(net.rendezvous_s) + ")";
  if (net.model == Network::ib) line += ", IB factors " + format_ib_factors(net.ib);
  if (o.topology.ranks_per_node() > 1)
    line += ", intra-node " + human_seconds(net.intra_latency_s) + " at " +
            human_rate(net.intra_bandwidth_Bps > 0 ? net.intra_bandwidth_Bps : o.cost.bandwidth_Bps);
  if (o.topology.ranks_per_node() > 1 && net.cores_per_node > 0 && static_cast<std::uint32_t>(o.topology.ranks_per_node()) > net.cores_per_node)
    line += ", " + std::to_string(o.topology.ranks_per_node()) + " ranks on " + std::to_string(net.cores_per_node) + " cores a node";
  return line;
}

}  // namespace commfit
