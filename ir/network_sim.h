// The network model every plan is priced by (docs/FORMAT.md §5): a flow-level simulation of the
// executor replaying the plan, in the spirit of SimGrid's SMPI, which is what bench/smpi measures
// the plans on.
//
// What it simulates, per rank, phase after phase (no barrier: a rank starts phase k + 1 when its
// own messages of phase k are done, as backends/exec does):
//  - posting: each send costs the rank `overhead` of CPU, one after another (SMPI's smpi/ois), in
//    the executor's rotated order (to the ranks above it first, ascending, then wrapping around),
//    or in the order its schedule lists (RankSchedule::send_order);
//  - a message (all pieces to one peer in one phase) then waits `latency` = tau - 2 overhead and
//    flows at the rate max-min fair sharing gives it: every rank's injection and ejection port
//    and, with a topology, every link of its route has capacity `bandwidth`, and no single flow
//    goes faster than `bandwidth`;
//  - eager messages (bytes < eager_limit) leave at once and cost the receiver `overhead` of CPU
//    when it completes them (SMPI's smpi/or); larger ones (rendezvous) start only once the
//    receiver has posted its receive (entered that phase), wait rendezvous_s more (the handshake;
//    0 by default, as in SimGrid) and complete on both sides on arrival;
//  - with link_latency_s, a route's latency is its links times it; with window_bytes (the TCP
//    window), a flow's rate is at most window_bytes / (2 latency), SimGrid's TCP-gamma bound;
//  - with rtt_weight_bytes (>= 0), the sharing is weighted as SimGrid CM02's: a flow's penalty is
//    its route's latency + rtt_weight_bytes x the sum of 1 / bandwidth over its route's links
//    (SimGrid's network/weight-S), and the flows a resource limits get rates in proportion to
//    1 / penalty, so flows on shorter routes take more of a shared link;
//  - a rank whose schedule carries a request window (max_outstanding k, ir/plan.h) posts its
//    phase's receives and sends in the executor's global order of rank pairs, at most k in flight;
//    completions are reaped one at a time (an eager receive's overhead paid then), each followed
//    by the next posts (an eager send completes as it is posted);
//  - several ranks per node (topology +nodeN): a message inside a node uses no resource, waits
//    intra_latency_s and flows at up to intra_bandwidth_Bps; messages between nodes share their
//    nodes' ports on the crossbar (one NIC per node) and their links on a topology;
//  - network ib: each flow's rate bound is further divided by SimGrid's InfiniBand penalty
//    (network_ib, after Vienne): a sender with n > 1 flows out pays n Bs (times ys when one of its
//    receivers has more than 2 flows in); a flow into a receiver with c > 1 flows in pays
//    (flows from this sender) Be (distinct senders); the larger of the two applies. Senders and
//    receivers are nodes (hosts), and messages inside a node take no penalty, as in SimGrid.
// The plan ends when its last rank does. Events due within overhead / 20 of each other happen
// together, at the latest of their times (late, never early). Deterministic: the same plan and
// options give the same time, bit for bit.
// The code: the event loop and the flows in ir/network_sim.cpp, each rank's posting and completions
// in ir/posting_protocol.h, the rates in ir/max_min_sharing.h, the IB penalties in ir/ib_penalties.h.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/network_options.h"
#include "ir/plan.h"
#include "ir/topology.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace commfit {

// The executor's default coalescing limit (exec::Options::coalesce; test_network_sim checks that
// the two agree): the pieces of one phase to one peer travel as one MPI message when they total at
// most this many bytes; otherwise they are packed in order into messages of less than this many
// bytes, and a piece too large for one is its own message.
inline constexpr Bytes kCoalesceBytes = 65536;

// The coalescing rule, the one the executor packs by and the cost model counts by: `bytes` are one
// peer's pieces of one phase in posting order. All of them go as one message when they total at
// most `limit`. Otherwise the pieces below `limit` are packed in that order into messages of less
// than `limit` bytes, and each piece of `limit` bytes or more goes alone, after them: with the
// default limit the packed messages stay below the eager limit and the large ones follow, so no
// small message comes after a large one of the same peer and tag (SimGrid 3.32 SMPI lets such an
// eager message be matched first; docs/EXECUTOR.md "Coalescing"). Sets message[i] to the message
// piece i travels in, numbered in sending order (message.size() == bytes.size()), and returns the
// number of messages.
std::size_t coalesce_pieces(std::span<const Bytes> bytes, Bytes limit, std::span<std::uint32_t> message);

// A message, as the executor sends it with its default options: the pieces one rank sends to one
// other rank in one phase, as the MPI transfers they coalesce into (above)
// (the verifier's rule 4 counts one per phase and pair either way). In rank order, each rank's in
// step (phase) order.
struct PlanMessage {
  Phase phase;
  Rank from, to;
  Bytes bytes;
};
std::vector<PlanMessage> plan_messages(const Plan& plan);

// A plan as the cost model reads it, gathered one rank schedule at a time so that the pipeline
// need not hold a large plan (planner/pipeline.h): its messages as the executor sends them (the
// list plan_messages gives), each rank's request window, the largest message of each phase, and
// each rank's messages and bytes out and in. A message here is all pieces one rank sends another
// in one phase (a run of send steps); `messages` splits it as the executor does (above). The list
// is dropped once it holds more than kSimulationMessages messages (a plan too large to simulate)
// unless `keep_messages` says the estimates need it (a topology with links routes each one).
class PlanTraffic {
 public:
  PlanTraffic(Rank ranks, Phase phases, bool keep_messages);
  // A whole plan's.
  explicit PlanTraffic(const Plan& plan, bool keep_messages = true);

  // The rank schedules in rank order.
  void add(const RankSchedule& rs);

  Rank ranks() const { return ranks_; }
  Phase phases() const { return phases_; }
  // Empty once dropped (messages_dropped()).
  const std::vector<PlanMessage>& messages() const { return messages_; }
  bool messages_dropped() const { return dropped_; }
  const std::vector<std::uint32_t>& max_outstanding() const { return max_outstanding_; }   // per rank, its request window
  // Per rank: 1 when its schedule lists its posting order (its messages of each phase are then
  // in that order in `messages`), 0 when it posts rotated.
  const std::vector<std::uint8_t>& listed_order() const { return listed_order_; }
  const std::vector<Bytes>& phase_max() const { return phase_max_; }      // per phase, its largest message
  // Per rank: messages sent and received (runs of one phase and peer) and their bytes.
  const std::vector<std::int64_t>& runs_out() const { return runs_out_; }
  const std::vector<std::int64_t>& runs_in() const { return runs_in_; }
  const std::vector<Bytes>& bytes_out() const { return bytes_out_; }
  const std::vector<Bytes>& bytes_in() const { return bytes_in_; }
  Bytes sent_bytes() const { return sent_; }

 private:
  Rank ranks_;
  Phase phases_;
  bool keep_;
  bool dropped_ = false;
  std::vector<PlanMessage> messages_;
  std::vector<std::uint32_t> max_outstanding_;
  std::vector<std::uint8_t> listed_order_;
  std::vector<Bytes> phase_max_, bytes_out_, bytes_in_;
  std::vector<std::int64_t> runs_out_, runs_in_;
  Bytes sent_ = 0;
};

struct SimResult {
  double seconds = 0;
  // False when the plan was too large to simulate (more than kSimulationMessages messages, or the
  // work limit reached); the caller then prices it analytically (never below the bound).
  bool simulated = false;
};

// Work units (flow x resource visits, 16 per event) one simulation may spend before giving up:
// about a second here. Plans of more messages than kSimulationMessages are not simulated at all
// (a million messages take about 3 s: more than the rest of the pipeline).
inline constexpr std::uint64_t kSimulationWork = std::uint64_t{400} << 20;
inline constexpr std::size_t kSimulationMessages = std::size_t{1} << 18;

// tau and bandwidth as in CostOptions (ir/cost_model.h).
SimResult simulate_plan(const Plan& plan, double tau_s, double bandwidth_Bps, const NetworkOptions& net, const Topology& topo,
                        std::uint64_t work_limit = kSimulationWork);
SimResult simulate_plan(const PlanTraffic& traffic, double tau_s, double bandwidth_Bps, const NetworkOptions& net, const Topology& topo,
                        std::uint64_t work_limit = kSimulationWork);

// The overhead the simulation uses: net.overhead_s, or tau / 4 when unset, never above tau / 2.
double sim_overhead_s(double tau_s, const NetworkOptions& net);

}  // namespace commfit
