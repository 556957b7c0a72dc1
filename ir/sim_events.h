// The network simulation's event queue (ir/network_sim.cpp). Its two parts post to it: the posting
// protocols (ir/posting_protocol.h) start messages and schedule the work of a rank's CPU, and the
// event loop follows each message from its latency to its transfer. Events due at the same time
// come out in the order they were pushed, so a plan's time is the same on every run.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace commfit {

enum class SimEvent : std::uint8_t {
  message_start,      // a message may go (eager: its send is posted; rendezvous: both sides are):
                      // its latency starts. id: the message
  transfer_start,     // its latency is over: its bytes start to flow. id: the message
  eager_processed,    // its receiver has processed an eager message. id: the message
  eager_sends_posted, // a rank without a request window has posted its phase's sends; its eager
                      // ones complete. id: the rank
};

class SimEventQueue {
 public:
  struct Entry {
    double t;
    std::uint64_t seq;   // push order: ties are broken the same way every run
    SimEvent kind;
    std::uint32_t id;
    friend bool operator>(const Entry& a, const Entry& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  };

  void push(double t, SimEvent kind, std::uint32_t id) { heap_.push({t, seq_++, kind, id}); }
  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.top(); }
  void pop() { heap_.pop(); }

 private:
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace commfit
