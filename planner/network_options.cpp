#include "planner/network_options.h"
#include "planner/machine_file.h"
#include "planner/plan_option.h"
#include "planner/units.h"

#include "ir/error.h"

#include <cmath>
#include <cstdlib>

namespace commfit {

namespace {

// A finite number >= 0, or > 0 (CLI11's NonNegativeNumber and PositiveNumber let NaN through and
// word their refusals with the largest double written out in full).
CLI::Validator finite_at_least_zero(bool strict) {
  return CLI::Validator(
      [strict](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0') return {};   // not a number: the conversion says so
        if (std::isfinite(x) && (strict ? x > 0 : x >= 0)) return {};
        return std::string("expected a finite number ") + (strict ? "> 0" : ">= 0") + ", not " + value;
      },
      "", strict ? "positive" : "non-negative");
}
const CLI::Validator kNonNegative = finite_at_least_zero(false);
const CLI::Validator kPositive = finite_at_least_zero(true);

}  // namespace

std::shared_ptr<NetworkFlags> add_network_options(CLI::App* sub, NetworkOptions& net) {
  auto flags = std::make_shared<NetworkFlags>();
  flags->app = sub;
  sub->add_option("--machine", flags->machine,
                  "Machine file (commfit-calibrate's, docs/FORMAT.md \"Machine files\"): the network model's figures where no option "
                  "gives them");
  sub->add_option("--network", flags->network,
                  "Network model plans are priced on: flow (max-min sharing of ports and links) or ib (plus SimGrid's InfiniBand "
                  "penalties for a node's concurrent flows)")
      ->check(CLI::IsMember({"flow", "ib"}))
      ->capture_default_str();
  flags->ib_option = sub->add_option("--ib-factors", flags->ib_factors,
                                     "--network ib: penalty factors Be,Bs,ys (SimGrid's smpi/IB-penalty-factors; default 0.965,0.925,1.35)");
  sub->add_option("--overhead", net.overhead_s, "CPU seconds per message at each end (default: tau / 4; tau = latency + 2 overhead)")->transform(quantity_transform(Quantity::seconds));
  sub->add_option("--eager-limit", net.eager_limit, "Messages below BYTES are sent eagerly, larger ones by rendezvous")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--link-latency", net.link_latency_s, "With --topology: seconds per link of a route (default: every route costs tau - 2 overhead)")
      ->transform(quantity_transform(Quantity::seconds))
      ->check(kNonNegative);
  sub->add_option("--window", net.window_bytes, "A flow's rate is at most BYTES / (2 x its route's latency), SimGrid's TCP-gamma (default: no bound)")
      ->transform(quantity_transform(Quantity::bytes))
      ->check(kNonNegative);
  sub->add_option("--rtt-weight", net.rtt_weight_bytes,
                  "With --topology: flows share a link in proportion to 1 / (route latency + BYTES x sum of 1 / link bandwidth), "
                  "SimGrid's network/weight-S (8775 under smpirun; default: equal shares)")
      ->transform(quantity_transform(Quantity::bytes))
      ->check(kNonNegative);
  sub->add_option("--intra-latency", net.intra_latency_s,
                  "With +nodeN: a message between two ranks of one node waits SECONDS besides both overheads (default 0: "
                  "shared memory's 0.49 us is below them)")
      ->transform(quantity_transform(Quantity::seconds))
      ->check(kNonNegative);
  sub->add_option("--intra-bandwidth", net.intra_bandwidth_Bps,
                  "With +nodeN: the rate of a message between two ranks of one node, unshared (default 7.04 GB/s: Open MPI's "
                  "shared memory, bench/bench_pingpong)")
      ->transform(quantity_transform(Quantity::rate))
      ->check(kPositive);
  return flags;
}

void apply_network_flags(const NetworkFlags& flags, PlanOptions& o) {
  NetworkOptions& net = o.cost.network;
  net.model = *parse_network(flags.network);   // CLI11 checked the name
  const bool factors_given = flags.ib_option->count() > 0;
  if (factors_given) {
    const std::optional<IbFactors> f = parse_ib_factors(flags.ib_factors);
    if (!f) throw UsageError("--ib-factors \"" + flags.ib_factors + "\": expected three positive numbers Be,Bs,ys (e.g. 0.965,0.925,1.35)");
    net.ib = *f;
  }
  if (!flags.machine.empty()) {
    std::vector<std::string> given;
    for (const char* key : plan_option_keys())
      if (const CLI::Option* option = flags.app->get_option_no_throw(std::string("--") + key); option && option->count() > 0) given.emplace_back(key);
    apply_machine_file(read_machine_file(flags.machine), o, given);
  }
  // The model as resolved (the command line's, else the machine file's) must be ib.
  if (factors_given && net.model != Network::ib) throw UsageError("--ib-factors applies to --network ib only");
}

}  // namespace commfit
