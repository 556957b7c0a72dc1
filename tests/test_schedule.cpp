// ir/schedule.h: drop_empty_phases on many seeded random schedules, against a spelt-out oracle
// (the used phases, sorted, numbered 0, 1, ... in their order).
#include "ir/random.h"
#include "ir/schedule.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace commfit;

TEST_CASE("drop_empty_phases: the used phases numbered in their order, nothing else touched") {
  Rng rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    Schedule s;
    s.ranks = static_cast<Rank>(1 + rng.below(16));
    s.phases = static_cast<Phase>(rng.below(40));
    const std::uint64_t count = s.phases == 0 ? 0 : rng.below(60);
    // Phases from a random subset, so that runs of empty phases appear anywhere (also first and last).
    std::vector<Phase> pool;
    for (Phase k = 0; k < s.phases; ++k)
      if (rng.below(3) == 0) pool.push_back(k);
    if (pool.empty() && s.phases > 0) pool.push_back(static_cast<Phase>(rng.below(s.phases)));
    for (std::uint64_t e = 0; e < count; ++e) {
      const auto from = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(s.ranks)));
      const auto to = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(s.ranks)));
      s.transfers.push_back({pool[rng.below(pool.size())], from, to, {from, to, rng.below(100), 1 + rng.below(100)}});
    }
    s.copies = {{0, 0, 0, 7}};
    std::vector<Phase> used;
    for (const Transfer& t : s.transfers) used.push_back(t.phase);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());

    Schedule d = s;
    drop_empty_phases(d);
    CAPTURE(trial);
    CHECK(d.phases == used.size());
    CHECK(d.ranks == s.ranks);
    CHECK(d.copies == s.copies);
    REQUIRE(d.transfers.size() == s.transfers.size());
    for (std::size_t e = 0; e < s.transfers.size(); ++e) {
      const Phase want = static_cast<Phase>(std::lower_bound(used.begin(), used.end(), s.transfers[e].phase) - used.begin());
      CHECK(d.transfers[e].phase == want);
      Transfer t = d.transfers[e];
      t.phase = s.transfers[e].phase;
      CHECK(t == s.transfers[e]);
    }
  }
}
