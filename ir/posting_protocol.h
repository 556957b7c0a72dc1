// Each rank's side of the network simulation (ir/network_sim.h): what a rank posts next and when,
// as backends/exec replays a plan, and when its requests complete. A rank works through its
// phases in order with no barrier: it enters phase k + 1 once its own requests of phase k are
// complete. Per rank, one of two posting protocols, as the executor chooses by the rank's
// schedule:
//  - post all (no request window): the phase's receives are posted first (free), then its sends,
//    `overhead` each, one after another (SMPI's smpi/ois), rotated as backends/exec/load.cpp
//    orders them: to the ranks above the rank first, ascending, then wrapping around; or, where
//    the rank's schedule lists a posting order (RankSchedule::send_order), in that order. Its eager
//    sends complete together once the last send is posted; an eager message received costs the
//    receiver `overhead` when it processes it (SMPI's smpi/or);
//  - request window (max_outstanding k > 0, backends/exec's run_phase_window): the phase's sends
//    and receives in one global order of rank pairs (lower rank, higher rank, sender first), at
//    most k in flight. Completions are reaped one at a time once the rank is done posting (an
//    eager receive's overhead paid then), each followed by the next posts; an eager send completes
//    as it is posted (its data is buffered) and holds no place in the window.
// Under both, MPI's point-to-point handshake: an eager message (bytes < eager_limit) leaves when
// its send is posted and waits, buffered, for its receive; a rendezvous message leaves once both
// its send and its receive are posted and completes on both sides when it arrives.
//
// The event loop (ir/network_sim.cpp) owns the event queue and moves the bytes. The protocols push
// to the queue the messages that may start and the work of a rank's CPU; the loop calls them back
// when a message arrives and when one of their CPU events comes due. They see nothing else of it.
#pragma once

#include "ir/network_sim.h"
#include "ir/sim_events.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace commfit {

class PostingProtocols {
 public:
  // The messages (ids are positions in `messages`, which must outlive this), each rank's request
  // window (0: post all) and whether it lists its posting order (1: its messages of a phase are
  // posted in their order in `messages`; 0: rotated); the overhead of posting a send or
  // processing an eager receive, and the eager limit. Events go to `events`.
  PostingProtocols(std::span<const PlanMessage> messages, std::vector<std::uint32_t> max_outstanding,
                   const std::vector<std::uint8_t>& listed_order, double overhead_s, Bytes eager_limit, SimEventQueue& events);

  // Every rank enters its first phase at time 0.
  void start();
  // The loop's calls: a message's last byte arrived at t; an event of the protocols came due at t
  // (SimEvent::eager_processed, SimEvent::eager_sends_posted).
  void arrived(std::uint32_t message, double t);
  void eager_processed(std::uint32_t message, double t);
  void eager_sends_posted(Rank r, double t);
  // The ranks whose phase completed since the last call enter their next phase; the loop calls
  // this once it has handled the events of an instant.
  void enter_next_phases();
  // When the last rank is done. Every rank must have finished its last phase (an internal error
  // otherwise: the loop ran out of events with a rank still waiting).
  double end_s() const;

 private:
  // A rank's messages, grouped by phase ascending: its sends in the order it posts them without a
  // request window, its receives by sender.
  struct RankMessages {
    std::vector<std::uint32_t> sends, receives;
    std::vector<Phase> send_phase, receive_phase;
  };

  bool eager(std::uint32_t id) const { return messages_[id].bytes < eager_limit_; }
  void enter_next_phase(Rank r, double t);
  void post_all(Rank r, double t, Phase phase);
  void start_request_window_phase(Rank r, double t, Phase phase);
  void post_within_request_window(Rank r);
  void process_eager(std::uint32_t id);
  void request_done(Rank r, double t, double reap_overhead_s = 0);
  void complete(Rank r, double t, std::size_t requests = 1);

  std::span<const PlanMessage> messages_;
  std::vector<std::uint32_t> max_outstanding_;   // per rank: its request window, 0 to post all
  double overhead_s_;
  Bytes eager_limit_;
  SimEventQueue& events_;
  std::vector<RankMessages> rank_messages_;

  // Per message: when its send was posted (-1 before), when it arrived if eager (-1 before), and
  // whether its receive is posted; a rendezvous message's receiver waiting for the send.
  std::vector<double> send_posted_at_, eager_arrived_at_;
  std::vector<std::uint8_t> receive_posted_, receiver_waiting_;

  // Per rank: its next send and receive of a phase not yet entered (positions in rank_messages_),
  // its phase and whether it is in one, the phase's requests not yet complete, when its CPU is next
  // free, and when it last completed a request (when it is done, at the end).
  std::vector<std::size_t> next_send_, next_receive_;
  std::vector<Phase> phase_;
  std::vector<bool> in_phase_;
  std::vector<std::size_t> unfinished_;
  std::vector<double> cpu_free_at_, finished_at_;
  // Posting all: the phase's eager sends, complete at once when the last send is posted.
  std::vector<std::size_t> eager_sends_;
  // A request window: the phase's messages in posting order, the next to post, and the requests in
  // flight.
  std::vector<std::vector<std::uint32_t>> request_order_;
  std::vector<std::size_t> next_to_post_, in_flight_;

  std::vector<Rank> phase_complete_;   // ranks to enter their next phase
};

}  // namespace commfit
