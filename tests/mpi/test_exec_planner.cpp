// The end-to-end check of every strategy and decomposition algorithm the planner has: each rank
// plans the pattern with make_plan (deterministic, so every rank holds the same plan), the plan is
// replayed under every protocol, and also written by rank 0 as a plan directory and a binary file
// that every rank loads its own schedule from. Receive buffers must be byte-identical to
// MPI_Alltoallv on the same send buffers. The profile split's cut messages are replayed too, and
// async's plans carry their posting order (RankSchedule::send_order).
// Usage: mpirun -np N test_exec_planner [--large] [--one-per-protocol] [--only PATTERN] [--skip PATTERN]
// (--large: the 8 MiB patterns instead of the small ones, under post-all and a window with chunks,
// one call each, not through the files; --one-per-protocol: the small patterns under one option set
// per protocol, where the run is there for the plans of more ranks, not for the executor's options)
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "passes/node_aggregate.h"
#include "passes/profile_split.h"
#include "planner/strategy_table.h"
#include "planner/pipeline.h"
#include "support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

using namespace commfit;
using namespace commfit::mpitest;

namespace {

// The option sets of --one-per-protocol: post-all, handshake, and a window with chunks. --large
// keeps post-all and the window with chunks (test_exec_replay --large runs every set, handshake's
// included, on the 8 MiB patterns).
bool few_config(const Config& cfg, bool large) {
  return cfg.name == "post-all" || cfg.name == "cap2-chunks" || (!large && cfg.name == "handshake");
}

// Two calls with new data each (one on the 8 MiB patterns: reuse is checked on the small ones).
void run_one(Checker& chk, exec::Executor& ex, const Pattern& pat, const std::string& what, std::uint64_t iter,
             bool large = false) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Buffers b = make_buffers(pat.matrix, rank);
  for (std::uint64_t k = iter; k < iter + (large ? 1 : 2); ++k) {
    fill_send(b, rank, k);
    reference(b, MPI_COMM_WORLD);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    const std::string diff = compare(b, rank, k);
    chk.check(diff.empty(), what + ": " + diff);
  }
}

// The messages of this rank (sent and received) that carry several pieces under `o`: each phase's
// pieces to or from one peer: one message when they total at most the coalescing limit, else packed
// in their order into messages below it, a piece too large alone after them (docs/EXECUTOR.md
// "Coalescing"), counted from the schedule itself.
// `chunked`: the groups packed into more than one message (more pieces than one message holds).
std::uint64_t expected_coalesced(const RankSchedule& rs, const exec::Options& o, std::uint64_t& chunked) {
  const Bytes limit = std::min<Bytes>(static_cast<Bytes>(o.coalesce), o.max_message);
  if (limit == 0) return 0;
  std::map<std::tuple<Phase, int, Rank>, std::vector<Bytes>> groups;   // (phase, op, peer) -> its parts, in order
  for (const Step& s : rs.steps)
    if (s.op != Op::copy) {
      std::vector<Bytes>& g = groups[{s.phase, static_cast<int>(s.op), s.peer}];
      for (Bytes done = 0; done < s.bytes; done += o.max_message) g.push_back(std::min<Bytes>(o.max_message, s.bytes - done));   // parts of max_message
    }
  std::uint64_t packed = 0;
  for (const auto& [key, parts] : groups) {
    std::size_t in_message = 0, messages = 0;
    Bytes total = 0, all = 0;
    const std::uint64_t before = packed;
    for (const Bytes b : parts) all += b;
    const Bytes cap = all <= limit ? limit : limit - 1;   // several messages: each below the limit
    for (const Bytes b : parts) {
      if (b > cap) {   // alone, after the packed messages
        ++messages;
        continue;
      }
      if (in_message > 0 && total + b > cap) packed += in_message >= 2 ? 1 : 0, in_message = 0, total = 0, ++messages;
      total += b, ++in_message;
    }
    packed += in_message >= 2 ? 1 : 0;
    messages += in_message > 0 ? 1 : 0;
    chunked += messages >= 2 && packed > before ? 1 : 0;
  }
  return packed;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bool large = false, few_configs = false;
  std::string only, skip;
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--large") == 0) large = few_configs = true;
    else if (std::strcmp(argv[k], "--one-per-protocol") == 0) few_configs = true;
    else if (std::strcmp(argv[k], "--only") == 0 && k + 1 < argc) only = argv[++k];
    else if (std::strcmp(argv[k], "--skip") == 0 && k + 1 < argc) skip = argv[++k];
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker chk(MPI_COMM_WORLD);
  const std::filesystem::path dir = shared_scratch("commfit-exec");

  // Every strategy of the table, once per value of the option auto sweeps (direct: each
  // algorithm, two-stage: each variant, memory: each method).
  std::vector<PlanOptions> variants;
  for (const Strategy* s : strategy_table()) {
    PlanOptions o;
    o.strategy = s->entry.name;
    // Node-aware aggregation needs ranks per node: three, so that 4 and 8 ranks end in a partly
    // full node; and placements +nodeN cannot describe, as node maps: round robin over two nodes
    // (mpirun --map-by node), and each rank on a seeded random one of size / 2 nodes.
    std::vector<Topology> machines{Topology()};
    if (o.strategy == "node") {
      std::vector<Rank> robin(static_cast<std::size_t>(size)), random(static_cast<std::size_t>(size));
      Rng rng(static_cast<std::uint64_t>(size));
      for (Rank r = 0; r < size; ++r) {
        robin[static_cast<std::size_t>(r)] = r % 2;
        random[static_cast<std::size_t>(r)] = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(size / 2)));
      }
      machines = {Topology::parse("full+node3"), Topology().with_node_map(robin), Topology().with_node_map(random)};
    }
    std::vector<std::string> values = {""};
    if (s->sweep) {
      values.clear();
      for (const NamedEntry& e : sweep_choices(*s)) values.push_back(e.name);
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (s->sweep) choice(o, *s->sweep) = values[k];
      // Node: +node3 with every option value, each map with one of them.
      for (std::size_t t = 0; t < machines.size(); ++t) {
        if (t > 0 && t - 1 != k % (machines.size() - 1)) continue;
        o.topology = machines[t];
        if (s->needs_memory_limits) {
          o.memory = {1};   // marker: free memory t / 2 (tight: parking happens where feasible)
          variants.push_back(o);
          o.memory = {2};   // marker: free memory t (always feasible)
        }
        variants.push_back(o);
      }
    }
  }
  int plans = 0, node_plans = 0, map_plans = 0, ordered_plans = 0;
  std::uint64_t coalesced = 0;   // messages that carried several pieces, this rank, default options
  std::uint64_t chunked = 0;     // groups of pieces to one peer packed into several messages, any options
  for (const Pattern& pat : patterns(size, large)) {
    if ((!only.empty() && pat.name != only) || pat.name == skip) continue;
    for (const PlanOptions& po : variants) {
      PlanOptions o = po;
      std::string name = pat.name + " / " + po.strategy;
      if (po.strategy == "direct") name += "(" + po.algorithm + ")";
      if (po.strategy == "two-stage") name += "(" + po.variant + ")";
      if (po.strategy == "node") name += "(" + po.topology.spec() + ")";
      if (po.strategy == "memory") {   // every rank may hold t / 2 or t bytes on top of its data
        const TrafficStats st = traffic_stats(pat.matrix);
        o.memory.assign(std::size_t(size), std::max<Bytes>(po.memory[0] == 1 ? st.t / 2 : st.t, 1));
        name += "(" + po.method + ", memory " + std::to_string(o.memory[0]) + ")";
      }
      Plan plan;
      try {
        plan = make_plan(pat.matrix, o);
      } catch (const UsageError& e) {   // a strategy that does not apply to this pattern
        if (rank == 0) std::printf("skipped %s: %s\n", name.c_str(), e.what());
        continue;
      }
      ++plans;
      node_plans += po.strategy == "node";
      map_plans += po.strategy == "node" && !po.topology.node_map().empty() && po.topology.ranks_per_node() > 1;
      // A plan that carries its posting order (async): every rank's sends go out in it.
      ordered_plans += std::any_of(plan.ranks.begin(), plan.ranks.end(), [](const RankSchedule& r) { return !r.send_order.empty(); });
      for (const Config& cfg : configs(large ? 1000 : 1)) {
        if (few_configs && !few_config(cfg, large)) continue;
        exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, cfg.options, name);
        // The window in force: the options' when they set one, else the plan's under post-all.
        const int plan_window = static_cast<int>(plan.ranks[rank].max_outstanding);
        const int want = cfg.options.max_outstanding != exec::kPlanWindow ? cfg.options.max_outstanding
                         : cfg.options.protocol == exec::Protocol::post_all ? plan_window
                                                                             : 0;
        chk.check(ex.stats().window == want, name + " / " + cfg.name + ": window " + std::to_string(ex.stats().window) +
                                                 ", expected " + std::to_string(want));
        const std::uint64_t packed = expected_coalesced(plan.ranks[rank], cfg.options, chunked);
        chk.check(ex.stats().coalesced == packed, name + " / " + cfg.name + ": " + std::to_string(ex.stats().coalesced) +
                                                      " coalesced messages, the schedule has " + std::to_string(packed));
        if (cfg.name == "post-all") coalesced += packed;
        run_one(chk, ex, pat, name + " / " + cfg.name, 0, large);
      }
      // Through the files: a plan directory and its binary form (on the small patterns: the files
      // carry sizes as they carry any other number).
      if (large) continue;
      const std::filesystem::path pdir = dir / "p.plan", pbin = dir / "p.cfp";
      if (rank == 0) {
        write_plan_dir(plan, pdir);
        convert_plan_dir_to_binary(pdir, pbin);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      for (const std::filesystem::path& path : {pdir, pbin}) {
        exec::Executor ex = exec::Executor::load(path.string(), MPI_COMM_WORLD);
        // Default options: the plan's own request window (throttled plans), none for the others.
        chk.check(ex.stats().window == static_cast<int>(plan.ranks[rank].max_outstanding),
                  name + ": window " + std::to_string(ex.stats().window) + " in force, the plan's is " +
                      std::to_string(plan.ranks[rank].max_outstanding));
        run_one(chk, ex, pat, name + " / loaded from " + path.filename().string(), 5);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  // The profile split's cut messages (two pieces of one message in different phases). On these
  // small patterns an extra phase never pays at the default tau, so plan with tau ~ 0.
  int cut_plans = 0;
  for (const Pattern& pat : patterns(size, large)) {
    if ((!only.empty() && pat.name != only) || pat.name == skip) continue;
    ProfileSplitOptions po;
    po.cost.tau_s = 1e-12;
    const Schedule s = profile_split(pat.matrix, po);
    if (s.transfers.size() == static_cast<std::size_t>(traffic_stats(pat.matrix).messages)) continue;   // nothing cut
    ++cut_plans;
    const Plan plan = lower(s, pat.matrix);
    for (const Config& cfg : configs(large ? 1000 : 1)) {
      if (few_configs && !few_config(cfg, large)) continue;
      const std::string name = pat.name + " / profile split / " + cfg.name;
      exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, cfg.options, name);
      run_one(chk, ex, pat, name, 0, large);
    }
  }
  chk.check(large || cut_plans > 0, "no small pattern had a message cut by the profile split");
  // Node aggregation in two steps, alternating (half the node pairs gathered first): the model
  // rarely prefers it on these small patterns, so the pass's schedules directly, on nodes of 2 and
  // 3 ranks, with and without small messages riding.
  int alternating_plans = 0;
  for (const Pattern& pat : patterns(size, large)) {
    if ((!only.empty() && pat.name != only) || pat.name == skip || size < 3) continue;
    for (const auto& [per, ride] : {std::pair<Rank, Bytes>{2, 0}, std::pair<Rank, Bytes>{3, 300}}) {
      const Schedule s = node_aggregate(pat.matrix, NodeGroups::blocks(size, per), 0, NodeSteps::two, ride, true);
      ++alternating_plans;
      const Plan plan = lower(s, pat.matrix);
      for (const Config& cfg : configs(large ? 1000 : 1)) {
        if (few_configs && !few_config(cfg, large)) continue;
        const std::string name = pat.name + " / node, two steps alternating, +node" + std::to_string(per) + " / " + cfg.name;
        exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, cfg.options, name);
        run_one(chk, ex, pat, name, 0, large);
      }
    }
  }
  chk.check(alternating_plans > 0 || size < 3, "no node-aware plan alternating two steps was replayed");
  chk.check(plans > 0, "no plan was made");
  chk.check(node_plans > 0, "no node-aware plan was replayed");
  chk.check(ordered_plans > 0, "no plan carrying its posting order was replayed");
  chk.check(map_plans > 0 || size < 4, "no node-aware plan on a node map was replayed");
  std::uint64_t all_coalesced = 0, all_chunked = 0;
  MPI_Allreduce(&coalesced, &all_coalesced, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&chunked, &all_chunked, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  chk.check(all_chunked > 0, "no phase had more pieces to one peer than one packed message holds: packing in several messages was never replayed");
  chk.check(all_coalesced > 0, "no plan had a phase with several pieces to one peer: coalescing was never replayed");
  if (rank == 0) std::filesystem::remove_all(dir);
  const int status = chk.finish("test_exec_planner");
  MPI_Finalize();
  return status;
}
