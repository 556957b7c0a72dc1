// Strategy "direct" (Ranka-Wang §4-6): every message goes whole from src to dst, decomposed into
// phases by --algorithm; on a topology with shared links the phases are made link-disjoint.
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "passes/decompose_rs_nlp.h"
#include "passes/heap_split.h"
#include "passes/link_check.h"
#include "passes/quantised_split.h"
#include "planner/chunk_search.h"
#include "planner/strategy_table.h"

#include <algorithm>

namespace commfit {
namespace {

constexpr NamedEntry kAlgorithms[] = {
    {"optimal", "König's theorem", "exact bipartite edge colouring: exactly h phases"},
    {"rs_n", "Ranka-Wang §4.2 Fig. 3", "random scheduling avoiding node contention"},
    {"rs_np", "Ranka-Wang §5, §7.1", "RS_N with Locate_Pair: pairwise exchanges in one phase"},
    {"rs_nl", "Ranka-Wang §5, §7.1", "RS_N with Check_Path/Mark_Path: link-disjoint phases"},
    {"rs_nlp", "Ranka-Wang §5 Fig. 4", "RS_N with link checking and pairwise exchanges"},
    {"rs_nlph", "Ranka-Wang §6", "RS_NLP with heap-based splitting, lambda swept by the cost model"},
    {"rs_nlh", "Ranka-Wang §6, §7.2", "RS_NLPH without pairwise exchanges"},
    {"lp", "Ranka-Wang §4.1 Fig. 2", "linear permutation: phase k pairs i with i XOR k (or i +- k mod p)"},
    {"quantised", "beyond Ranka-Wang §6", "pieces of at most q bytes or profile-split messages, shaved; q and colouring by the cost model"},
};

// Link check (Ranka-Wang §5) as a repair of a node-contention-free schedule: conflicting
// transfers move to other phases; the manifest records the phases it added.
Schedule repair_links(const Schedule& s, const PlanOptions& o, PassRunner& passes, StrategyOutput& out) {
  LinkCheckReport report;
  Schedule fixed = passes.run(Pass::link_check, [&] { return link_check(s, o.topology, &report); });
  out.options["link_check_added_phases"] = static_cast<std::int64_t>(report.phases_out) - static_cast<std::int64_t>(report.phases_in);
  out.options["link_phase_lower_bound"] = report.phase_lower_bound;
  return fixed;
}

// On a machine with shared links every phase must also be link-disjoint (Ranka-Wang §5): the
// verifier's link rule includes the node rule.
StrategyOutput run_direct(const CommMatrix& m, const PlanOptions& o, PassRunner& passes) {
  const bool links = o.topology.link_count() > 0;
  StrategyOutput out;
  out.options["algorithm"] = o.algorithm;
  out.options["seed"] = o.seed;
  const std::string& a = o.algorithm;
  // The Ranka-Wang family: RS_N with Locate_Pair (P), Check_Path/Mark_Path (L), heaps (H).
  if (a.rfind("rs_n", 0) == 0) {
    const CompressedMatrix ccom = passes.run(Pass::compress, [&] { return compress(m, o.seed); });
    if (a == "rs_nlph" || a == "rs_nlh") {
      HeapSplitOptions h;
      h.pairwise = a == "rs_nlph";
      h.link_check = true;
      h.cost = o.cost;
      h.seed = o.seed;
      HeapSplitReport report;
      out.schedule = passes.run(Pass::heap_split, [&] { return heap_split(ccom, m, o.topology, h, &report); });
      out.options["lambda"] = report.sweep[report.chosen].lambda;
      out.options["pairs_located"] = report.pairs_located;
      return out;
    }
    const RsNlpOptions r{.pairwise = a == "rs_np" || a == "rs_nlp", .link_check = a == "rs_nl" || a == "rs_nlp", .seed = o.seed};
    RsNlpReport report;
    out.schedule = passes.run(r.link_check ? Pass::decompose_links : Pass::decompose,
                              [&] { return decompose_rs_nlp(ccom, m, o.topology, r, &report); });
    if (r.pairwise) out.options["pairs_located"] = report.pairs_located;
    if (!r.link_check && links) out.schedule = repair_links(out.schedule, o, passes, out);
    return out;
  }
  if (a == "quantised") {
    Chunked chunked = o.chunk ? Chunked{o.chunk, 0, "first-fit", passes.run(Pass::quantised_split, [&] { return quantised_split(m, o.chunk); })}
                              : choose_chunk(m, o.cost, passes);
    out.schedule = std::move(chunked.schedule);
    out.options["chunk"] = chunked.q;
    out.options["colouring"] = chunked.colouring;
    out.options["colour_slack"] = chunked.slack;
  } else if (a == "lp") {
    out.schedule = passes.run(Pass::decompose, [&] { return decompose_lp(m); });
  } else {
    out.schedule = passes.run(Pass::decompose, [&] { return decompose_optimal(m); });
  }
  // From here on every phase is a partial permutation: <= 1 send and <= 1 receive per rank.
  if (links) out.schedule = repair_links(out.schedule, o, passes, out);
  // ... and with a topology, the messages of a phase share no link.
  return out;
}

// direct --algorithm quantised --chunk Q: every message cut into ceil(size / Q) pieces. With
// --chunk 0 the chunk search keeps the pieces near the message count (planner/chunk_search.h).
// The quantised split's passes hold its pieces several times over (the profile split's stages,
// the peeling's padded multigraph, the level search): it counts four pieces for each (measured
// 470 bytes a message at 10^7 messages, docs/HARDENING.md "Memory estimate").
std::uint64_t direct_pieces(const CommMatrix& m, const PlanOptions& o) {
  const std::uint64_t messages = network_messages(m);
  if (o.algorithm != "quantised") return messages;
  std::uint64_t n = 0;
  if (o.chunk > 0)
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != j) n = saturating_add(n, b / o.chunk + (b % o.chunk != 0));
    });
  return saturating_mul(std::max(messages, n), 4);
}

constexpr OptionEntry kDirectOptions[] = {{StrategyOption::algorithm, kAlgorithms}, {StrategyOption::chunk, {}}};

}  // namespace

const Strategy& direct_strategy() {
  static const Strategy s{
      .entry = {"direct", "Ranka-Wang §4-6", "compress, decompose, lower, verify: every message sent whole, directly"},
      .options = kDirectOptions,
      .run = run_direct,
      .sweep = StrategyOption::algorithm,
      .needs_memory_limits = false,
      .auto_skip = nullptr,
      .pieces = direct_pieces,
      .plan_cost = [](const PlanOptions& o) { return o.algorithm == "quantised" ? 0.5 : 0.1; },   // its chunk and profile searches
  };
  return s;
}

}  // namespace commfit
