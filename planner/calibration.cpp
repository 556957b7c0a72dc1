#include "planner/calibration.h"

#include "ir/comm_matrix.h"
#include "ir/error.h"
#include "ir/network_sim.h"
#include "planner/pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace commfit {

LineFit fit_line(std::span<const PingPong> points) {
  // Weighted least squares of t = a + b x with weights 1 / t^2: the relative errors.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const PingPong& p : points) {
    const double w = 1 / (p.one_way_s * p.one_way_s), x = static_cast<double>(p.bytes), y = p.one_way_s;
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double det = sw * sxx - sx * sx;
  LineFit f;
  const double slope = det > 0 ? (sw * sxy - sx * sy) / det : 0;
  f.start_s = det > 0 ? (sy - slope * sx) / sw : sy / sw;
  f.bandwidth_Bps = slope > 0 ? 1 / slope : std::numeric_limits<double>::infinity();
  for (const PingPong& p : points) {
    const double model = f.start_s + (slope > 0 ? static_cast<double>(p.bytes) * slope : 0);
    f.error = std::max(f.error, std::abs(model - p.one_way_s) / p.one_way_s);
  }
  return f;
}

PingPongFit fit_ping_pong(std::span<const PingPong> points) {
  std::vector<PingPong> sorted(points.begin(), points.end());
  std::sort(sorted.begin(), sorted.end(), [](const PingPong& a, const PingPong& b) { return a.bytes < b.bytes; });
  PingPongFit best;
  best.small = best.large = fit_line(sorted);
  best.error = best.small.error;
  const double one_line = best.error;
  const std::span<const PingPong> all(sorted);
  for (std::size_t k = 2; k + 2 <= sorted.size(); ++k) {
    const LineFit below = fit_line(all.first(k)), above = fit_line(all.subspan(k));
    const double error = std::max(below.error, above.error);
    if (error < best.error && error < one_line / 2) {
      best.small = below, best.large = above, best.error = error;
      best.eager_limit = sorted[k].bytes;   // the first size sent by rendezvous
    }
  }
  return best;
}

const char* to_string(FlowKind k) {
  switch (k) {
    case FlowKind::incast: return "incast";
    case FlowKind::outcast: return "outcast";
    case FlowKind::hot: return "hot";
  }
  return "?";
}

int trial_ends(const FlowTrial& t) { return t.kind == FlowKind::hot ? 2 * t.flows : t.flows; }

namespace {

// The trial's plan where it ran, every message posted at once.
Plan trial_plan(const FlowTrial& t, const TrialPlace& place) {
  const bool own = place.rank_of.empty();
  if (!own && static_cast<int>(place.rank_of.size()) < trial_ends(t) + 1)
    throw UsageError("a flow trial of " + std::to_string(trial_ends(t) + 1) + " nodes placed on " + std::to_string(place.rank_of.size()));
  auto at = [&](int node) { return own ? static_cast<Rank>(node) : place.rank_of[static_cast<std::size_t>(node)]; };
  std::vector<Message> messages;
  for (int r = 1; r <= t.flows; ++r) {
    if (t.kind == FlowKind::outcast) messages.push_back({at(0), at(r), t.bytes});
    else messages.push_back({at(r), at(0), t.bytes});
    if (t.kind == FlowKind::hot) messages.push_back({at(r), at(r + t.flows), t.bytes * static_cast<Bytes>(t.flows)});
  }
  std::sort(messages.begin(), messages.end(), [](const Message& a, const Message& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
  PlanOptions o;
  o.strategy = "async";
  if (!own) o.topology = place.topology;
  return make_plan(make_matrix(own ? trial_ends(t) + 1 : place.ranks, std::move(messages)), o);
}

const Topology& topology_of(const TrialPlace& place) {
  static const Topology full;
  return place.rank_of.empty() ? full : place.topology;
}

double relative_error(double model, double measured) { return std::abs(model - measured) / measured; }

}  // namespace

double model_trial_s(const FlowTrial& t, const TrialPlace& place, double tau_s, double bandwidth_Bps, const NetworkOptions& net) {
  return simulate_plan(trial_plan(t, place), tau_s, bandwidth_Bps, net, topology_of(place)).seconds;
}

double model_error(std::span<const FlowTrial> trials, const TrialPlace& place, double tau_s, double bandwidth_Bps,
                   const NetworkOptions& net) {
  double error = 0;
  for (const FlowTrial& t : trials) error = std::max(error, relative_error(model_trial_s(t, place, tau_s, bandwidth_Bps, net), t.seconds));
  return error;
}

IbFit fit_ib_factors(std::span<const FlowTrial> trials, const TrialPlace& place, double tau_s, double bandwidth_Bps,
                     const NetworkOptions& net) {
  std::vector<Plan> plans;
  for (const FlowTrial& t : trials) plans.push_back(trial_plan(t, place));
  NetworkOptions ib = net;
  ib.model = Network::ib;
  // The sum of the trials' absolute log ratios: a trial the model prices unlike the machine (on
  // SimGrid's torus, 32 flows into one node under a window bound: 17 % high with SimGrid's own
  // factors) would pull a least-squares fit off the factors that explain the others.
  auto cost = [&](const IbFactors& f) {
    ib.ib = f;
    double sum = 0;
    for (std::size_t k = 0; k < trials.size(); ++k) {
      const double r = std::log(simulate_plan(plans[k], tau_s, bandwidth_Bps, ib, topology_of(place)).seconds / trials[k].seconds);
      sum += std::abs(r);
    }
    return sum;
  };
  // Be and Bs over a grid of their plausible range (SimGrid's examples: 0.965, 0.925), then finer
  // grids around the best, each a quarter of the step before. ys applies only to a sender whose
  // receivers have more than two flows in, which neither trial has: it keeps SimGrid's value.
  IbFactors best = net.ib;
  double best_cost = cost(best);
  IbFactors centre{1.0, 1.0, net.ib.ys};
  double step = 0.1;
  int half = 8;
  for (int round = 0; round < 4; ++round) {
    for (int a = -half; a <= half; ++a)
      for (int b = -half; b <= half; ++b) {
        const IbFactors f{centre.be + a * step, centre.bs + b * step, centre.ys};
        if (f.be <= 0 || f.bs <= 0) continue;
        const double v = cost(f);
        if (v < best_cost) best_cost = v, best = f;
      }
    centre = best, step /= 4, half = 4;
  }
  // A factor the trials hardly see (its penalty never binds: the fair share is lower) keeps
  // net.ib's value rather than wherever the grid drifted: put back, it changes the fit by under
  // 0.1 % of its cost.
  for (double IbFactors::*factor : {&IbFactors::be, &IbFactors::bs}) {
    IbFactors kept = best;
    kept.*factor = net.ib.*factor;
    if (cost(kept) <= best_cost * 1.001 + 1e-12) best = kept;
  }
  ib.ib = best;
  return {best, model_error(trials, place, tau_s, bandwidth_Bps, ib)};
}

std::optional<RouteFit> fit_route_latency(std::span<const RouteSample> samples) {
  // Weighted least squares (weight 1 / t^2: relative errors), as fit_line.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  for (const RouteSample& r : samples) {
    if (!(r.one_way_s > 0)) continue;
    const double w = 1 / (r.one_way_s * r.one_way_s), x = r.links;
    sw += w, sx += w * x, sy += w * r.one_way_s, sxx += w * x * x, sxy += w * x * r.one_way_s;
    lo = std::min(lo, r.links), hi = std::max(hi, r.links);
  }
  if (lo >= hi) return std::nullopt;
  const double det = sw * sxx - sx * sx;
  RouteFit f;
  f.link_latency_s = std::max(0.0, (sw * sxy - sx * sy) / det);
  f.base_s = (sy - f.link_latency_s * sx) / sw;
  for (const RouteSample& r : samples)
    if (r.one_way_s > 0) f.error = std::max(f.error, std::abs(f.base_s + r.links * f.link_latency_s - r.one_way_s) / r.one_way_s);
  return f;
}

std::optional<double> fit_window(Bytes bytes, double one_way_s, double start_s, double route_latency_s, double bandwidth_Bps) {
  const double moving = one_way_s - start_s;
  if (bytes <= 0 || !(moving > 0) || !(route_latency_s > 0) || !(bandwidth_Bps > 0)) return std::nullopt;
  const double rate = static_cast<double>(bytes) / moving;
  if (rate >= 0.95 * bandwidth_Bps) return std::nullopt;
  return rate * 2 * route_latency_s;
}

double first_arrival_s(Bytes bytes, int near_links, int far_links, const SharedLink& link, bool by_route) {
  const double latency[2] = {near_links * link.link_latency_s, far_links * link.link_latency_s};
  double cap[2], weight[2], rate[2];
  for (int k = 0; k < 2; ++k) {
    const double bound = link.window_bytes > 0 && latency[k] > 0 ? std::min(link.bandwidth_Bps, link.window_bytes / (2 * latency[k])) : link.bandwidth_Bps;
    cap[k] = bound / std::max(1.0, link.penalty);
    weight[k] = by_route && latency[k] > 0 ? 1 / latency[k] : 1;
  }
  // Weighted max-min on the one link: a flow held below its share by its cap leaves the rest to
  // the other.
  for (int k = 0; k < 2; ++k) rate[k] = link.bandwidth_Bps * weight[k] / (weight[0] + weight[1]);
  for (int k = 0; k < 2; ++k)
    if (rate[k] > cap[k]) rate[k] = cap[k], rate[1 - k] = std::min(cap[1 - k], link.bandwidth_Bps - cap[k]);
  const double b = static_cast<double>(bytes);
  return std::min(link.base_s + latency[0] + b / rate[0], link.base_s + latency[1] + b / rate[1]);
}

}  // namespace commfit
