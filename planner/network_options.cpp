#include "planner/network_options.h"
#include "planner/machine_file.h"
#include "planner/plan_option.h"
#include "planner/units.h"

#include "ir/error.h"

#include <cmath>
#include <cstdlib>

namespace commfit {

std::shared_ptr<NetworkFlags> add_network_options(CLI::App* sub, PlanOptions& o) {
  auto flags = std::make_shared<NetworkFlags>();
  flags->app = sub;
  sub->add_option("--machine", flags->machine,
                  "Machine file (commfit-calibrate's, docs/FORMAT.md \"Machine files\"): the network model's figures where no option "
                  "gives them");
  constexpr const char* kKeys[] = {"network",      "ib-factors", "overhead",      "eager-limit",    "link-latency",
                                   "window",       "rtt-weight", "intra-latency", "intra-bandwidth"};
  add_plan_options(sub, o, kKeys);
  return flags;
}

void apply_network_flags(const NetworkFlags& flags, PlanOptions& o) {
  auto given = [&](const std::string& key) {
    const CLI::Option* option = flags.app->get_option_no_throw("--" + key);
    return option && option->count() > 0;
  };
  if (!flags.machine.empty()) {
    std::vector<std::string> keys;
    for (const std::string& key : plan_option_keys())
      if (given(key)) keys.push_back(key);
    apply_machine_file(read_machine_file(flags.machine), o, keys);
  }
  // The model as resolved (the command line's, else the machine file's) must be ib.
  if (given("ib-factors") && o.cost.network.model != Network::ib) throw UsageError("--ib-factors applies to --network ib only");
}

}  // namespace commfit
