#include "ir/posting_protocol.h"

#include "ir/error.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

namespace commfit {

PostingProtocols::PostingProtocols(std::span<const PlanMessage> messages, std::vector<std::uint32_t> max_outstanding,
                                   const std::vector<std::uint8_t>& listed_order, double overhead_s, Bytes eager_limit,
                                   SimEventQueue& events)
    : messages_(messages), max_outstanding_(std::move(max_outstanding)), overhead_s_(overhead_s), eager_limit_(eager_limit),
      events_(events) {
  const std::size_t p = max_outstanding_.size(), n = messages_.size();
  const Rank ranks = static_cast<Rank>(p);
  rank_messages_.resize(p);
  for (std::uint32_t id = 0; id < n; ++id) {
    const PlanMessage& m = messages_[id];
    rank_messages_[m.from].sends.push_back(id);
    rank_messages_[m.from].send_phase.push_back(m.phase);
  }
  // Posting all, a rank sends a phase's messages rotated, as the executor does
  // (backends/exec/load.cpp): to the ranks above it first, ascending, then wrapping around. A
  // rank that lists its posting order keeps its messages' order (PlanTraffic put them in it).
  for (Rank r = 0; r < ranks; ++r) {
    if (max_outstanding_[r] > 0 || listed_order[static_cast<std::size_t>(r)]) continue;
    RankMessages& l = rank_messages_[r];
    for (std::size_t k = 0; k < l.sends.size();) {
      std::size_t end = k;
      while (end < l.sends.size() && l.send_phase[end] == l.send_phase[k]) ++end;
      std::stable_partition(l.sends.begin() + static_cast<std::ptrdiff_t>(k), l.sends.begin() + static_cast<std::ptrdiff_t>(end),
                            [&](std::uint32_t id) { return messages_[id].to > r; });
      k = end;
    }
  }
  // Receives: by phase, then sender (a stable sort of the ids by phase).
  std::vector<std::uint32_t> by_phase(n);
  for (std::uint32_t id = 0; id < n; ++id) by_phase[id] = id;
  std::stable_sort(by_phase.begin(), by_phase.end(), [&](std::uint32_t a, std::uint32_t b) {
    return messages_[a].phase != messages_[b].phase ? messages_[a].phase < messages_[b].phase : messages_[a].from < messages_[b].from;
  });
  for (std::uint32_t id : by_phase) {
    rank_messages_[messages_[id].to].receives.push_back(id);
    rank_messages_[messages_[id].to].receive_phase.push_back(messages_[id].phase);
  }
  send_posted_at_.assign(n, -1);
  eager_arrived_at_.assign(n, -1);
  receive_posted_.assign(n, 0);
  receiver_waiting_.assign(n, 0);
  next_send_.assign(p, 0);
  next_receive_.assign(p, 0);
  phase_.assign(p, 0);
  in_phase_.assign(p, false);
  unfinished_.assign(p, 0);
  cpu_free_at_.assign(p, 0);
  finished_at_.assign(p, 0);
  eager_sends_.assign(p, 0);
  request_order_.assign(p, {});
  next_to_post_.assign(p, 0);
  in_flight_.assign(p, 0);
}

void PostingProtocols::start() {
  for (Rank r = 0; r < static_cast<Rank>(max_outstanding_.size()); ++r) enter_next_phase(r, 0.0);
  enter_next_phases();
}

// Rank r has finished its phase (or starts): move to its next phase with messages.
void PostingProtocols::enter_next_phase(Rank r, double t) {
  const RankMessages& l = rank_messages_[r];
  finished_at_[r] = std::max(finished_at_[r], t);
  const std::size_t s = next_send_[r], v = next_receive_[r];
  if (s == l.sends.size() && v == l.receives.size()) {
    in_phase_[r] = false;
    return;
  }
  const Phase next = std::min(s < l.sends.size() ? l.send_phase[s] : ~Phase{0}, v < l.receives.size() ? l.receive_phase[v] : ~Phase{0});
  phase_[r] = next;
  in_phase_[r] = true;
  if (max_outstanding_[r] > 0) return start_request_window_phase(r, t, next);
  post_all(r, t, next);
}

// Without a request window: the phase's receives are posted first (free), then the sends,
// `overhead` each.
void PostingProtocols::post_all(Rank r, double t, Phase phase) {
  const RankMessages& l = rank_messages_[r];
  std::size_t& s = next_send_[r];
  std::size_t& v = next_receive_[r];
  std::size_t sends = 0, eager_sends = 0;
  double post = t;
  for (; s < l.sends.size() && l.send_phase[s] == phase; ++s, ++sends) {
    const std::uint32_t id = l.sends[s];
    post += overhead_s_;
    send_posted_at_[id] = post;
    if (eager(id)) {
      ++eager_sends;
      events_.push(post, SimEvent::message_start, id);
    } else if (receiver_waiting_[id]) {   // its receiver already waits in this phase
      events_.push(post, SimEvent::message_start, id);
    }
  }
  cpu_free_at_[r] = post;
  eager_sends_[r] = eager_sends;
  std::size_t receives = 0;
  std::vector<std::uint32_t> buffered;
  for (; v < l.receives.size() && l.receive_phase[v] == phase; ++v, ++receives) {
    const std::uint32_t id = l.receives[v];
    receive_posted_[id] = 1;
    if (eager(id)) {
      if (eager_arrived_at_[id] >= 0) buffered.push_back(id);
    } else if (send_posted_at_[id] >= 0) {
      events_.push(std::max(send_posted_at_[id], t), SimEvent::message_start, id);   // the sender posted first: go now
    } else {
      receiver_waiting_[id] = 1;   // the send starts when it is posted
    }
  }
  unfinished_[r] = sends + receives;
  if (eager_sends > 0) events_.push(post, SimEvent::eager_sends_posted, static_cast<std::uint32_t>(r));
  // Eager messages that arrived before this phase: completed in arrival order.
  std::sort(buffered.begin(), buffered.end(), [&](std::uint32_t a, std::uint32_t b) {
    return eager_arrived_at_[a] != eager_arrived_at_[b] ? eager_arrived_at_[a] < eager_arrived_at_[b] : a < b;
  });
  for (std::uint32_t id : buffered) process_eager(id);
  if (unfinished_[r] == 0) phase_complete_.push_back(r);
}

// With a request window: the phase's sends and receives sorted by rank pair, then posted as the
// window allows.
void PostingProtocols::start_request_window_phase(Rank r, double t, Phase phase) {
  const RankMessages& l = rank_messages_[r];
  std::size_t& s = next_send_[r];
  std::size_t& v = next_receive_[r];
  std::vector<std::uint32_t>& order = request_order_[r];
  order.clear();
  for (; s < l.sends.size() && l.send_phase[s] == phase; ++s) order.push_back(l.sends[s]);
  for (; v < l.receives.size() && l.receive_phase[v] == phase; ++v) order.push_back(l.receives[v]);
  auto key = [&](std::uint32_t id) {
    const PlanMessage& m = messages_[id];
    const Rank peer = m.from == r ? m.to : m.from;
    return std::make_tuple(std::min(r, peer), std::max(r, peer), m.from);
  };
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  unfinished_[r] = order.size();
  eager_sends_[r] = 0;
  next_to_post_[r] = 0;
  in_flight_[r] = 0;
  cpu_free_at_[r] = std::max(cpu_free_at_[r], t);
  post_within_request_window(r);
  if (unfinished_[r] == 0) phase_complete_.push_back(r);
}

// Posts rank r's next requests while fewer than its window are in flight.
void PostingProtocols::post_within_request_window(Rank r) {
  const std::vector<std::uint32_t>& order = request_order_[r];
  std::size_t& next = next_to_post_[r];
  while (next < order.size() && in_flight_[r] < max_outstanding_[r]) {
    const std::uint32_t id = order[next++];
    if (messages_[id].from == r) {
      cpu_free_at_[r] += overhead_s_;
      send_posted_at_[id] = cpu_free_at_[r];
      if (eager(id)) {
        events_.push(cpu_free_at_[r], SimEvent::message_start, id);
        finished_at_[r] = std::max(finished_at_[r], cpu_free_at_[r]);
        --unfinished_[r];   // done as posted; the caller sees a count of 0
        continue;
      }
      ++in_flight_[r];
      if (receiver_waiting_[id]) events_.push(cpu_free_at_[r], SimEvent::message_start, id);
    } else {
      ++in_flight_[r];
      receive_posted_[id] = 1;
      if (eager(id)) {
        if (eager_arrived_at_[id] >= 0) process_eager(id);
      } else if (send_posted_at_[id] >= 0) {
        events_.push(std::max(send_posted_at_[id], cpu_free_at_[r]), SimEvent::message_start, id);
      } else {
        receiver_waiting_[id] = 1;
      }
    }
  }
}

// An eager message that has arrived and whose receive is posted. Posting all, the receiver
// processes it next on its CPU, paying `overhead`; under a window it completes now, and its
// overhead is paid when the rank reaps it (request_done).
void PostingProtocols::process_eager(std::uint32_t id) {
  const Rank d = messages_[id].to;
  if (max_outstanding_[d] > 0) {
    events_.push(std::max(cpu_free_at_[d], eager_arrived_at_[id]), SimEvent::eager_processed, id);
    return;
  }
  cpu_free_at_[d] = std::max(cpu_free_at_[d], eager_arrived_at_[id]) + overhead_s_;
  events_.push(cpu_free_at_[d], SimEvent::eager_processed, id);
}

// One of rank r's requests completed at t. Under a window the rank reaps it in its MPI_Waitany
// (or final MPI_Waitall) once it is done posting, paying then the receive overhead of an eager
// message (`reap_overhead_s`, SMPI's smpi/or), and posts the next ones.
void PostingProtocols::request_done(Rank r, double t, double reap_overhead_s) {
  if (max_outstanding_[r] > 0) {
    cpu_free_at_[r] = std::max(cpu_free_at_[r], t) + reap_overhead_s;
    t = cpu_free_at_[r];
    --in_flight_[r];
    post_within_request_window(r);   // eager sends it posts are done at once; this request still counts in unfinished_
  }
  complete(r, t);
}

void PostingProtocols::complete(Rank r, double t, std::size_t requests) {
  finished_at_[r] = std::max(finished_at_[r], t);
  unfinished_[r] -= requests;
  if (unfinished_[r] == 0) phase_complete_.push_back(r);
}

void PostingProtocols::arrived(std::uint32_t message, double t) {
  const PlanMessage& m = messages_[message];
  if (!eager(message)) {
    request_done(m.from, t);
    request_done(m.to, t);
    return;
  }
  eager_arrived_at_[message] = t;
  if (receive_posted_[message]) process_eager(message);
}

void PostingProtocols::eager_processed(std::uint32_t message, double t) {
  const Rank d = messages_[message].to;
  request_done(d, t, max_outstanding_[d] > 0 ? overhead_s_ : 0.0);
}

void PostingProtocols::eager_sends_posted(Rank r, double t) { complete(r, t, eager_sends_[r]); }

void PostingProtocols::enter_next_phases() {
  while (!phase_complete_.empty()) {
    const Rank r = phase_complete_.back();
    phase_complete_.pop_back();
    enter_next_phase(r, finished_at_[r]);
  }
}

double PostingProtocols::end_s() const {
  for (Rank r = 0; r < static_cast<Rank>(in_phase_.size()); ++r)
    if (in_phase_[r]) internal_error("simulate_plan", "rank " + std::to_string(r) + " never finishes phase " + std::to_string(phase_[r]));
  double end = 0;
  for (double f : finished_at_) end = std::max(end, f);
  return end;
}

}  // namespace commfit
