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
#include <functional>
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

// What the order's refinement by routes needs of the machine: each message's own latency (its
// route's), the overhead o of posting a send or processing an eager receive, the bandwidth and the
// eager limit (ir/posting_protocol.h's post-all protocol).
struct RouteTiming {
  std::function<double(Rank from, Rank to)> latency_s;
  double overhead_s = 0, bandwidth_Bps = 1, eager_limit = 0;
  double window_bytes = 0;   // > 0: a flow runs at most at window / (2 x its latency) (ir/network_sim.h)
};

// On a machine whose routes differ in latency, a message posted last on a long route arrives
// last: refines `order` (one phase, every rank posting all its sends at once) by swapping the
// positions of two of one sender's messages wherever that makes the later of their receivers done
// sooner (or as soon, and the two sooner in sum), in a simple model of the post-all protocol: a
// rank's k-th send leaves at (k + 1) o and arrives its latency and bytes / its rate later (the
// bandwidth, or the window over the round trip when less); a
// receiver, once it has posted its own sends, processes its eager messages in order of arrival,
// o each. No receiver's time in that model grows, so neither does the latest. Deterministic;
// stops after a fixed amount of work (`work`: messages visited, a sort counted as n log n) on
// large patterns.
PostingOrder refine_by_routes(const CommMatrix& m, PostingOrder order, const RouteTiming& t, std::int64_t work = 10'000'000);

// The links each message crosses (ir/topology.h: route, link_count, link_width).
struct LinkRoutes {
  std::int64_t link_count = 0;
  std::function<void(Rank from, Rank to, std::vector<Link>& links)> route;
  std::function<double(Link)> link_width;   // in units of the bandwidth
};

// Where senders' k-th messages share links (a tapered fat tree's few uplinks), the messages posted
// at one position crowd the same links at the same time: spreads the links' bytes more evenly over
// the posting positions (the sum over links and positions of the square of the time the
// position's messages hold the link falls) by two moves, each kept only where no receiver then
// ends later in refine_by_routes's model than the latest one did before: swapping two of one
// sender's messages, and swapping two positions c and d over a whole component of the messages at
// c or d linked by a shared sender or receiver (on a proper colouring an alternating path or cycle,
// Kempe's chain), which leaves every sender and receiver the positions it had. The model still
// leaves out link sharing: the caller prices the result. Deterministic; bounded by `work` as
// refine_by_routes, and the order unchanged where the links times positions exceed 4 Mi.
PostingOrder spread_over_links(const CommMatrix& m, PostingOrder order, const RouteTiming& t, const LinkRoutes& routes,
                               std::int64_t work = 10'000'000);

// Each sender's messages by the load of the busiest link on their route (the bytes all messages
// put on it), heaviest first, the order given among equals: the links that set the exchange's
// time get bytes from the start. Deterministic.
PostingOrder busiest_links_first(const CommMatrix& m, PostingOrder order, const LinkRoutes& routes);

}  // namespace commfit
