// The network simulation (ir/network_sim.h): the event loop, which follows each message through
// its latency and its transfer and moves the bytes of the flows at the rates max-min fair sharing
// gives them. What each rank posts and when, and when its requests complete, are its posting
// protocols (ir/posting_protocol.h); the rates come from the sharing solver
// (ir/max_min_sharing.h), with network ib the flows' bounds from SimGrid's InfiniBand penalties
// (ir/ib_penalties.h). The loop and the protocols meet at the event queue (ir/sim_events.h): the
// protocols push the messages that may start, and the loop tells them when one arrives. Below
// it, PlanTraffic: a plan's messages as the executor sends them.
#include "ir/network_sim.h"

#include "ir/error.h"
#include "ir/ib_penalties.h"
#include "ir/max_min_sharing.h"
#include "ir/posting_protocol.h"
#include "ir/sim_events.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>

namespace commfit {

double sim_overhead_s(double tau_s, const NetworkOptions& net) {
  return std::min(net.overhead_s < 0 ? tau_s / 4 : net.overhead_s, tau_s / 2);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// When a moving flow will have sent its last byte at its present rate. A flow whose rate changes
// gets a new entry and a new version; the older ones are stale and skipped.
struct FlowFinish {
  double t;
  std::uint64_t version;
  std::uint32_t flow;
  friend bool operator>(const FlowFinish& a, const FlowFinish& b) { return a.t != b.t ? a.t > b.t : a.version > b.version; }
};

// The finish times, earliest first. Under the IB model a flow's rate changes at nearly every event
// of its node, so stale entries pile up far beyond the moving flows; drop_stale removes them.
// Flows finishing in one instant are handled in id order, so the heap's layout never shows.
class FinishQueue : public std::priority_queue<FlowFinish, std::vector<FlowFinish>, std::greater<>> {
 public:
  // Keeps the entries whose version is their flow's present one.
  void drop_stale(const std::vector<std::uint64_t>& version) {
    std::erase_if(c, [&](const FlowFinish& e) { return e.version != version[e.flow]; });
    std::make_heap(c.begin(), c.end(), comp);
  }
};

class Simulation {
 public:
  Simulation(const PlanTraffic& plan, double tau, double bandwidth, const NetworkOptions& net, const Topology& topo, std::uint64_t work_limit)
      : topo_(topo), bandwidth_(bandwidth), net_(net), work_limit_(work_limit) {
    const double overhead = sim_overhead_s(tau, net);
    batch_interval_ = overhead / 20;
    latency_ = std::max(0.0, tau - 2 * overhead);
    intra_latency_ = std::max(0.0, net.intra_latency_s);
    intra_bandwidth_ = net.intra_bandwidth_Bps > 0 ? net.intra_bandwidth_Bps : bandwidth;
    ranks_per_node_ = topo.ranks_per_node();
    ranks_ = plan.ranks();
    if (plan.messages_dropped() || plan.messages().size() > kSimulationMessages) return;   // not simulated: build nothing for it
    messages_ = plan.messages();
    protocols_.emplace(messages_, plan.max_outstanding(), plan.listed_order(), overhead, net.eager_limit, events_);
    collect();
  }

  SimResult run() {
    if (!protocols_) return {0, false};
    protocols_->start();
    while (!events_.empty() || moving_flows_ > 0) {
      if (work_ > work_limit_) return {0, false};
      if (rates_stale_) share();
      // The next thing to happen: an event, or the first moving flow to finish.
      while (!flow_finishes_.empty() && flow_finishes_.top().version != finish_version_[flow_finishes_.top().flow]) flow_finishes_.pop();
      const double first =
          std::min(events_.empty() ? kInf : events_.top().t, flow_finishes_.empty() ? kInf : flow_finishes_.top().t);
      // Everything due within the batch interval happens at once, at the latest of its times:
      // late by less than the interval, never early (the estimate stays above the exact one).
      const double horizon = first + batch_interval_ + 1e-15 + 1e-12 * first;
      now_ = first;
      // Flows done, in id order, then the events of this instant.
      finished_.clear();
      while (!flow_finishes_.empty() && flow_finishes_.top().t <= horizon) {
        const FlowFinish e = flow_finishes_.top();
        flow_finishes_.pop();
        if (e.version == finish_version_[e.flow]) {
          finished_.push_back(e.flow);
          now_ = std::max(now_, e.t);
        }
      }
      std::sort(finished_.begin(), finished_.end());
      for (std::uint32_t f : finished_) {
        bytes_left_[f] = 0;
        --moving_flows_;
        arrive(f, now_);
      }
      while (!events_.empty() && events_.top().t <= horizon) {
        const SimEventQueue::Entry e = events_.top();
        events_.pop();
        now_ = std::max(now_, e.t);
        handle(e, now_);
        work_ += 16;
      }
      protocols_->enter_next_phases();
    }
    return {protocols_->end_s(), true};
  }

 private:
  // The network's side of every message: its route, rate and bytes left.
  void collect() {
    const std::size_t n = messages_.size(), p = static_cast<std::size_t>(ranks_);
    bytes_left_.assign(n, 0);
    flow_resources_.assign(n, {});
    moving_.assign(n, 0);
    bytes_left_at_.assign(n, 0);
    solved_rate_.assign(n, 0);
    finish_version_.assign(n, 0);
    flow_visited_.assign(n, 0);
    rate_.assign(n, 0);
    bound_.assign(n, bandwidth_);
    bound_before_ib_.assign(n, bandwidth_);
    sharing_penalty_.assign(n, 1.0);
    // Indexed by node (a node map may number hosts beyond p).
    const std::size_t nodes = static_cast<std::size_t>(topo_.node_slots(ranks_));
    ib_.reset(nodes, net_.ib);
    resource_count_ = 2 * static_cast<std::int64_t>(p) + (topo_.kind() == Topology::Kind::full ? 0 : topo_.link_count());
    // Oversubscribed nodes (more ranks than cores): their messages inside share one more resource
    // each, the node's cores, numbered after the ports and links.
    shared_cores_.assign(nodes, 0);
    if (net_.cores_per_node > 0 && ranks_per_node_ > 1) {
      std::vector<std::int64_t> held(nodes, 0);
      for (Rank r = 0; r < ranks_; ++r) ++held[static_cast<std::size_t>(node(r).value())];
      cores_base_ = resource_count_;
      for (std::size_t v = 0; v < nodes; ++v) shared_cores_[v] = held[v] > static_cast<std::int64_t>(net_.cores_per_node);
      resource_count_ += static_cast<std::int64_t>(nodes);
    }
    resource_flows_.assign(static_cast<std::size_t>(resource_count_), {});
    std::vector<double> capacity(static_cast<std::size_t>(resource_count_));
    for (std::int32_t q = 0; q < resource_count_; ++q) capacity[static_cast<std::size_t>(q)] = this->capacity(q);
    sharing_.reset(std::move(capacity));
  }

  // The node (host) of a rank: its port on the crossbar, its IB node; a rank itself with one rank
  // per node.
  Node node(Rank r) const { return ranks_per_node_ > 1 ? topo_.node_of(r) : Node{r}; }
  // True for a message between two ranks of one node: it uses no port and no link.
  bool local(std::uint32_t id) const { return ranks_per_node_ > 1 && node(messages_[id].from) == node(messages_[id].to); }

  // Message `id` has arrived at t: it leaves the network, and its ranks complete it.
  void arrive(std::uint32_t id, double t) {
    if (moving_[id]) {   // it had bytes to move: it leaves its resources
      moving_[id] = 0;
      for (std::int32_t q : flow_resources_[id]) {
        std::erase(resource_flows_[q], id);
        changed_resources_.push_back(q);
      }
      rates_stale_ = true;
      std::vector<std::int32_t>().swap(flow_resources_[id]);
    }
    if (net_.model == Network::ib && !local(id)) ib_remove(id);
    protocols_->arrived(id, t);
  }

  void handle(const SimEventQueue::Entry& e, double t) {
    switch (e.kind) {
      case SimEvent::eager_sends_posted:
        protocols_->eager_sends_posted(static_cast<Rank>(e.id), t);
        break;
      case SimEvent::message_start: {
        // Its latency and its own rate bound (the TCP window over the round trip, as CM02's
        // TCP-gamma / (2 latency)), then the IB penalties divide that bound.
        // A message inside a node takes the node's shared memory (SimGrid's loopback link).
        const bool here = local(e.id);
        double lat = here ? intra_latency_ : latency_;
        if (!here && net_.link_latency_s >= 0 && topo_.kind() != Topology::Kind::full)
          lat = net_.link_latency_s * static_cast<double>(resources_of(e.id).size());
        const double handshake = messages_[e.id].bytes >= net_.eager_limit ? std::max(0.0, net_.rendezvous_s) : 0;
        const double bw = here ? intra_bandwidth_ : bandwidth_;
        bound_before_ib_[e.id] = net_.window_bytes > 0 && lat > 0 ? std::min(bw, net_.window_bytes / (2 * lat)) : bw;
        bound_[e.id] = bound_before_ib_[e.id];
        if (net_.rtt_weight_bytes >= 0 && topo_.kind() != Topology::Kind::full) {
          double penalty = lat;
          for (std::int32_t q : resources_of(e.id)) penalty += net_.rtt_weight_bytes / capacity(q);
          if (penalty > 0) sharing_penalty_[e.id] = penalty;
        }
        if (net_.model == Network::ib && !local(e.id)) ib_add(e.id);
        events_.push(t + lat + handshake, SimEvent::transfer_start, e.id);
        break;
      }
      case SimEvent::transfer_start: {
        bytes_left_[e.id] = static_cast<double>(messages_[e.id].bytes);
        if (messages_[e.id].bytes == 0) {
          arrive(e.id, t);
        } else {
          ++moving_flows_;
          moving_[e.id] = 1;
          bytes_left_at_[e.id] = t;
          rate_[e.id] = 0;
          for (std::int32_t q : resources_of(e.id)) resource_flows_[q].push_back(e.id);
          changed(e.id);
          rates_stale_ = true;
        }
        break;
      }
      case SimEvent::eager_processed:
        protocols_->eager_processed(e.id, t);
        break;
    }
  }

  // network ib (ir/ib_penalties.h): a flow counts from its start (its latency included) to its
  // arrival; a bound its penalty changes reseeds the sharing of a moving flow.
  void ib_add(std::uint32_t id) {
    ib_.add(id, node(messages_[id].from), node(messages_[id].to));
    rates_stale_ = true;
  }
  void ib_remove(std::uint32_t id) {
    ib_.remove(id, node(messages_[id].from), node(messages_[id].to));
    rates_stale_ = true;
  }

  // The resources a flow uses, once per flow: on the crossbar its sender's injection port and its
  // receiver's ejection port; on a topology the links of its route, which start and end at the
  // nodes themselves (a fat tree's host links; a torus node's links to its neighbours, as in
  // SimGrid's clusters: a node of a torus can receive on all its links at once).
  const std::vector<std::int32_t>& resources_of(std::uint32_t f) {
    std::vector<std::int32_t>& res = flow_resources_[f];
    if (!res.empty()) return res;
    const PlanMessage& m = messages_[f];
    if (local(f)) {   // the node's cores when they are shared, else nothing
      const auto v = static_cast<std::size_t>(node(m.from).value());
      if (shared_cores_[v]) res.push_back(static_cast<std::int32_t>(cores_base_ + static_cast<std::int64_t>(v)));
      return res;
    }
    if (topo_.kind() == Topology::Kind::full) {
      res.push_back(node(m.from).value());   // a node's ports: injection n, ejection p + n
      res.push_back(ranks_ + node(m.to).value());
      return res;
    }
    topo_.route(m.from, m.to, route_links_);
    for (Link l : route_links_) res.push_back(static_cast<std::int32_t>(2 * static_cast<std::int64_t>(ranks_) + l.value()));
    return res;
  }

  // A flow entered or left the network, or its bound changed: the rates of the flows it shares a
  // resource with, transitively, must be recomputed (max-min fairness decomposes over the
  // connected components of flows and resources; the others keep their rates).
  void changed(std::uint32_t f) {
    for (std::int32_t q : resources_of(f)) changed_resources_.push_back(q);
    if (flow_resources_[f].empty()) changed_without_resources_.push_back(f);   // ranks of one node: no resource, only its bound
    rates_stale_ = true;
  }

  // affected_: the moving flows connected to the changed resources. False when there are none.
  bool gather_affected() {
    affected_.clear();
    if (resource_visited_.size() != static_cast<std::size_t>(resource_count_))
      resource_visited_.assign(static_cast<std::size_t>(resource_count_), 0);
    ++visit_epoch_;
    std::vector<std::int32_t>& queue = changed_resources_;
    for (std::size_t k = 0; k < queue.size(); ++k) {
      const std::int32_t q = queue[k];
      if (resource_visited_[q] == visit_epoch_) continue;
      resource_visited_[q] = visit_epoch_;
      for (std::uint32_t f : resource_flows_[q]) {
        if (flow_visited_[f] == visit_epoch_) continue;
        flow_visited_[f] = visit_epoch_;
        affected_.push_back(f);
        for (std::int32_t r : flow_resources_[f])
          if (resource_visited_[r] != visit_epoch_) queue.push_back(r);
      }
    }
    work_ += queue.size();
    queue.clear();   // affected_ is in the order of the changed resources: the same every run
    return !affected_.empty();
  }

  // The rates of the flows the latest changes reach: the IB bounds refreshed, the connected
  // flows gathered, their max-min fair rates solved (ir/max_min_sharing.h), and each changed rate
  // applied to the bytes it has left.
  void share() {
    rates_stale_ = false;
    if (ib_.pending()) {
      ib_changed_.clear();
      work_ += ib_.refresh(bound_before_ib_, bound_, ib_changed_);
      for (std::uint32_t c : ib_changed_)
        if (moving_[c]) changed(c);
    }
    gather_affected();
    for (std::uint32_t f : changed_without_resources_)
      if (moving_[f] && flow_visited_[f] != visit_epoch_) {
        flow_visited_[f] = visit_epoch_;
        affected_.push_back(f);
      }
    changed_without_resources_.clear();
    if (affected_.empty()) return;
    for (std::uint32_t f : affected_) resources_of(f);   // computed once per flow, for the solver
    work_ += sharing_.solve(affected_, flow_resources_, bound_, sharing_penalty_, solved_rate_);
    // A flow whose every resource ran dry still moves (rounding): the smallest positive rate.
    for (std::uint32_t f : affected_) {
      const double r = std::max(solved_rate_[f], bandwidth_ * 1e-12);
      if (r == rate_[f]) continue;
      bytes_left_[f] = std::max(0.0, bytes_left_[f] - rate_[f] * (now_ - bytes_left_at_[f]));
      bytes_left_at_[f] = now_;
      rate_[f] = r;
      flow_finishes_.push({now_ + bytes_left_[f] / r, ++finish_version_[f], f});
    }
    if (flow_finishes_.size() > 2 * moving_flows_ + 4096) flow_finishes_.drop_stale(finish_version_);
  }

  // A resource's capacity: a rank's port, a link (a bundle of width cables), or an oversubscribed
  // node's cores.
  double capacity(std::int32_t q) const {
    if (cores_base_ >= 0 && q >= cores_base_) return static_cast<double>(net_.cores_per_node) * intra_bandwidth_;
    return q < 2 * ranks_ ? bandwidth_ : bandwidth_ * topo_.link_width(Link{q - 2 * static_cast<std::int64_t>(ranks_)});
  }

  // The machine and the plan's messages.
  const Topology& topo_;
  double bandwidth_, latency_ = 0, intra_latency_ = 0, intra_bandwidth_ = 0;
  Rank ranks_per_node_ = 1;
  NetworkOptions net_;
  // Per node: 1 when it holds more ranks than cores (NetworkOptions::cores_per_node); the first
  // such resource's number (-1: none).
  std::vector<std::uint8_t> shared_cores_;
  std::int64_t cores_base_ = -1;
  Rank ranks_ = 0;
  std::vector<PlanMessage> messages_;

  // The loop: its events, the ranks' posting protocols (absent when the plan is too large to
  // simulate), the time, and the work done against its limit. Events due within batch_interval_
  // of the first happen together.
  SimEventQueue events_;
  std::optional<PostingProtocols> protocols_;
  double now_ = 0;
  double batch_interval_ = 0;
  std::uint64_t work_limit_, work_ = 0;

  // Per flow (a message, from the end of its latency to its arrival): its resources, whether it
  // is moving bytes, its bytes left as of bytes_left_at_, its rate, its rate bound (that bound
  // before the IB penalties divide it), its sharing penalty (SimGrid's: 1 without RTT weighting),
  // and the version of its valid entry in flow_finishes_.
  std::vector<std::vector<std::int32_t>> flow_resources_;
  std::vector<std::uint8_t> moving_;
  std::vector<double> bytes_left_, bytes_left_at_, rate_, bound_, bound_before_ib_, sharing_penalty_;
  std::vector<std::uint64_t> finish_version_;
  std::size_t moving_flows_ = 0;
  FinishQueue flow_finishes_;
  std::vector<std::uint32_t> finished_;   // the flows that finish in this instant

  // The sharing: per resource its moving flows; what changed since the rates were last solved
  // (resources, and moving flows that use none), and then the flows it affects; the rates the
  // solver gives them.
  std::int64_t resource_count_ = 0;
  std::vector<std::vector<std::uint32_t>> resource_flows_;
  bool rates_stale_ = false;
  std::vector<std::int32_t> changed_resources_;
  std::vector<std::uint32_t> changed_without_resources_;
  std::vector<std::uint32_t> affected_;
  std::vector<std::uint64_t> resource_visited_, flow_visited_;   // == visit_epoch_: seen in this gathering
  std::uint64_t visit_epoch_ = 0;
  std::vector<double> solved_rate_;
  MaxMinSharing sharing_;
  IbPenalties ib_;   // network ib
  std::vector<std::uint32_t> ib_changed_;   // flows whose bound the IB penalties changed
  std::vector<Link> route_links_;           // scratch for a route
};

}  // namespace

std::vector<PlanMessage> plan_messages(const Plan& plan) { return PlanTraffic(plan).messages(); }

std::size_t coalesce_pieces(std::span<const Bytes> bytes, Bytes limit, std::span<std::uint32_t> message) {
  commfit_assert(message.size() == bytes.size() && limit > 0, "coalesce_pieces", "a message number for every piece, and a positive limit");
  Bytes all = 0;
  for (Bytes b : bytes) all += b;
  const Bytes most = all <= limit ? limit : limit - 1;   // the largest message packed
  std::uint32_t n = 0;
  Bytes packed = 0;
  bool open = false;   // message n has a piece
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] > most) continue;
    if (open && packed + bytes[i] > most) ++n, packed = 0;
    message[i] = n;
    packed += bytes[i], open = true;
  }
  if (open) ++n;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] > most) message[i] = n++;
  return n;
}

PlanTraffic::PlanTraffic(Rank ranks, Phase phases, bool keep_messages)
    : ranks_(ranks), phases_(phases), keep_(keep_messages), max_outstanding_(static_cast<std::size_t>(ranks), 0),
      listed_order_(static_cast<std::size_t>(ranks), 0), phase_max_(phases, 0),
      bytes_out_(static_cast<std::size_t>(ranks), 0), bytes_in_(static_cast<std::size_t>(ranks), 0), runs_out_(static_cast<std::size_t>(ranks), 0),
      runs_in_(static_cast<std::size_t>(ranks), 0) {}

PlanTraffic::PlanTraffic(const Plan& plan, bool keep_messages)
    : PlanTraffic(static_cast<Rank>(plan.ranks.size()), plan.manifest.phases, keep_messages) {
  for (const RankSchedule& rs : plan.ranks) add(rs);
}

void PlanTraffic::add(const RankSchedule& r) {
  commfit_assert(r.rank >= 0 && r.rank < ranks_, "PlanTraffic", "a rank schedule of another plan");
  max_outstanding_[r.rank] = r.max_outstanding;
  listed_order_[r.rank] = !r.send_order.empty();
  const std::size_t first = messages_.size(), n = r.steps.size();
  // A receive: a message in when it starts a run of receives of one phase and peer.
  auto received = [&](std::size_t k) {
    const Step& x = r.steps[k];
    const Step* before = k > 0 ? &r.steps[k - 1] : nullptr;
    if (!before || before->op != Op::recv || before->phase != x.phase || before->peer != x.peer) ++runs_in_[r.rank];
    bytes_in_[r.rank] += x.bytes;
  };
  // A run of sends with the same phase and peer: the messages its pieces coalesce into.
  std::vector<Bytes> sizes, totals;
  std::vector<std::uint32_t> message_of;
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
      if (pieces == 1) {
        messages_.push_back({s.phase, r.rank, s.peer, total});
      } else {
        sizes.clear();
        for (std::size_t i = k; i < end; ++i)
          if (r.steps[i].op == Op::send) sizes.push_back(r.steps[i].bytes);
        message_of.resize(sizes.size());
        totals.assign(coalesce_pieces(sizes, kCoalesceBytes, message_of), 0);
        for (std::size_t i = 0; i < sizes.size(); ++i) totals[message_of[i]] += sizes[i];
        for (Bytes b : totals) messages_.push_back({s.phase, r.rank, s.peer, b});
      }
      if (!keep_ && messages_.size() > kSimulationMessages) {   // too many to simulate, and nothing else reads them
        dropped_ = true;
        std::vector<PlanMessage>().swap(messages_);
      }
    }
    k = end;
  }
  // A listed posting order: each phase's messages in the order of their peers there (a peer's
  // pieces keep their order), as the executor posts them.
  if (!dropped_ && !r.send_order.empty()) {
    std::vector<std::pair<Rank, std::uint32_t>> position(r.send_order.size());
    for (std::size_t k = 0; k < r.send_order.size(); ++k) position[k] = {r.send_order[k], static_cast<std::uint32_t>(k)};
    std::sort(position.begin(), position.end());
    auto at = [&](Rank peer) { return std::lower_bound(position.begin(), position.end(), std::pair{peer, std::uint32_t{0}})->second; };
    std::stable_sort(messages_.begin() + static_cast<std::ptrdiff_t>(first), messages_.end(), [&](const PlanMessage& a, const PlanMessage& b) {
      return a.phase != b.phase ? a.phase < b.phase : at(a.to) < at(b.to);
    });
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
