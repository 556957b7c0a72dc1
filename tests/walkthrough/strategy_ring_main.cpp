// docs/ARCHITECTURE.md's walk-through, "Adding a strategy": the strategy file it prints, compiled
// as printed (tests/walkthrough/extract_strategy_file.cmake) against the tree, run through the pass
// runner on random matrices: its schedules verify under the rules the runner set, and each phase
// is one linear permutation, as the doc says.
#include "passes/lower.h"
#include "passes/verify.h"
#include "planner/pass_runner.h"
#include "planner/strategy_table.h"
#include "workloads/generators.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace commfit {
const Strategy& ring_strategy();   // the doc's file
}

int main() {
  using namespace commfit;
  const Strategy& ring = ring_strategy();
  int failures = 0;
  auto fail = [&](const char* what, std::uint64_t seed) {
    std::fprintf(stderr, "walkthrough ring, seed %llu: %s\n", static_cast<unsigned long long>(seed), what);
    ++failures;
  };
  if (std::string(ring.entry.name) != "ring" || !ring.options.empty() || ring.sweep) fail("the table entry is not the doc's", 0);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Rank p = static_cast<Rank>(3 + seed % 14);
    const CommMatrix m = gen_random_sparse(p, 0.5, 4096, seed, seed % 2 == 0);
    PlanOptions o;
    o.strategy = "ring";
    PassRunner passes(m, o, nullptr);
    const StrategyOutput out = ring.run(m, o, passes);
    if (!verify(lower(out.schedule, m), m, passes.rules).empty()) fail("the plan does not verify", seed);
    // Each phase pairs every rank with one offset: i + k mod p, or i XOR k when p is a power of
    // two (passes/decompose_lp.h); no two phases share one.
    const bool power_of_two = (p & (p - 1)) == 0;
    std::map<Phase, std::set<Rank>> offsets;
    for (const Transfer& t : out.schedule.transfers)
      offsets[t.phase].insert(power_of_two ? (t.from ^ t.to) : (t.to - t.from + p) % p);
    std::set<Rank> used;
    for (const auto& [phase, ks] : offsets)
      if (ks.size() != 1 || !used.insert(*ks.begin()).second) fail("a phase is not one linear permutation", seed);
    if (ring.pieces(m, o) != network_messages(m)) fail("pieces is not the message count", seed);
  }
  std::printf("walkthrough ring: 20 matrices, %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
