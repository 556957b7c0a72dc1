// Bounded concurrency (beyond Ranka-Wang; the cost model of ir/network_sim.h is what rewards
// it): the phases of a node-contention-free schedule merged k at a time, so that every rank sends
// to at most k ranks and receives from at most k ranks in a phase. k = 1 keeps the schedule;
// k >= its phase count is one phase, as AC.
//
// The phases are taken largest first (by their largest piece, ties by number) and cut into
// consecutive groups of k: phases of similar size share a group, which minimises the sum of the
// groups' largest pieces over all groupings into ceil(phases / k) groups of at most k (an
// exchange argument: swapping a larger phase into an earlier group never raises the sum).
// Under the loosely synchronous executor a rank runs ahead into its next group as soon as its own
// messages are done, so a hot receiver takes its flows k at a time while the rest overlap.
#pragma once

#include "ir/schedule.h"

namespace commfit {

// Throws std::invalid_argument when k < 1.
Schedule group_phases(const Schedule& s, int k);

}  // namespace commfit
