// posting order (coloured): the order in which each rank posts its sends in a one-phase plan,
// from a proper edge colouring of the bipartite sender -> receiver graph (König's theorem: a
// bipartite graph of maximum degree Δ = the largest fan-out or fan-in has one with Δ colours;
// the colouring is decompose_optimal's, passes/decompose_optimal.h). A rank posts its messages by
// colour, so the messages one receiver gets come from different posting positions of their
// senders: with every fan-out and fan-in equal to Δ (a regular pattern) a position is a colour,
// and every receiver gets exactly one message per posting slot, as the posting term of the bound
// (ir/cost_model.h, exchange_bound) assumes. Where fan-outs differ a rank's positions are its
// colours in ascending order, each at most its colour.
// Needs: a valid CommMatrix (or decompose_optimal's schedule of one). Guarantees: peers[r] lists every rank r sends a network message to,
// once each, ascending in colour (ties cannot occur: a rank's colours are distinct); the same
// matrix gives the same order.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/schedule.h"

#include <cstdint>
#include <vector>

namespace commfit {

struct PostingOrder {
  std::int32_t colours = 0;                 // Δ: the colours the order was made with
  std::vector<std::vector<Rank>> peers;     // per rank: its send peers in posting order (RankSchedule::send_order)
};

PostingOrder coloured_posting_order(const CommMatrix& m);

// The same order read off a colouring already made: `coloured` is decompose_optimal's schedule
// (a phase is a colour, whole messages), as the bounded strategy merges its phases.
PostingOrder posting_order_of(const Schedule& coloured);

}  // namespace commfit
