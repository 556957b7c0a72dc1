#include "planner/pass_table.h"

#include "ir/error.h"
#include "planner/strategy_table.h"

#include <algorithm>

namespace commfit {
namespace {

constexpr auto node = Contention::node;
constexpr auto link = Contention::link;
constexpr auto none = Contention::none;
constexpr auto bounded = Contention::bounded;
constexpr std::optional<Contention> keeps = std::nullopt;

// In the order of enum class Pass (checked below).
constexpr PassEntry kPasses[] = {
    {Pass::compress, {"compress", "Ranka-Wang §4.2", "COM -> CCOM: per-rank destination lists in seeded random order"}, false, keeps},
    {Pass::decompose, {"decompose", "Ranka-Wang §4.1-4.2; König", "phases that are partial permutations (--algorithm optimal, lp, rs_n, rs_np)"}, true, node},
    {Pass::decompose_links, {"decompose-links", "Ranka-Wang §5 Fig. 4", "RS_NL/RS_NLP: partial permutations whose routes are link-disjoint (Check_Path/Mark_Path)"}, true, link},
    {Pass::post_all, {"post-all", "Ranka-Wang §3 (AC)", "one phase holding every message: no contention rule"}, true, none},
    {Pass::posting_order, {"posting-order", "König; docs/FORMAT.md §3.2", "each rank's sends posted by colour of a bipartite edge colouring: a receiver's messages at distinct positions"}, false, keeps},
    {Pass::heap_split, {"heap-split", "Ranka-Wang §6", "RS_NLPH/RS_NLH: per-row heaps, M_thresh = k-th smallest size, lambda = k/n swept"}, true, link},
    {Pass::quantised_split, {"quantised-split", "beyond Ranka-Wang §6", "split messages into pieces <= q, colour the multigraph largest first (D or <= 2D-1 phases)"}, true, node},
    {Pass::profile_split, {"profile-split", "beyond Ranka-Wang §6", "cut a few messages so h+1 or h+2 phases have a lower sum of phase maxima (template search, matched cuts, level search)"}, true, node},
    {Pass::shave, {"shave", "beyond Ranka-Wang §6", "move the tails of a phase's largest pieces into phases where both ends are idle; drop empty phases"}, true, keeps},
    {Pass::link_check, {"link-check", "Ranka-Wang §5", "move transfers so that no two in a phase share a directed link"}, true, link},
    {Pass::group_phases, {"group-phases", "beyond Ranka-Wang; ir/network_sim.h", "merge phases k at a time, largest first: at most k messages per port per phase (--concurrency)"}, true, bounded},
    {Pass::two_stage_split, {"two-stage-split", "Transportation §7-8; BHJ §3", "every message split over p intermediaries (--variant)"}, false, keeps},
    {Pass::stage_schedule, {"stage-schedule", "Transportation §7", "each stage decomposed into phases; stage 2 after stage 1"}, true, node},
    {Pass::park, {"park", "Pinar-Hendrickson §3.1", "memory phases, greedy: receive what fits, park on ranks with spare memory"}, true, none, true},
    {Pass::relaxation, {"relaxation", "Pinar-Hendrickson §3.1", "memory phases: continuous relaxation, ceil(T/M) equal pieces plus pre/post phases"}, true, none, true},
    {Pass::node_aggregate, {"node-aggregate", "Bienz-Gropp-Olson, three-step node-aware", "gather to a node's agent, one message per node pair, scatter (--topology ...+nodeN)"}, true, none},
    {Pass::lower, {"lower", "docs/FORMAT.md, plan format", "schedule -> per-rank steps, staging offsets"}, false, keeps},
    {Pass::verify, {"verify", "docs/FORMAT.md, verifier", "rules 1-6: delivery, holding, matching, contention, memory, staging"}, false, keeps},
};

constexpr bool in_enum_order() {
  for (std::size_t k = 0; k < std::size(kPasses); ++k)
    if (static_cast<std::size_t>(kPasses[k].pass) != k) return false;
  return std::size(kPasses) == static_cast<std::size_t>(Pass::verify) + 1;
}
static_assert(in_enum_order(), "kPasses lists every Pass once, in the enum's order");

const char* rule_text(const PassEntry& p) {
  if (!p.schedule) return "";
  if (p.memory) return "[memory]";
  if (!p.contention) return "[keeps]";
  switch (*p.contention) {
    case Contention::none: return "[none]";
    case Contention::node: return "[node]";
    case Contention::link: return "[link]";
    case Contention::bounded: return "[<= k]";
  }
  return "";
}

}  // namespace

std::span<const PassEntry> pass_table() { return kPasses; }
const PassEntry& pass_entry(Pass p) { return kPasses[static_cast<std::size_t>(p)]; }
const char* name(Pass p) { return pass_entry(p).entry.name; }

std::optional<Pass> find_pass(const std::string& name) {
  for (const PassEntry& p : kPasses)
    if (name == p.entry.name) return p.pass;
  return std::nullopt;
}

bool has_entry(std::span<const NamedEntry> table, const std::string& name) {
  return std::any_of(table.begin(), table.end(), [&](const NamedEntry& e) { return name == e.name; });
}

std::string entry_names(std::span<const NamedEntry> table) {
  std::string out;
  for (const NamedEntry& e : table) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::string pad(const std::string& s, std::size_t width) {
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return s + std::string(chars < width ? width - chars : 1, ' ');
}

std::string list_passes_text() {
  std::string out;
  auto row = [&](const NamedEntry& e, const std::string& tail) {
    out += "  " + pad(e.name, 17) + pad(e.source, 30) + e.description + tail + "\n";
  };
  out += "strategies (--strategy; auto plans every one that applies and keeps the cheapest):\n";
  for (const Strategy* s : strategy_table()) {
    row(s->entry, "");
    for (const OptionEntry& opt : s->options)
      out += std::string(19, ' ') + flag(opt.option) + (opt.choices.empty() ? "" : " " + entry_names(opt.choices)) + "\n";
  }
  out += "passes ([rule]: what --verify-each checks of the schedule a pass returns):\n";
  for (const PassEntry& p : kPasses) row(p.entry, *rule_text(p) ? std::string(" ") + rule_text(p) : "");
  for (const Strategy* s : strategy_table())
    for (const OptionEntry& opt : s->options) {
      if (opt.choices.empty() || (s->sweep && *s->sweep != opt.option)) continue;
      out += std::string(s->entry.name) + " " + flag(opt.option) + ":\n";
      for (const NamedEntry& e : opt.choices) row(e, "");
    }
  return out;
}

}  // namespace commfit
