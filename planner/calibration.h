// Fitting the network model to measurements (commfit-calibrate, runtime/calibrate.cpp, measures;
// this fits, without MPI, so that tests can feed it the model's own times): ping-pong times to a
// start-up time, a bandwidth and an eager limit; concurrent flows into one receiver and out of one
// sender to the InfiniBand penalty factors, by simulating the same experiments (ir/network_sim.h)
// and keeping the factors whose times are nearest the measured ones.
#pragma once

#include "ir/network_options.h"
#include "ir/topology.h"
#include "ir/types.h"

#include <optional>
#include <span>
#include <vector>

namespace commfit {

// One message size of a ping-pong: half the round trip, the median over blocks.
struct PingPong {
  Bytes bytes = 0;
  double one_way_s = 0;
};

// t(bytes) = start_s + bytes / bandwidth_Bps over some sizes; `error` is the largest relative
// difference between the line and a measured time.
struct LineFit {
  double start_s = 0;
  double bandwidth_Bps = 0;
  double error = 0;
};

// The least-squares line through the points, each weighted by 1 / its time (relative errors).
// Needs two sizes or more; a slope <= 0 (times that do not grow) gives bandwidth +inf.
LineFit fit_line(std::span<const PingPong> points);

// A ping-pong curve as the model reads it: messages below `eager_limit` (eager) take
// `small.start_s` + bytes / `small.bandwidth_Bps`, larger ones (rendezvous) `large`'s. The break
// is where two lines (each over two sizes or more) fit best; when no break halves the one line's
// error, there is none to see (eager_limit unset) and `small` and `large` are that one line.
struct PingPongFit {
  LineFit small, large;
  std::optional<Bytes> eager_limit;
  double error = 0;   // the larger of the two lines' errors
};
PingPongFit fit_ping_pong(std::span<const PingPong> points);

// Routes of different lengths (a topology's links between two ranks): the small message's one-way
// time to nodes `links` away. The least-squares line one_way = base_s + links x link_latency_s,
// when the points have two lengths or more (else nullopt); `error` as LineFit's. A slope below 0
// (noise on routes of equal cost) gives link_latency_s 0.
struct RouteSample {
  int links = 0;
  double one_way_s = 0;
};
struct RouteFit {
  double base_s = 0;
  double link_latency_s = 0;
  double error = 0;
};
std::optional<RouteFit> fit_route_latency(std::span<const RouteSample> samples);

// The window bound of a flow's rate (NetworkOptions::window_bytes: rate <= window / (2 x route
// latency)) from a large message's one-way time `one_way_s` of `bytes` over a route of latency
// `route_latency_s` that starts in `start_s`: the rate that route reaches, when it is clearly
// (over 5 %) below `bandwidth_Bps`, times twice the route's latency; else nullopt (no bound seen).
std::optional<double> fit_window(Bytes bytes, double one_way_s, double start_s, double route_latency_s, double bandwidth_Bps);

// Two flows of `bytes` at once into one node over one last link of `bandwidth_Bps`, from nodes
// `near_links` and `far_links` links away: when the first arrives, with messages that start in
// base_s + links x link_latency_s and each flow's rate at most window / (2 x its route's latency)
// (window 0: no bound), the link shared equally (max-min) or in proportion to 1 / route latency
// (`by_route`: SimGrid's RTT weighting, NetworkOptions::rtt_weight_bytes 0; any weight gives the
// same shares when every link of both routes has the same bandwidth). `penalty` divides each
// flow's bound (the bandwidth, or the window's): under the InfiniBand model two flows into one node
// from two senders pay 2 Be each (ir/ib_penalties.h).
struct SharedLink {
  double base_s = 0;
  double link_latency_s = 0;
  double bandwidth_Bps = 0;
  double window_bytes = 0;
  double penalty = 1;
};
double first_arrival_s(Bytes bytes, int near_links, int far_links, const SharedLink& link, bool by_route);

// Concurrent flows, every end a node of its own, and the time from the start until the last byte
// arrived: k flows of `bytes` into one receiver (incast); k out of one sender (outcast); k senders
// each sending `bytes` to one hot receiver and k x `bytes` to a receiver of its own (hot: while the
// hot receiver has more than two flows in, each sender's two flows out pay the InfiniBand model's
// 2 Bs ys, which slows the larger flow that ends the trial).
enum class FlowKind { incast, outcast, hot };
const char* to_string(FlowKind k);

struct FlowTrial {
  int flows = 1;
  FlowKind kind = FlowKind::incast;
  Bytes bytes = 0;
  double seconds = 0;
};

// Nodes a trial needs besides the centre: k, or 2k for hot.
int trial_ends(const FlowTrial& t);

// Where the trials ran: the rank of each trial node (node 0 the centre; the senders or receivers
// 1..k; hot's own receivers k+1..2k) among `ranks` ranks on `topology`. Empty `rank_of`: the
// trial's nodes alone, ranks 0..ends on a crossbar.
struct TrialPlace {
  std::vector<Rank> rank_of;
  Rank ranks = 0;
  Topology topology;
};

// The model's time for a trial: every message posted at once where it ran, priced by
// simulate_plan with these figures.
double model_trial_s(const FlowTrial& t, const TrialPlace& place, double tau_s, double bandwidth_Bps, const NetworkOptions& net);

// The model's largest relative error over the trials (0 when there are none).
double model_error(std::span<const FlowTrial> trials, const TrialPlace& place, double tau_s, double bandwidth_Bps,
                   const NetworkOptions& net);

// The InfiniBand penalty factors (network ib) whose simulated trials are nearest the measured
// ones (the least sum of absolute log ratios, over a grid and then refined), and their error. Be and
// Bs are fitted, ys kept at net.ib's: the hot trial shows only the product Bs ys, and a factor
// whose penalty never binds (Be or Bs below 1 in incast and outcast: the fair share is lower)
// keeps net.ib's value (put back, it changes the fit's cost by under 0.1 %).
struct IbFit {
  IbFactors factors;
  double error = 0;
};
IbFit fit_ib_factors(std::span<const FlowTrial> trials, const TrialPlace& place, double tau_s, double bandwidth_Bps,
                     const NetworkOptions& net);

}  // namespace commfit
