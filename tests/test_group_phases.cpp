// passes/group_phases.h: bounded concurrency, k phases merged into one, largest first, and the
// verifier's rule "at most k per port per phase" holding the result to it.
#include "ir/error.h"
#include "passes/decompose_optimal.h"
#include "passes/group_phases.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>

using namespace commfit;

TEST_CASE("group_phases_keeps_at_most_k_per_port_and_the_verifier_holds_it_to_that") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const CommMatrix m = gen_random_sparse(20, 0.4, 5000, seed, false);
    const Schedule base = decompose_optimal(m);
    for (int k : {1, 2, 3, 4, 8, 64}) {
      CAPTURE(k);
      const Schedule g = group_phases(base, k);
      CHECK(g.phases == (base.phases + static_cast<Phase>(k) - 1) / static_cast<Phase>(k));
      std::map<std::tuple<Phase, Rank, bool>, int> per_port;
      for (const Transfer& t : g.transfers) {
        ++per_port[{t.phase, t.from, true}];
        ++per_port[{t.phase, t.to, false}];
      }
      for (const auto& [key, n] : per_port) CHECK(n <= k);
      VerifyRules rules;
      rules.contention = Contention::bounded;
      rules.per_port = k;
      const Plan plan = lower(g, m);
      CHECK(verify(plan, m, rules).empty());
      // The phases are cut largest first: the sum of the groups' largest pieces is the least of
      // any grouping of k consecutive phases of the size order, e.g. the original order.
      Bytes sorted_sum = 0, naive_sum = 0;
      for (Bytes b : phase_max_piece(g)) sorted_sum += b;
      const std::vector<Bytes> largest = phase_max_piece(base);
      for (std::size_t i = 0; i < largest.size(); i += static_cast<std::size_t>(k))
        naive_sum += *std::max_element(largest.begin() + static_cast<std::ptrdiff_t>(i),
                                       largest.begin() + static_cast<std::ptrdiff_t>(std::min(largest.size(), i + static_cast<std::size_t>(k))));
      CHECK(sorted_sum <= naive_sum);
      // One fewer per port is refused when some port uses all k.
      bool full = false;
      for (const auto& [key, n] : per_port) full |= n == k;
      if (full && k > 1) {
        rules.per_port = k - 1;
        const auto problems = verify(plan, m, rules);
        REQUIRE(!problems.empty());
        CHECK(problems.front().find("rule 4") == 0);
      }
    }
  }
}
