#include "planner/passes.h"

#include <algorithm>
#include <vector>

namespace commfit {
namespace {

constexpr NamedEntry kPasses[] = {
    {"compress", "Ranka-Wang §4.2", "COM -> CCOM: per-rank destination lists in seeded random order"},
    {"decompose", "Ranka-Wang §4.1-4.2; König", "phases that are partial permutations (--algorithm)"},
    {"lower", "DESIGN.md, plan format", "schedule -> per-rank steps, staging offsets"},
    {"heap-split", "Ranka-Wang §6", "RS_NLPH/RS_NLH: per-row heaps, M_thresh = k-th smallest size, lambda = k/n swept"},
    {"link-check", "Ranka-Wang §5", "move transfers so that no two in a phase share a directed link"},
    {"two-stage-split", "Transportation §7-8; BHJ §3", "every message split over p intermediaries (--variant)"},
    {"stage-schedule", "Transportation §7", "each stage decomposed into phases; stage 2 after stage 1"},
    {"park", "Pinar-Hendrickson §3.1", "memory phases, greedy: receive what fits, park on ranks with spare memory"},
    {"relaxation", "Pinar-Hendrickson §3.1", "memory phases: continuous relaxation, ceil(T/M) equal pieces plus pre/post phases"},
    {"quantised-split", "beyond Ranka-Wang §6", "split messages into pieces <= q, colour the multigraph largest first (D or <= 2D-1 phases)"},
    {"profile-split", "beyond Ranka-Wang §6", "cut a few messages so h+1 or h+2 phases have a lower sum of phase maxima (template search, matched cuts, level search)"},
    {"shave", "beyond Ranka-Wang §6", "move the tails of a phase's largest pieces into phases where both ends are idle; drop empty phases"},
    {"verify", "DESIGN.md, verifier", "rules 1-6: delivery, holding, matching, contention, memory, staging"},
};

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

constexpr StrategyEntry kStrategies[] = {
    {{"direct", "Ranka-Wang §4-6", "compress, decompose, lower, verify: every message sent whole, directly"}, strategy_direct},
    {{"two-stage", "Transportation §7-8; BHJ §3", "every message split over p intermediaries: two balanced stages"}, strategy_two_stage},
    {{"memory", "Pinar-Hendrickson §3", "phases that respect per-rank free memory, parking data on spare ranks"}, strategy_memory},
    {{"async", "Ranka-Wang §3 (AC)", "one phase: every receive posted, then every send, no ordering"}, strategy_async},
};

const std::vector<NamedEntry> kStrategyNames = [] {
  std::vector<NamedEntry> v;
  for (const StrategyEntry& s : kStrategies) v.push_back(s.entry);
  return v;
}();

}  // namespace

std::span<const NamedEntry> pass_table() { return kPasses; }
std::span<const NamedEntry> algorithm_table() { return kAlgorithms; }
std::span<const StrategyEntry> strategies() { return kStrategies; }
std::span<const NamedEntry> strategy_table() { return kStrategyNames; }

const StrategyEntry* find_strategy(const std::string& name) {
  for (const StrategyEntry& s : kStrategies)
    if (name == s.entry.name) return &s;
  return nullptr;
}

bool has_entry(std::span<const NamedEntry> table, const std::string& name) {
  return std::any_of(table.begin(), table.end(), [&](const NamedEntry& e) { return name == e.name; });
}

std::string entry_names(std::span<const NamedEntry> table) {
  std::string out;
  for (const NamedEntry& e : table) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

namespace {

// Pads to `width` characters (UTF-8 code points, not bytes: the sources hold "§" and "ö").
std::string pad(const std::string& s, std::size_t width) {
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return s + std::string(chars < width ? width - chars : 1, ' ');
}

}  // namespace

std::string list_passes_text() {
  std::string out;
  auto section = [&](const char* title, std::span<const NamedEntry> table) {
    out += title;
    out += "\n";
    for (const NamedEntry& e : table) out += "  " + pad(e.name, 17) + pad(e.source, 30) + e.description + "\n";
  };
  section("strategies:", strategy_table());
  section("passes:", pass_table());
  section("decomposition algorithms (--algorithm):", algorithm_table());
  return out;
}

}  // namespace commfit
