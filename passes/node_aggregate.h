// node aggregate: node-aware three-step routing (Bienz, Gropp, Olson, "Node aware sparse
// matrix-vector multiplication", JPDC 2019, §3 and "Reducing communication in algebraic multigrid
// with multi-step node aware communication", IJHPCA 2020: the three-step exchange; MPI Advance's
// locality-aware alltoallv builds the same routes). The modern form of the seeds' two-stage
// routing (docs/TWO-STAGE.md): route through intermediaries chosen to cut the messages that cross
// the network.
//
// Ranks sit on nodes, cut into aggregation groups (NodeGroups, below: a group is a node, or a part
// of one); the pass treats each group as a node. On any placement: N consecutive ranks per node
// (+nodeN, the last node maybe partly full) or a node map (round robin, uneven nodes).
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
// straight to the rank of B with its own local index (modulo n_B; ranks of a node in ascending order), in phase 0, which forwards to
// dst in phase 1 (messages inside nodes as above). Between nodes A and B, at most n_A network
// messages (phase 0): one per sending rank, each carrying everything it has for B; no third hop,
// and no rank idle in the network phase.
//
// Two steps, alternating (`alternate`): the node pairs (A, B) with A + B odd (group numbers) go the
// other way round: src sends to the rank of its own node with dst's local index (modulo n_A), in
// phase 0, which sends everything its node has for dst in one network message, in phase 1. Every
// node then sends and receives over the network in both phases, while its ranks forward inside
// it: the network is busy in phase 1 too, where plain two steps only scatter. As many messages as
// plain two steps: per rank one network message per node, up to n - 1 hops inside its node.
//
// Needs: groups of the matrix's ranks (groups of 1 give the direct exchange in one phase). Guarantees: every network
// message's bytes travel its route once, whole (the verifier's delivery and holding rules); at most
// three phases, empty ones dropped; between any two nodes, one aggregated message per direction
// (phase 1), and no other message crosses between them but the direct ones (>= direct_from); no contention rule (a phase-0
// agent receives from the other ranks of its node at once); deterministic, no randomness.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/schedule.h"
#include "ir/topology.h"

#include <span>
#include <vector>

namespace commfit {

enum class NodeSteps { three, two };

// The aggregation groups of a p-rank job: each node's ranks, ascending, cut into groups of `size`
// consecutive ones of them (the last group of a node may be smaller), numbered by their lowest
// rank. Ranks of a group share a node; with +nodeN and size N a group is a node, and rank r's is
// r / N. The pass treats each group as a node.
class NodeGroups {
 public:
  // Groups of `size` (>= 1) on the nodes of `t` (its +nodeN or node map).
  NodeGroups(const Topology& t, Rank p, Rank size);
  // N consecutive ranks per node (the last node may be partly full), whole nodes.
  static NodeGroups blocks(Rank p, Rank ranks_per_node) { return NodeGroups(Topology::parse("full+node" + std::to_string(ranks_per_node)), p, ranks_per_node); }

  Rank ranks() const { return static_cast<Rank>(group_.size()); }
  Rank count() const { return static_cast<Rank>(start_.size()) - 1; }
  Rank group_of(Rank r) const { return group_[static_cast<std::size_t>(r)]; }
  Rank local(Rank r) const { return local_[static_cast<std::size_t>(r)]; }   // r's index in its group
  std::span<const Rank> members(Rank g) const {
    return std::span<const Rank>(members_).subspan(static_cast<std::size_t>(start_[static_cast<std::size_t>(g)]),
                                                   static_cast<std::size_t>(start_[static_cast<std::size_t>(g) + 1] - start_[static_cast<std::size_t>(g)]));
  }

 private:
  std::vector<Rank> group_, local_, start_, members_;
};

Schedule node_aggregate(const CommMatrix& m, const NodeGroups& groups, Bytes direct_from = 0, NodeSteps steps = NodeSteps::three,
                        Bytes ride_below = 0, bool alternate = false);

}  // namespace commfit
