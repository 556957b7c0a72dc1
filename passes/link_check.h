// link check: make a direct schedule link-contention free, Ranka-Wang §5 (Check_Path /
// Mark_Path) applied after the fact, for decompositions that do not check links while they
// build phases (the optimal König decomposition, RS_N, LP). A transfer is one MPI message: all
// pieces from one rank to another in one phase.
// Repair: each phase keeps a maximal link-disjoint set of its transfers, chosen largest first
// (ties in (from, to) order); the others are evicted. Evicted transfers, largest first, go to the
// existing phase where their sender and receiver are idle and their route is free that raises
// the phase's largest piece least (the earliest such phase on ties; a phase whose largest piece
// is already as large costs nothing), else to a new phase opened after the others (first fit
// among the new phases). No transfer is split.
// Needs: a schedule whose phases are partial permutations (node rule), ranks <= topology ranks.
// Guarantees: the same transfers (phases renumbered only for moved ones), still partial
// permutations, and no two transfers of a phase share a directed link of the topology; phases of
// the input keep their numbers and new phases come after them.
#pragma once

#include "ir/schedule.h"
#include "ir/topology.h"

namespace commfit {

struct LinkCheckReport {
  Phase phases_in = 0;           // phases of the input (h for the optimal decomposition)
  Phase phases_out = 0;          // phases_out - phases_in is the increase the link rule costs
  std::int64_t conflicts = 0;    // transfers evicted from their phase
  std::int64_t moved_to_existing = 0;   // of those, placed in another existing phase
  // A floor on the phases of any link-disjoint schedule of the same messages: the most
  // (from, to) pairs that one rank sends to or receives from, or that one directed link carries
  // (each needs a phase of its own). phases_out / phase_lower_bound is the repair's real cost.
  Phase phase_lower_bound = 0;
};

Schedule link_check(const Schedule& s, const Topology& topo, LinkCheckReport* report = nullptr);

}  // namespace commfit
