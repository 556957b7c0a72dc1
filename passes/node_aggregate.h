// node aggregate: node-aware three-step routing (Bienz, Gropp, Olson, "Node aware sparse
// matrix-vector multiplication", JPDC 2019, §3 and "Reducing communication in algebraic multigrid
// with multi-step node aware communication", IJHPCA 2020: the three-step exchange; MPI Advance's
// locality-aware alltoallv builds the same routes). The modern form of the seeds' two-stage
// routing (docs/TWO-STAGE.md): route through intermediaries chosen to cut the messages that cross
// the network.
//
// Ranks sit on nodes of `ranks_per_node` consecutive ranks (the last node may be partly full).
// A message between two nodes A != B goes in up to three hops, each a whole-message piece:
//   phase 0, gather:  src -> a, the rank of A that speaks for A to B;
//   phase 1, network: a -> b, the rank of B that listens for A; every byte from A to B crosses
//                     the network in this one (phase, a, b) message;
//   phase 2, scatter: b -> dst.
// A hop whose two ends are the same rank is skipped. Messages of `direct_from` bytes or more (0:
// none) go directly too, in phase 1: two more hops of their bytes would cost more than the message
// start-up they save (strategy node sets it from the cost model, planner/strategy_node.cpp).
// The agents are balanced by bytes: node A's pairs (A, B) with traffic, in decreasing bytes (then
// B), each go to the rank of A that speaks for the fewest bytes so far (then the fewest nodes,
// then the lowest rank), and likewise the listeners of B for its pairs (A, B). With equal loads
// that is Bienz-Gropp-Olson's round robin (each rank of a node speaks for about 1 / n_A of the
// other nodes and listens for about as many); with skewed ones no agent carries much more than
// its share of the node's bytes. Messages inside a node go directly, in
// the network phase while the agents' network messages fly; except those below `ride_below`
// bytes, which ride with a hop between the same two ranks when there is one (in the scatter phase,
// else the gather phase), so that they travel in that hop's message: the executor coalesces the
// pieces of a phase to one peer, and the cost model counts them as one message (strategy node
// sets ride_below from the cost model: bytes that take less time in shared memory than the two
// overheads a message saves).
//
// Two steps (NodeSteps::two; Bienz-Gropp-Olson's two-step): every rank is an agent. src sends
// straight to the rank of B with its own local index (modulo n_B), in phase 0, which forwards to
// dst in phase 1 (messages inside nodes as above). Between nodes A and B, at most n_A network
// messages (phase 0): one per sending rank, each carrying everything it has for B; no third hop,
// and no rank idle in the network phase.
//
// Needs: ranks_per_node >= 1 (1 gives the direct exchange in one phase). Guarantees: every network
// message's bytes travel its route once, whole (the verifier's delivery and holding rules); at most
// three phases, empty ones dropped; between any two nodes, one aggregated message per direction
// (phase 1), and no other message crosses between them but the direct ones (>= direct_from); no contention rule (a phase-0
// agent receives from the other ranks of its node at once); deterministic, no randomness.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/schedule.h"

namespace commfit {

enum class NodeSteps { three, two };

Schedule node_aggregate(const CommMatrix& m, Rank ranks_per_node, Bytes direct_from = 0, NodeSteps steps = NodeSteps::three,
                        Bytes ride_below = 0);

// The ranks of node `node` of a p-rank job with `ranks_per_node` ranks per node: [first, first + n).
struct NodeSpan {
  Rank first = 0, n = 0;
};
NodeSpan node_span(Rank node, Rank ranks_per_node, Rank p);

}  // namespace commfit
