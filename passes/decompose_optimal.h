// decompose (optimal): exact bipartite edge colouring, König's theorem (a bipartite multigraph
// of maximum degree h has a proper edge colouring with h colours). Senders on one side,
// receivers on the other, one edge per network message; a colour is a phase.
// Messages are coloured largest first with alternating (Kempe) path flips, so large messages
// share the early phases and the synchronous cost sum over phases of the largest piece stays low.
// Needs: a valid CommMatrix. Guarantees: exactly h phases (h = max fan-in / fan-out), every
// phase a partial permutation, every network message sent whole exactly once.
#pragma once

#include "ir/schedule.h"

namespace commfit {

Schedule decompose_optimal(const CommMatrix& m);

}  // namespace commfit
