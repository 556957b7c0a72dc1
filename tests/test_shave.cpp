// passes/shave.h: pieces moved into idle slots of earlier phases and phases cut to the level
// their busiest piece allows; the sum of phase maxima never rises and every result verifies.
#include "ir/cost_model.h"
#include "passes/lower.h"
#include "passes/quantised_split.h"
#include "passes/shave.h"
#include "passes/verify.h"
#include "support/split_matrices.h"

#include <doctest/doctest.h>

using namespace commfit;

namespace {

Bytes max_sum(const Schedule& s) {
  Bytes total = 0;
  for (Bytes b : phase_max_piece(s)) total += b;
  return total;
}

}  // namespace

TEST_CASE("shave_moves_a_phase_into_idle_slots") {
  // Phase 0: 0 -> 1 (100 B). Phase 1: 2 -> 3 (50 B). Ranks 2 and 3 are idle in phase 0, whose
  // largest piece (100 B) makes room for all 50 B: one phase remains, and it costs what phase 0 did.
  const CommMatrix m = make_matrix(4, {{0, 1, 100}, {2, 3, 50}});
  Schedule s;
  s.ranks = 4;
  s.phases = 2;
  s.transfers = {{0, 0, 1, {0, 1, 0, 100}}, {1, 2, 3, {2, 3, 0, 50}}};
  ShaveReport r;
  const Schedule out = shave(s, &r);
  CHECK(out.phases == 1);
  CHECK(max_sum(out) == 100);
  CHECK(r.max_sum_in == 150);
  CHECK(r.max_sum_out == 100);
  CHECK(verify(lower(out, m), m, {}).empty());
}

TEST_CASE("shave_cuts_a_phase_to_the_level_its_busiest_piece_allows") {
  // Phase 0: 0 -> 1 (100 B), 2 -> 3 (10 B). Phase 1: 0 -> 3 (40 B), 2 -> 1 (70 B). Every piece's
  // sender or receiver is busy in the other phase: no idle slot, nothing moves.
  const CommMatrix m = make_matrix(4, {{0, 1, 100}, {2, 3, 10}, {0, 3, 40}, {2, 1, 70}});
  Schedule s;
  s.ranks = 4;
  s.phases = 2;
  s.transfers = {{0, 0, 1, {0, 1, 0, 100}}, {0, 2, 3, {2, 3, 0, 10}}, {1, 0, 3, {0, 3, 0, 40}}, {1, 2, 1, {2, 1, 0, 70}}};
  const Schedule out = shave(s);
  CHECK(out.transfers == s.transfers);
  // Now let rank 2's piece in phase 1 be 1 -> 2 instead: 1 sends nothing in phase 0 and 2
  // receives nothing there, so its tail above 40 B (30 B) moves into phase 0 (room: 100 B).
  const CommMatrix m2 = make_matrix(4, {{0, 1, 100}, {2, 3, 10}, {0, 3, 40}, {1, 2, 70}});
  s.transfers = {{0, 0, 1, {0, 1, 0, 100}}, {0, 2, 3, {2, 3, 0, 10}}, {1, 0, 3, {0, 3, 0, 40}}, {1, 1, 2, {1, 2, 0, 70}}};
  ShaveReport r;
  const Schedule out2 = shave(s, &r);
  CHECK(out2.phases == 2);
  CHECK(max_sum(out2) == 140);
  CHECK(r.chunks_moved == 1);
  CHECK(verify(lower(out2, m2), m2, {}).empty());
  (void)m;
}

TEST_CASE("shave_never_raises_cost_and_every_result_verifies") {
  for (const CommMatrix& m : test::split_test_matrices()) {
    const TrafficStats st = traffic_stats(m);
    std::vector<Schedule> inputs;
    if (st.h > 0 && 4.0 * m.ranks * static_cast<double>(quantised_degree(m, 4096)) <= 1e7) {
      inputs.push_back(quantised_split(m, 4096));
      inputs.push_back(quantised_split(m, 4096, std::int64_t{1} << 40));
    }
    inputs.push_back(quantised_split(m, st.max_message + 1, std::int64_t{1} << 40));
    for (const Schedule& s : inputs) {
      ShaveReport r;
      const Schedule out = shave(s, &r);
      INFO("p = " << m.ranks << ", phases " << s.phases);
      CHECK(out.phases <= s.phases);
      CHECK(max_sum(out) <= max_sum(s));
      CHECK(r.max_sum_out == max_sum(out));
      const auto problems = verify(lower(out, m), m, {});
      CHECK(problems.empty());
      if (!problems.empty()) MESSAGE(problems.front());
    }
  }
}
