#include "planner/pipeline.h"

#include "ir/error.h"
#include "planner/candidates.h"
#include "planner/near_miss.h"
#include "planner/pass_runner.h"
#include "planner/strategy_table.h"

#include <cmath>
#include <cstdlib>

namespace commfit {

namespace {

// --strategy auto: plan every candidate, keep the cheapest. Planning times are left out of the
// manifest so that plans stay byte-identical.
Plan make_auto_plan(const CommMatrix& m, const PlanOptions& o, PlanReport* report) {
  Comparison c = compare_candidates(m, o, true);
  if (!c.plan) throw UsageError("no strategy applies to this matrix:\n" + format_comparison(c));
  Plan plan = std::move(*c.plan);
  const CandidateRow& chosen = c.rows[*c.chosen];
  plan.manifest.contract.chosen = chosen.name;
  plan.manifest.contract.candidates = candidate_records(c);
  plan.manifest.strategy = "auto";
  if (report) {
    const TrafficStats stats = traffic_stats(m);
    report->h = stats.h;
    report->t = stats.t;
    report->comparison = format_comparison(c);
    report->log = std::move(c.log);   // --time-passes: every candidate's passes
    report->bound_term = exchange_bound(m, o.cost, o.topology).binding(plan_relays(plan, m));
  }
  return plan;
}

}  // namespace

bool verify_each_by_default() {
#ifndef NDEBUG
  return true;
#else
  const char* env = std::getenv("COMMFIT_VERIFY_EACH");
  return env && *env && std::string(env) != "0";
#endif
}

void check_plan_options(const PlanOptions& o) {
  const Strategy* strategy = find_strategy(o.strategy);
  if (!strategy && o.strategy != "auto") {
    std::vector<std::string> names{"auto"};
    for (const Strategy* t : strategy_table()) names.emplace_back(t->entry.name);
    throw UsageError("unknown strategy \"" + o.strategy + "\"" + did_you_mean(o.strategy, names) + " (choose from: " + strategy_names() + ")");
  }
  if (strategy) check_choices(*strategy, o);
  if (!(o.cost.tau_s >= 0) || !(o.cost.bandwidth_Bps > 0))
    throw UsageError("the cost model needs tau >= 0 and bandwidth > 0");
  if (!(o.cost.network.overhead_s < 0 || o.cost.network.overhead_s <= o.cost.tau_s / 2))
    throw UsageError("--overhead must be at most tau / 2 (tau = 2 overhead + latency)");
  if (std::isnan(o.cost.network.link_latency_s) || std::isinf(o.cost.network.link_latency_s))
    throw UsageError("--link-latency must be a finite number of seconds");
  if (!(o.cost.network.window_bytes >= 0) || std::isinf(o.cost.network.window_bytes))
    throw UsageError("--window must be a finite number of bytes >= 0");
  if (std::isnan(o.cost.network.rtt_weight_bytes) || std::isinf(o.cost.network.rtt_weight_bytes))
    throw UsageError("--rtt-weight must be a finite number of bytes");
  if (!(o.cost.network.intra_latency_s >= 0) || std::isinf(o.cost.network.intra_latency_s))
    throw UsageError("--intra-latency must be a finite number of seconds >= 0");
  if (!(o.cost.network.intra_bandwidth_Bps > 0) || std::isinf(o.cost.network.intra_bandwidth_Bps))
    throw UsageError("--intra-bandwidth must be a finite bandwidth > 0");
}

Manifest make_plan(const CommMatrix& matrix, const PlanOptions& o, PlanSink& sink, PlanReport* report) {
  check_plan_options(o);
  if (o.strategy == "auto") {
    Plan plan = make_auto_plan(matrix, o, report);
    for (RankSchedule& rs : plan.ranks) sink.rank(std::move(rs));
    sink.finish(plan.manifest);
    return plan.manifest;
  }
  const Strategy* strategy = find_strategy(o.strategy);

  // Memory limits given on the command line replace the matrix file's.
  CommMatrix with_memory;
  if (!o.memory.empty()) {
    if (o.memory.size() != static_cast<std::size_t>(matrix.ranks))
      throw UsageError("--memory gives " + std::to_string(o.memory.size()) + " limits for " + std::to_string(matrix.ranks) + " ranks");
    with_memory = matrix;
    with_memory.memory = o.memory;
  }
  const CommMatrix& m = o.memory.empty() ? matrix : with_memory;

  o.topology.check_ranks(m.ranks);
  const TrafficStats stats = traffic_stats(m);
  PassRunner passes(m, o, report);
  passes.progress = o.progress;
  passes.rules.route = [&o](Rank a, Rank b, std::vector<Link>& links) { o.topology.route(a, b, links); };

  // 1. The strategy's passes: matrix -> schedule. From here on passes.rules are the rules its
  // last schedule-producing pass guarantees (the pass table's entries).
  StrategyOutput s = strategy->run(m, o, passes);
  const Phase phases = std::max<Phase>(s.schedule.phases, s.schedule.copies.empty() ? 0 : 1);
  if (phases > kMaxPhases)   // plan readers refuse more (ir/plan.h)
    throw UsageError("the plan has " + std::to_string(phases) + " phases, more than the " + std::to_string(kMaxPhases) +
                     " plan files may hold: choose a larger --chunk or another strategy");
  // 2. Lower to per-rank steps (staging offsets) and 3. verify, rank by rank: each rank's schedule
  // goes on to the sink as it is made, the cost model gathers its traffic and the plan hash its
  // term. No plan leaves unverified: the sink sees the manifest only after the verifier passed.
  Manifest mf;
  PlanTraffic traffic(m.ranks, phases, o.topology.kind() != Topology::Kind::full);
  PlanHash hash;
  double lower_s = 0, verify_s = 0;
  if (passes.progress) passes.progress(pass_entry(Pass::lower).entry.name);
  const auto problems = lower_and_verify(s.schedule, m, passes.reading(), passes.rules, s.max_outstanding, s.send_order, mf,
                                         [&](RankSchedule& rs) {
                                           traffic.add(rs);
                                           hash.add(rs);
                                           sink.rank(std::move(rs));
                                         },
                                         lower_s, verify_s);
  passes.log(Pass::lower, lower_s);
  passes.log(Pass::verify, verify_s);
  if (!problems.empty()) internal_error("make_plan", "the final plan fails verification: " + problems.front());
  s.schedule = Schedule{};   // from here on the plan says it all: the schedule's memory goes

  mf.strategy = o.strategy;
  mf.options = std::move(s.options);
  PlanContract& c = mf.contract;
  c.contention = passes.rules.contention;
  c.per_port = passes.rules.per_port;
  if (passes.rules.memory) c.memory = m.memory;
  if (o.topology.kind() != Topology::Kind::full || o.topology.ranks_per_node() > 1) c.topology = o.topology.spec();
  c.timing = s.timing;
  c.machine = o.machine;
  c.tau_s = mf.cost.tau_s = o.cost.tau_s;
  c.bandwidth_Bps = mf.cost.bandwidth_Bps = o.cost.bandwidth_Bps;
  c.network = o.cost.network;
  c.network.overhead_s = sim_overhead_s(o.cost.tau_s, o.cost.network);
  c.intra = o.topology.ranks_per_node() > 1;
  mf.cost.estimate_s = plan_estimate_s(traffic, m, o.cost, o.topology, &c.simulated);
  const bool relay = plan_relays(traffic, m);
  const ExchangeBound bound = exchange_bound(m, o.cost, o.topology);
  mf.cost.lower_bound_s = bound.of(relay);
  mf.planner = std::string("commfit ") + COMMFIT_VERSION;
  mf.plan_hash = hash.value();
  if (report) {
    report->h = stats.h;
    report->t = stats.t;
    report->bound_term = bound.binding(relay);
  }
  sink.finish(mf);
  return mf;
}

namespace {

// Keeps the plan: make_plan's second form.
class KeepPlan : public PlanSink {
 public:
  explicit KeepPlan(Plan& plan) : plan_(plan) {}
  void rank(RankSchedule&& rs) override { plan_.ranks.push_back(std::move(rs)); }
  void finish(const Manifest& m) override { plan_.manifest = m; }

 private:
  Plan& plan_;
};

}  // namespace

Plan make_plan(const CommMatrix& m, const PlanOptions& o, PlanReport* report) {
  if (o.strategy == "auto") return make_auto_plan(m, o, report);
  Plan plan;
  plan.ranks.reserve(static_cast<std::size_t>(m.ranks));
  KeepPlan keep(plan);
  make_plan(m, o, keep, report);
  return plan;
}

}  // namespace commfit
