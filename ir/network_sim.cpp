// The network simulation (ir/network_sim.h): the event loop and each rank's posting protocol
// (the executor's rotated order, the request window). Its max-min sharing solver
// (ir/max_min_sharing.h) and InfiniBand penalties (ir/ib_penalties.h) are files of their own; the
// loop and the protocols stay together because every event a protocol posts is one the loop
// orders, and splitting them would expose the loop's state.
#include "ir/network_sim.h"

#include "ir/error.h"
#include "ir/ib_penalties.h"
#include "ir/max_min_sharing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace commfit {

double sim_overhead_s(double tau_s, const NetworkOptions& net) {
  return std::min(net.overhead_s < 0 ? tau_s / 4 : net.overhead_s, tau_s / 2);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Message = PlanMessage;

// A rank's messages of each of its phases: CSR over the rank's sends (in step order) and receives.
struct RankLists {
  std::vector<std::uint32_t> out, in;   // message ids, grouped by phase ascending
  std::vector<Phase> out_phase, in_phase;
};

enum class Ev : std::uint8_t { start, bandwidth, processed, posted, finish };   // finish: finishes_ only

struct Event {
  double t;
  std::uint64_t seq;   // insertion order: ties are broken the same way every run
  Ev kind;
  std::uint32_t id;    // a message, or a rank for `posted`
  friend bool operator>(const Event& a, const Event& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
};

class Simulation {
 public:
  Simulation(const PlanTraffic& plan, double tau, double bandwidth, const NetworkOptions& net, const Topology& topo, std::uint64_t work_limit)
      : topo_(topo), bw_(bandwidth), net_(net), work_limit_(work_limit) {
    o_ = sim_overhead_s(tau, net);
    window_ = o_ / 20;
    lat_ = std::max(0.0, tau - 2 * o_);
    intra_lat_ = std::max(0.0, net.intra_latency_s);
    intra_bw_ = net.intra_bandwidth_Bps > 0 ? net.intra_bandwidth_Bps : bandwidth;
    per_node_ = topo.ranks_per_node();
    p_ = plan.ranks();
    collect(plan);
  }

  SimResult run() {
    if (too_large_) return {0, false};
    for (Rank r = 0; r < p_; ++r) enter_next_phase(r, 0.0);
    drain_ready();
    while (!events_.empty() || active_count_ > 0) {
      if (work_ > work_limit_) return {0, false};
      if (dirty_) share();
      // The next thing to happen: an event, or the first active flow to finish.
      while (!finishes_.empty() && finishes_.top().seq != finish_version_[finishes_.top().id]) finishes_.pop();
      const double first = std::min(events_.empty() ? kInf : events_.top().t, finishes_.empty() ? kInf : finishes_.top().t);
      // Everything due within the batching window happens at once, at the latest of its times:
      // late by less than the window, never early (the estimate stays above the exact one).
      const double horizon = first + window_ + 1e-15 + 1e-12 * first;
      now_ = first;
      // Flows done, in id order, then the events of this instant.
      done_.clear();
      while (!finishes_.empty() && finishes_.top().t <= horizon) {
        const Event e = finishes_.top();
        finishes_.pop();
        if (e.seq == finish_version_[e.id]) {
          done_.push_back(e.id);
          now_ = std::max(now_, e.t);
        }
      }
      std::sort(done_.begin(), done_.end());
      for (std::uint32_t f : done_) {
        remaining_[f] = 0;
        --active_count_;
        arrive(f, now_);
      }
      while (!events_.empty() && events_.top().t <= horizon) {
        const Event e = events_.top();
        events_.pop();
        now_ = std::max(now_, e.t);
        handle(e, now_);
        work_ += 16;
      }
      drain_ready();
    }
    for (Rank r = 0; r < p_; ++r)
      if (in_phase_[r]) internal_error("simulate_plan", "rank " + std::to_string(r) + " never finishes phase " + std::to_string(phase_[r]));
    double end = 0;
    for (double f : finish_) end = std::max(end, f);
    return {end, true};
  }

 private:
  void collect(const PlanTraffic& plan) {
    lists_.resize(static_cast<std::size_t>(p_));
    if (plan.messages_dropped() || plan.messages().size() > kSimulationMessages) {   // not simulated: build nothing for it
      too_large_ = true;
      return;
    }
    msgs_ = plan.messages();
    win_ = plan.max_outstanding();
    wops_.assign(static_cast<std::size_t>(p_), {});
    wcur_.assign(static_cast<std::size_t>(p_), 0);
    wfly_.assign(static_cast<std::size_t>(p_), 0);
    for (std::uint32_t id = 0; id < msgs_.size(); ++id) {
      const Message& m = msgs_[id];
      lists_[m.from].out.push_back(id);
      lists_[m.from].out_phase.push_back(m.phase);
    }
    // A rank without a request window posts a phase's sends rotated, as the executor does
    // (backends/exec/load.cpp): to the ranks above it first, ascending, then wrapping around.
    for (Rank r = 0; r < p_; ++r) {
      if (win_[r] > 0) continue;
      RankLists& l = lists_[r];
      for (std::size_t k = 0; k < l.out.size();) {
        std::size_t end = k;
        while (end < l.out.size() && l.out_phase[end] == l.out_phase[k]) ++end;
        std::stable_partition(l.out.begin() + static_cast<std::ptrdiff_t>(k), l.out.begin() + static_cast<std::ptrdiff_t>(end),
                              [&](std::uint32_t id) { return msgs_[id].to > r; });
        k = end;
      }
    }
    // Receives: by phase, then sender (a stable sort of the ids by phase).
    std::vector<std::uint32_t> by_phase(msgs_.size());
    for (std::uint32_t id = 0; id < msgs_.size(); ++id) by_phase[id] = id;
    std::stable_sort(by_phase.begin(), by_phase.end(), [&](std::uint32_t a, std::uint32_t b) {
      return msgs_[a].phase != msgs_[b].phase ? msgs_[a].phase < msgs_[b].phase : msgs_[a].from < msgs_[b].from;
    });
    for (std::uint32_t id : by_phase) {
      lists_[msgs_[id].to].in.push_back(id);
      lists_[msgs_[id].to].in_phase.push_back(msgs_[id].phase);
    }
    const std::size_t n = msgs_.size(), p = static_cast<std::size_t>(p_);
    remaining_.assign(n, 0);
    routes_.assign(n, {});
    moving_.assign(n, 0);
    stamp_.assign(n, 0);
    new_rate_.assign(n, 0);
    finish_version_.assign(n, 0);
    flow_seen_.assign(n, 0);
    rate_.assign(n, 0);
    posted_at_.assign(n, -1);
    arrived_at_.assign(n, -1);
    recv_posted_.assign(n, 0);
    bound_.assign(n, bw_);
    base_bound_.assign(n, bw_);
    penalty_.assign(n, 1.0);
    out_cursor_.assign(p, 0);
    in_cursor_.assign(p, 0);
    phase_.assign(p, 0);
    in_phase_.assign(p, false);
    pending_.assign(p, 0);
    cpu_.assign(p, 0);
    finish_.assign(p, 0);
    eager_out_.assign(p, 0);
    // Indexed by node (a node map may number hosts beyond p).
    const std::size_t nodes = static_cast<std::size_t>(topo_.node_slots(p_));
    ib_.reset(nodes, net_.ib);
    resources_ = 2 * static_cast<std::int64_t>(p) + (topo_.kind() == Topology::Kind::full ? 0 : topo_.link_count());
    res_users_.assign(static_cast<std::size_t>(resources_), {});
    std::vector<double> capacity(static_cast<std::size_t>(resources_));
    for (std::int32_t q = 0; q < resources_; ++q) capacity[static_cast<std::size_t>(q)] = this->capacity(q);
    sharing_.reset(std::move(capacity));
  }

  bool eager(std::uint32_t id) const { return msgs_[id].bytes < net_.eager_limit; }

  // The node (host) of a rank: its port on the crossbar, its IB node; a rank itself with one rank
  // per node.
  Node node(Rank r) const { return per_node_ > 1 ? topo_.node_of(r) : Node{r}; }
  // True for a message between two ranks of one node: it uses no port and no link.
  bool local(std::uint32_t id) const { return per_node_ > 1 && node(msgs_[id].from) == node(msgs_[id].to); }

  void push(double t, Ev kind, std::uint32_t id) { events_.push({t, seq_++, kind, id}); }

  // Rank r has finished its phase (or starts): move to its next phase with messages.
  void enter_next_phase(Rank r, double t) {
    RankLists& l = lists_[r];
    finish_[r] = std::max(finish_[r], t);
    std::size_t& oc = out_cursor_[r];
    std::size_t& ic = in_cursor_[r];
    if (oc == l.out.size() && ic == l.in.size()) {
      in_phase_[r] = false;
      return;
    }
    const Phase next = std::min(oc < l.out.size() ? l.out_phase[oc] : ~Phase{0}, ic < l.in.size() ? l.in_phase[ic] : ~Phase{0});
    phase_[r] = next;
    in_phase_[r] = true;
    if (win_[r] > 0) return enter_window_phase(r, t, next);
    // Receives are posted first (free), then the sends, `overhead` each.
    std::size_t sends = 0, eager_sends = 0;
    double post = t;
    for (; oc < l.out.size() && l.out_phase[oc] == next; ++oc, ++sends) {
      const std::uint32_t id = l.out[oc];
      post += o_;
      posted_at_[id] = post;
      if (eager(id)) {
        ++eager_sends;
        push(post, Ev::start, id);
      } else if (arrived_at_[id] == -2) {   // its receiver already waits in this phase
        push(post, Ev::start, id);
      }
    }
    cpu_[r] = post;
    eager_out_[r] = eager_sends;
    std::size_t recvs = 0;
    std::vector<std::uint32_t> buffered;
    for (; ic < l.in.size() && l.in_phase[ic] == next; ++ic, ++recvs) {
      const std::uint32_t id = l.in[ic];
      recv_posted_[id] = 1;
      if (eager(id)) {
        if (arrived_at_[id] >= 0) buffered.push_back(id);
      } else if (posted_at_[id] >= 0) {
        push(std::max(posted_at_[id], t), Ev::start, id);   // the sender posted first: go now
      } else {
        arrived_at_[id] = -2;   // receive posted: the send starts when it is posted
      }
    }
    pending_[r] = sends + recvs;
    if (eager_sends > 0) push(post, Ev::posted, static_cast<std::uint32_t>(r));
    // Eager messages that arrived before this phase: completed in arrival order.
    std::sort(buffered.begin(), buffered.end(), [&](std::uint32_t a, std::uint32_t b) {
      return arrived_at_[a] != arrived_at_[b] ? arrived_at_[a] < arrived_at_[b] : a < b;
    });
    for (std::uint32_t id : buffered) process_eager(id);
    if (pending_[r] == 0) ready_.push_back(r);
  }

  void process_eager(std::uint32_t id) {
    const Rank d = msgs_[id].to;
    if (win_[d] > 0) {   // complete now; its overhead is paid when the rank reaps it (request_done)
      push(std::max(cpu_[d], arrived_at_[id]), Ev::processed, id);
      return;
    }
    cpu_[d] = std::max(cpu_[d], arrived_at_[id]) + o_;
    push(cpu_[d], Ev::processed, id);
  }

  // A rank with a request window (the plan's max_outstanding, as backends/exec's
  // run_phase_window): its phase's sends and receives in one global order of rank pairs (lower
  // rank, higher rank, sender first), at most win_ of them in flight; each completion posts the
  // next. An eager send completes as it is posted (the data is buffered), so it holds no slot.
  void enter_window_phase(Rank r, double t, Phase next) {
    RankLists& l = lists_[r];
    std::size_t& oc = out_cursor_[r];
    std::size_t& ic = in_cursor_[r];
    std::vector<std::uint32_t>& ops = wops_[r];
    ops.clear();
    for (; oc < l.out.size() && l.out_phase[oc] == next; ++oc) ops.push_back(l.out[oc]);
    for (; ic < l.in.size() && l.in_phase[ic] == next; ++ic) ops.push_back(l.in[ic]);
    auto key = [&](std::uint32_t id) {
      const Message& m = msgs_[id];
      const Rank peer = m.from == r ? m.to : m.from;
      return std::make_tuple(std::min(r, peer), std::max(r, peer), m.from);
    };
    std::sort(ops.begin(), ops.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    pending_[r] = ops.size();
    eager_out_[r] = 0;
    wcur_[r] = 0;
    wfly_[r] = 0;
    cpu_[r] = std::max(cpu_[r], t);
    post_window(r);
    if (pending_[r] == 0) ready_.push_back(r);
  }

  void post_window(Rank r) {
    const std::vector<std::uint32_t>& ops = wops_[r];
    std::size_t& cur = wcur_[r];
    while (cur < ops.size() && wfly_[r] < win_[r]) {
      const std::uint32_t id = ops[cur++];
      if (msgs_[id].from == r) {
        cpu_[r] += o_;
        posted_at_[id] = cpu_[r];
        if (eager(id)) {
          push(cpu_[r], Ev::start, id);
          finish_[r] = std::max(finish_[r], cpu_[r]);
          --pending_[r];   // done as posted; the caller sees a pending count of 0
          continue;
        }
        ++wfly_[r];
        if (arrived_at_[id] == -2) push(cpu_[r], Ev::start, id);
      } else {
        ++wfly_[r];
        recv_posted_[id] = 1;
        if (eager(id)) {
          if (arrived_at_[id] >= 0) process_eager(id);
        } else if (posted_at_[id] >= 0) {
          push(std::max(posted_at_[id], cpu_[r]), Ev::start, id);
        } else {
          arrived_at_[id] = -2;
        }
      }
    }
  }

  // One of rank r's requests completed at t. Under a window the rank reaps it in its
  // MPI_Waitany (or final MPI_Waitall) once it is done posting, paying then the receive overhead
  // of an eager message (`charge`, SMPI's smpi/or), and posts the next ones.
  void request_done(Rank r, double t, double charge = 0) {
    if (win_[r] > 0) {
      cpu_[r] = std::max(cpu_[r], t) + charge;
      t = cpu_[r];
      --wfly_[r];
      post_window(r);   // eager sends it posts are done at once; this request still counts in pending_
    }
    complete_item(r, t);
  }

  void complete_item(Rank r, double t, std::size_t n = 1) {
    finish_[r] = std::max(finish_[r], t);
    pending_[r] -= n;
    if (pending_[r] == 0) ready_.push_back(r);
  }

  void drain_ready() {
    while (!ready_.empty()) {
      const Rank r = ready_.back();
      ready_.pop_back();
      enter_next_phase(r, finish_[r]);
    }
  }

  void arrive(std::uint32_t id, double t) {
    const Message& m = msgs_[id];
    if (moving_[id]) {   // it had bytes to move: it leaves its resources
      moving_[id] = 0;
      for (std::int32_t q : routes_[id]) {
        std::erase(res_users_[q], id);
        seeds_.push_back(q);
      }
      dirty_ = true;
      std::vector<std::int32_t>().swap(routes_[id]);
    }
    if (net_.model == Network::ib && !local(id)) ib_remove(id);
    if (!eager(id)) {
      request_done(m.from, t);
      request_done(m.to, t);
      return;
    }
    arrived_at_[id] = t;
    if (recv_posted_[id]) process_eager(id);
  }

  void handle(const Event& e, double t) {
    switch (e.kind) {
      case Ev::posted:
        complete_item(static_cast<Rank>(e.id), t, eager_out_[e.id]);
        break;
      case Ev::start: {
        // Its latency and its own rate bound (the TCP window over the round trip, as CM02's
        // TCP-gamma / (2 latency)), then the IB penalties divide that bound.
        // A message inside a node takes the node's shared memory (SimGrid's loopback link).
        const bool here = local(e.id);
        double lat = here ? intra_lat_ : lat_;
        if (!here && net_.link_latency_s >= 0 && topo_.kind() != Topology::Kind::full)
          lat = net_.link_latency_s * static_cast<double>(route_of(e.id).size());
        const double bw = here ? intra_bw_ : bw_;
        base_bound_[e.id] = net_.window_bytes > 0 && lat > 0 ? std::min(bw, net_.window_bytes / (2 * lat)) : bw;
        bound_[e.id] = base_bound_[e.id];
        if (net_.rtt_weight_bytes >= 0 && topo_.kind() != Topology::Kind::full) {
          double penalty = lat;
          for (std::int32_t q : route_of(e.id)) penalty += net_.rtt_weight_bytes / capacity(q);
          if (penalty > 0) penalty_[e.id] = penalty;
        }
        if (net_.model == Network::ib && !local(e.id)) ib_add(e.id);
        push(t + lat, Ev::bandwidth, e.id);
        break;
      }
      case Ev::bandwidth: {
        remaining_[e.id] = static_cast<double>(msgs_[e.id].bytes);
        if (msgs_[e.id].bytes == 0) {
          arrive(e.id, t);
        } else {
          ++active_count_;
          moving_[e.id] = 1;
          stamp_[e.id] = t;
          rate_[e.id] = 0;
          for (std::int32_t q : route_of(e.id)) res_users_[q].push_back(e.id);
          seed(e.id);
          dirty_ = true;
        }
        break;
      }
      case Ev::processed:
        request_done(msgs_[e.id].to, t, win_[msgs_[e.id].to] > 0 ? o_ : 0.0);
        break;
      case Ev::finish:   // finishes_ holds these; the event queue never does
        break;
    }
  }

  // network ib (ir/ib_penalties.h): a flow counts from its start (its latency included) to its
  // arrival; a bound its penalty changes reseeds the sharing of a moving flow.
  void ib_add(std::uint32_t id) {
    ib_.add(id, node(msgs_[id].from), node(msgs_[id].to));
    dirty_ = true;
  }
  void ib_remove(std::uint32_t id) {
    ib_.remove(id, node(msgs_[id].from), node(msgs_[id].to));
    dirty_ = true;
  }

  // The resources a flow uses, once per flow: on the crossbar its sender's injection port and its
  // receiver's ejection port; on a topology the links of its route, which start and end at the
  // nodes themselves (a fat tree's host links; a torus node's links to its neighbours, as in
  // SimGrid's clusters: a node of a torus can receive on all its links at once).
  const std::vector<std::int32_t>& route_of(std::uint32_t f) {
    std::vector<std::int32_t>& res = routes_[f];
    if (!res.empty()) return res;
    const Message& m = msgs_[f];
    if (local(f)) return res;
    if (topo_.kind() == Topology::Kind::full) {
      res.push_back(node(m.from).value());   // a node's ports: injection n, ejection p + n
      res.push_back(p_ + node(m.to).value());
      return res;
    }
    topo_.route(m.from, m.to, links_);
    for (Link l : links_) res.push_back(static_cast<std::int32_t>(2 * static_cast<std::int64_t>(p_) + l.value()));
    return res;
  }

  // A flow entered or left the network, or its bound changed: the rates of the flows it shares a
  // resource with, transitively, must be recomputed (max-min fairness decomposes over the
  // connected components of flows and resources; the others keep their rates).
  void seed(std::uint32_t f) {
    for (std::int32_t q : route_of(f)) seeds_.push_back(q);
    if (routes_[f].empty()) lonely_.push_back(f);   // ranks of one node: no resource, only its bound
    dirty_ = true;
  }

  // comp_: the active flows connected to the seeds. False when there are none.
  bool component() {
    comp_.clear();
    if (res_seen_.size() != static_cast<std::size_t>(resources_)) res_seen_.assign(static_cast<std::size_t>(resources_), 0);
    ++res_epoch_;
    std::vector<std::int32_t>& queue = seeds_;
    for (std::size_t k = 0; k < queue.size(); ++k) {
      const std::int32_t q = queue[k];
      if (res_seen_[q] == res_epoch_) continue;
      res_seen_[q] = res_epoch_;
      for (std::uint32_t f : res_users_[q]) {
        if (flow_seen_[f] == res_epoch_) continue;
        flow_seen_[f] = res_epoch_;
        comp_.push_back(f);
        for (std::int32_t r : routes_[f])
          if (res_seen_[r] != res_epoch_) queue.push_back(r);
      }
    }
    work_ += queue.size();
    queue.clear();   // comp_ is in the order of the seeds: the same every run
    return !comp_.empty();
  }

  // The rates of the flows the latest changes reach: the IB bounds refreshed, the connected
  // flows gathered, their max-min fair rates solved (ir/max_min_sharing.h), and each changed rate
  // applied to the bytes it has left.
  void share() {
    dirty_ = false;
    if (ib_.pending()) {
      bound_changed_.clear();
      work_ += ib_.refresh(base_bound_, bound_, bound_changed_);
      for (std::uint32_t c : bound_changed_)
        if (moving_[c]) seed(c);
    }
    component();
    for (std::uint32_t f : lonely_)
      if (moving_[f] && flow_seen_[f] != res_epoch_) {
        flow_seen_[f] = res_epoch_;
        comp_.push_back(f);
      }
    lonely_.clear();
    if (comp_.empty()) return;
    for (std::uint32_t f : comp_) route_of(f);   // computed once per flow, for the solver
    work_ += sharing_.solve(comp_, routes_, bound_, penalty_, new_rate_);
    // A flow whose every resource ran dry still moves (rounding): the smallest positive rate.
    for (std::uint32_t f : comp_) {
      const double r = std::max(new_rate_[f], bw_ * 1e-12);
      if (r == rate_[f]) continue;
      remaining_[f] = std::max(0.0, remaining_[f] - rate_[f] * (now_ - stamp_[f]));
      stamp_[f] = now_;
      rate_[f] = r;
      finishes_.push({now_ + remaining_[f] / r, ++finish_version_[f], Ev::finish, f});
    }
  }

  // A resource's capacity: a rank's port, or a link (a bundle of width cables).
  double capacity(std::int32_t q) const {
    return q < 2 * p_ ? bw_ : bw_ * topo_.link_width(Link{q - 2 * static_cast<std::int64_t>(p_)});
  }

  const Topology& topo_;
  double bw_, o_ = 0, lat_ = 0, intra_lat_ = 0, intra_bw_ = 0;
  Rank per_node_ = 1;
  NetworkOptions net_;
  std::uint64_t work_limit_, work_ = 0;
  Rank p_ = 0;
  std::vector<Message> msgs_;
  std::vector<RankLists> lists_;
  std::vector<double> remaining_, rate_, posted_at_, arrived_at_, bound_, base_bound_;
  std::vector<double> penalty_;   // a flow's sharing penalty (SimGrid's): 1 without RTT weighting
  std::vector<std::uint8_t> recv_posted_;
  // Request windows (the plan's max_outstanding): per rank its phase's ops in posting order, the
  // next to post, and the requests in flight.
  std::vector<std::uint32_t> win_;
  std::vector<std::vector<std::uint32_t>> wops_;
  std::vector<std::size_t> wcur_, wfly_;
  std::vector<std::size_t> out_cursor_, in_cursor_, pending_, eager_out_;
  std::vector<Phase> phase_;
  std::vector<bool> in_phase_;
  std::vector<double> cpu_, finish_;
  std::size_t active_count_ = 0;                 // flows moving bytes
  std::vector<double> stamp_, new_rate_;          // when remaining_ was last brought up to date
  std::vector<std::uint64_t> finish_version_;     // a finish entry is valid while it matches
  std::priority_queue<Event, std::vector<Event>, std::greater<>> finishes_;
  std::vector<std::uint32_t> done_;
  double now_ = 0;
  double window_ = 0;   // batching window (ir/network_sim.h)
  IbPenalties ib_;   // network ib
  std::vector<std::uint32_t> bound_changed_;
  std::vector<Rank> ready_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  bool dirty_ = false;
  bool too_large_ = false;   // more than kSimulationMessages messages: collect() stopped
  std::int64_t resources_ = 0;
  MaxMinSharing sharing_;
  std::vector<Link> links_;
  std::vector<std::vector<std::int32_t>> routes_;
  std::vector<std::vector<std::uint32_t>> res_users_;   // active flows of each resource
  std::vector<std::int32_t> seeds_;
  std::vector<std::uint32_t> lonely_;    // moving flows that use no resource
  std::vector<std::uint8_t> moving_;     // between the end of its latency and its arrival
  std::vector<std::uint32_t> comp_;
  std::vector<std::uint64_t> res_seen_, flow_seen_;
  std::uint64_t res_epoch_ = 0;
};

}  // namespace

std::vector<PlanMessage> plan_messages(const Plan& plan) { return PlanTraffic(plan).messages(); }

PlanTraffic::PlanTraffic(Rank ranks, Phase phases, bool keep_messages)
    : ranks_(ranks), phases_(phases), keep_(keep_messages), max_outstanding_(static_cast<std::size_t>(ranks), 0), phase_max_(phases, 0),
      bytes_out_(static_cast<std::size_t>(ranks), 0), bytes_in_(static_cast<std::size_t>(ranks), 0), runs_out_(static_cast<std::size_t>(ranks), 0),
      runs_in_(static_cast<std::size_t>(ranks), 0) {}

PlanTraffic::PlanTraffic(const Plan& plan, bool keep_messages)
    : PlanTraffic(static_cast<Rank>(plan.ranks.size()), plan.manifest.phases, keep_messages) {
  for (const RankSchedule& rs : plan.ranks) add(rs);
}

void PlanTraffic::add(const RankSchedule& r) {
  commfit_assert(r.rank >= 0 && r.rank < ranks_, "PlanTraffic", "a rank schedule of another plan");
  max_outstanding_[r.rank] = r.max_outstanding;
  const std::size_t n = r.steps.size();
  // A receive: a message in when it starts a run of receives of one phase and peer.
  auto received = [&](std::size_t k) {
    const Step& x = r.steps[k];
    const Step* before = k > 0 ? &r.steps[k - 1] : nullptr;
    if (!before || before->op != Op::recv || before->phase != x.phase || before->peer != x.peer) ++runs_in_[r.rank];
    bytes_in_[r.rank] += x.bytes;
  };
  // A run of sends with the same phase and peer: one message when it coalesces, else its pieces.
  for (std::size_t k = 0; k < n;) {
    const Step& s = r.steps[k];
    if (s.op != Op::send) {
      if (s.op == Op::recv) received(k);
      ++k;
      continue;
    }
    std::size_t end = k + 1, pieces = 1;
    Bytes total = s.bytes;
    for (; end < n && (r.steps[end].op != Op::send || (r.steps[end].phase == s.phase && r.steps[end].peer == s.peer)); ++end) {
      if (r.steps[end].op == Op::send) total += r.steps[end].bytes, ++pieces;
      else if (r.steps[end].op == Op::recv) received(end);
    }
    ++runs_out_[r.rank];
    bytes_out_[r.rank] += total;
    sent_ += total;
    if (s.phase < phases_) phase_max_[s.phase] = std::max(phase_max_[s.phase], total);
    if (!dropped_) {
      if (pieces == 1 || total <= kCoalesceBytes) {
        messages_.push_back({s.phase, r.rank, s.peer, total});
      } else {
        for (std::size_t i = k; i < end; ++i)
          if (r.steps[i].op == Op::send) messages_.push_back({s.phase, r.rank, s.peer, r.steps[i].bytes});
      }
      if (!keep_ && messages_.size() > kSimulationMessages) {   // too many to simulate, and nothing else reads them
        dropped_ = true;
        std::vector<PlanMessage>().swap(messages_);
      }
    }
    k = end;
  }
}

SimResult simulate_plan(const PlanTraffic& traffic, double tau_s, double bandwidth_Bps, const NetworkOptions& net, const Topology& topo,
                        std::uint64_t work_limit) {
  Simulation sim(traffic, tau_s, bandwidth_Bps, net, topo, work_limit);
  return sim.run();
}

SimResult simulate_plan(const Plan& plan, double tau_s, double bandwidth_Bps, const NetworkOptions& net, const Topology& topo,
                        std::uint64_t work_limit) {
  return simulate_plan(PlanTraffic(plan, false), tau_s, bandwidth_Bps, net, topo, work_limit);
}

}  // namespace commfit
