// profile_split: every schedule verifies within h + extra_phases phases, the cheapest stage is
// the one returned, the result is deterministic, and a cut pays where no h-phase schedule can.
#include "ir/cost_model.h"
#include "passes/lower.h"
#include "passes/profile_split.h"
#include "passes/verify.h"
#include "support/split_matrices.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace commfit;

TEST_CASE("profile_split_verifies_within_h_plus_extra_phases") {
  // tau nearly 0: an extra phase is almost free, so the cut stages run on most matrices.
  std::int64_t cut_stages = 0;
  for (const CommMatrix& m : test::split_test_matrices()) {
    const TrafficStats st = traffic_stats(m);
    for (std::int64_t extra : {0, 2}) {
      if (extra > 0 && st.h > 16) continue;   // the template checks grow as h^3; keep the suite quick
      ProfileSplitOptions o;
      o.extra_phases = extra;
      o.cost.tau_s = 1e-12;
      ProfileSplitReport r;
      const Schedule s = profile_split(m, o, &r);
      for (const auto& stage : r.stages) cut_stages += stage.cuts > 0;
      INFO("p = " << m.ranks << ", h = " << st.h << ", extra = " << extra);
      CHECK(s.phases <= static_cast<Phase>(st.h + extra));
      for (const Transfer& t : s.transfers) CHECK((t.from == t.piece.src && t.to == t.piece.dst));
      const auto problems = verify(lower(s, m), m, {});
      CHECK(problems.empty());
      if (!problems.empty()) MESSAGE(problems.front());
      // The returned stage is the cheapest, and its estimate is the schedule's cost.
      REQUIRE(r.chosen < r.stages.size());
      for (const auto& stage : r.stages) CHECK(r.stages[r.chosen].estimate_s <= stage.estimate_s);
      CHECK(synchronous_estimate_s(lower(s, m), o.cost) == doctest::Approx(r.stages[r.chosen].estimate_s).epsilon(1e-12));
    }
  }
  INFO("stages with cuts: " << cut_stages);
  CHECK(cut_stages >= 20);
}

TEST_CASE("profile_split_is_deterministic") {
  const CommMatrix m = gen_nonuniform(64, 12, 256, 7);
  const Schedule a = profile_split(m), b = profile_split(m);
  CHECK(a.phases == b.phases);
  CHECK(a.transfers == b.transfers);
}

TEST_CASE("profile_split_cuts_where_no_h_phase_schedule_is_as_cheap") {
  // Rank 0 sends 100 kB and 10 kB, rank 3 sends 60 kB twice: every two-phase schedule pays
  // 100 + 60 kB (the largest pieces of the two ports), LB pays 120 kB. Three phases with 0 -> 1 cut
  // into 60 + 40 kB and 3 -> 4 into 40 + 20 kB cost 60 + 40 + 20 kB: LB + tau.
  const CommMatrix m = make_matrix(6, {{0, 1, 100000}, {0, 2, 10000}, {3, 4, 60000}, {3, 5, 60000}});
  const CostOptions c;
  ProfileSplitReport r;
  const Schedule s = profile_split(m, {}, &r);
  CHECK(verify(lower(s, m), m, {}).empty());
  REQUIRE(r.stages.size() >= 2);
  CHECK(r.stages[0].estimate_s == doctest::Approx(2 * c.tau_s + 160000 / c.bandwidth_Bps));
  CHECK(s.phases == 3);
  CHECK(synchronous_estimate_s(lower(s, m), c) == doctest::Approx(lower_bound_s(traffic_stats(m), c) + c.tau_s));
}

TEST_CASE("profile_split_of_local_copies_only_has_no_phases") {
  const CommMatrix m = make_matrix(4, {{0, 0, 10}, {3, 3, 20}});
  const Schedule s = profile_split(m);
  CHECK(s.phases == 0);
  CHECK(s.transfers.empty());
  CHECK(s.copies.size() == 2);
  CHECK(verify(lower(s, m), m, {}).empty());
}

TEST_CASE("profile_split_stops_where_no_extra_phase_can_win") {
  // P phases cost at least P tau + mu t. On the case above (h = 2, LB = 16 us, the best two-phase
  // schedule 20 us, three phases 18 us) a fourth phase cannot win, and with 17 us to beat, a third
  // cannot either.
  const CommMatrix m = make_matrix(6, {{0, 1, 100000}, {0, 2, 10000}, {3, 4, 60000}, {3, 5, 60000}});
  ProfileSplitOptions o;
  ProfileSplitReport r;
  profile_split(m, o, &r);
  CHECK(r.stages.size() == 2);
  o.to_beat_s = lower_bound_s(traffic_stats(m), o.cost) + o.cost.tau_s / 2;
  const Schedule s = profile_split(m, o, &r);
  CHECK(r.stages.size() == 1);
  CHECK(s.phases == 2);
  CHECK(verify(lower(s, m), m, {}).empty());
}
