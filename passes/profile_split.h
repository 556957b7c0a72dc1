// profile split (beyond Ranka-Wang §6 and the quantised split): splits a few messages so that
// one or two phases more than h buy a lower sum of phase maxima than any h-phase schedule can
// reach. docs/PERFORMANCE.md "Schedule quality" has the numbers; DECISIONS.md "Profile split".
//
// A P-phase direct schedule with phase maxima T_1 >= ... >= T_P (its *template*) puts every
// port's pieces, sorted, under T pointwise: the j-th largest piece of any sender or receiver is at
// most T_j. The cost is P tau + mu sum T. The pass, for P = D + 1, D + 2, ... (D the most messages
// of any port, h for a whole-message schedule), each stage on the pieces of the last:
//  1. searches templates: from the sorted envelope (max over ports of the j-th largest piece) with
//     the new slot at a trial level, every level is lowered in turn as far as every port can still
//     fit under it with at most one more piece (one message cut in two where the port has a spare
//     slot); the trial levels give several local minima, kept cheapest first;
//  2. makes the cuts consistent: a port that does not fit as it is needs a cut message whose two
//     pieces also fit at the message's other end; such cut messages form a matching (one cut per
//     port and stage), found by augmenting paths that must cover every port that needs a cut;
//  3. colours the pieces phase by phase, smallest level first: each phase is a matching of pieces
//     of at most its level that covers every port whose remaining pieces no longer fit under the
//     remaining levels, and only takes from a port a piece whose removal leaves the rest fitting.
//     Where no such matching exists (the template ignores which ranks meet) that phase's level is
//     raised to the smallest that has one; failing that, to a matching covering the ports of
//     largest remaining degree (König: one always exists). With lookahead L, up to L larger caps
//     are also tried, each priced as its largest piece plus the next phase's least cap.
//  4. lowers the coloured stage's phase maxima by the level search (passes/level_search.h), which
//     first tries the template itself: the colouring of step 3 misses it where ranks must meet.
// Stage P = D colours the messages by step 3 without a template (bottleneck by binary search),
// then searches as in step 4.
// The cheapest of the stages under the synchronous cost model is returned. No P-phase schedule
// costs less than P tau + mu t (t: the busiest port's bytes), so the stages stop at the first P
// where that reaches the cheapest cost so far or to_beat_s.
// Needs: a valid CommMatrix. Guarantees: a direct schedule (every piece from its source to its
// destination), every phase a partial permutation, every network byte sent exactly once, at most
// D + extra_phases phases, deterministic.
// Work: per stage a few hundred template checks of O(ports x D^2 x P) in the worst case (cached
// per port), P matchings and a level search per template; callers gate it
// (planner/strategy_direct.cpp).
#pragma once

#include "ir/cost_model.h"
#include "ir/schedule.h"

namespace commfit {

struct ProfileSplitOptions {
  std::int64_t extra_phases = 2;   // stages beyond P = D
  std::int64_t templates = 4;      // consistent templates coloured per stage, cheapest kept
  std::int64_t lookahead = 2;      // caps above the least tried per phase (0: none), see step 3
  std::int64_t search_effort = 16; // level search moves per message and attempt (0: no step 4)
  CostOptions cost;                // prices the stages
  double to_beat_s = 0;            // a cost already reached elsewhere (0: none); see below
};

struct ProfileSplitReport {
  struct Stage {
    std::int64_t phases = 0;
    double template_s = 0;     // P tau + mu sum T of the chosen template (0 at P = D)
    double coloured_s = 0;     // the synchronous cost after step 3
    double estimate_s = 0;     // and after step 4
    std::int64_t cuts = 0;     // messages cut in this stage
  };
  std::vector<Stage> stages;
  std::size_t chosen = 0;
};

Schedule profile_split(const CommMatrix& m, const ProfileSplitOptions& o = {}, ProfileSplitReport* report = nullptr);

}  // namespace commfit
