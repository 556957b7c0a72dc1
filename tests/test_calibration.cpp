// The calibration's fits (planner/calibration.h) fed with the model's own times: they must find the
// figures the times were made with.
#include "planner/calibration.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace {

std::vector<commfit::PingPong> line(double start, double bandwidth, std::initializer_list<commfit::Bytes> sizes) {
  std::vector<commfit::PingPong> out;
  for (const commfit::Bytes b : sizes) out.push_back({b, start + static_cast<double>(b) / bandwidth});
  return out;
}

}  // namespace

TEST_CASE("a line through ping-pong times gives back its start and bandwidth") {
  const auto points = line(2e-6, 1e10, {8, 512, 4096, 65536, 1 << 20});
  const commfit::LineFit f = commfit::fit_line(points);
  CHECK(f.start_s == doctest::Approx(2e-6).epsilon(1e-9));
  CHECK(f.bandwidth_Bps == doctest::Approx(1e10).epsilon(1e-9));
  CHECK(f.error < 1e-9);
  // Times that do not grow: no bandwidth to see.
  const commfit::LineFit flat = commfit::fit_line(line(3e-6, INFINITY, {8, 64, 512}));
  CHECK(std::isinf(flat.bandwidth_Bps));
  CHECK(flat.start_s == doctest::Approx(3e-6));
}

TEST_CASE("the eager limit is where two lines fit the ping-pong best") {
  auto points = line(1.5e-6, 4e9, {8, 512, 4096, 16384, 32768});
  for (const auto& p : line(6e-6, 1.2e10, {65536, 131072, 262144, 1 << 20, 4 << 20})) points.push_back(p);
  const commfit::PingPongFit f = commfit::fit_ping_pong(points);
  REQUIRE(f.eager_limit);
  CHECK(*f.eager_limit == 65536);
  CHECK(f.small.start_s == doctest::Approx(1.5e-6).epsilon(1e-6));
  CHECK(f.large.bandwidth_Bps == doctest::Approx(1.2e10).epsilon(1e-6));
  CHECK(f.error < 1e-6);
  // One line: no break to see.
  const commfit::PingPongFit one = commfit::fit_ping_pong(line(2e-6, 1e10, {8, 512, 4096, 65536, 1 << 20, 4 << 20}));
  CHECK_FALSE(one.eager_limit);
  CHECK(one.large.bandwidth_Bps == doctest::Approx(1e10).epsilon(1e-6));
}

TEST_CASE("the InfiniBand factors are found from flow times the ib model made") {
  commfit::NetworkOptions net;
  net.overhead_s = 4e-7;
  const double tau = 2e-6, bandwidth = 1e10;
  auto trials_of = [&](const commfit::IbFactors& f) {
    commfit::NetworkOptions truth = net;
    truth.model = commfit::Network::ib;
    truth.ib = f;
    std::vector<commfit::FlowTrial> trials;
    for (const commfit::FlowKind kind : {commfit::FlowKind::incast, commfit::FlowKind::outcast, commfit::FlowKind::hot})
      for (int k = kind == commfit::FlowKind::hot ? 2 : 1; k <= 8; k *= 2) {
        commfit::FlowTrial t{k, kind, commfit::Bytes{1} << 20, 0};
        t.seconds = commfit::model_trial_s(t, {}, tau, bandwidth, truth);
        trials.push_back(t);
      }
    return trials;
  };
  // SimGrid's factors: only the hot trial sees them (Bs ys); the flow model misses it, the fit
  // finds Bs with ys kept, and Be (which never binds here) stays as it was.
  std::vector<commfit::FlowTrial> trials = trials_of({0.965, 0.925, 1.35});
  CHECK(commfit::model_error(trials, {}, tau, bandwidth, net) > 0.05);
  commfit::IbFit fit = commfit::fit_ib_factors(trials, {}, tau, bandwidth, net);
  CHECK(fit.factors.bs == doctest::Approx(0.925).epsilon(0.05));
  CHECK(fit.factors.be == 0.965);
  CHECK(fit.factors.ys == 1.35);
  CHECK(fit.error < 0.02);
  // A receiver's penalty above 1 binds in the incast: found too.
  trials = trials_of({1.2, 0.925, 1.35});
  fit = commfit::fit_ib_factors(trials, {}, tau, bandwidth, net);
  CHECK(fit.factors.be == doctest::Approx(1.2).epsilon(0.05));
  CHECK(fit.factors.bs == doctest::Approx(0.925).epsilon(0.05));
  CHECK(fit.error < 0.02);
  // Times the flow model made: the flow model reproduces them exactly.
  for (commfit::FlowTrial& t : trials) t.seconds = commfit::model_trial_s(t, {}, tau, bandwidth, net);
  CHECK(commfit::model_error(trials, {}, tau, bandwidth, net) < 1e-12);
}

TEST_CASE("the latency per link and the window are found from one message's times on routes of several lengths") {
  // One message at a time from rank r to rank 0 of a 4x4x4 torus, as the model prices it with
  // 0.25 us a link and a window of 25000 bytes (a route of 6 links moves at most 8.3 GB/s).
  const double tau = 2e-6, bandwidth = 1.25e10;
  commfit::NetworkOptions truth;
  truth.overhead_s = 5e-7;
  truth.link_latency_s = 2.5e-7;
  truth.window_bytes = 25000;
  commfit::TrialPlace place;
  place.ranks = 64;
  place.topology = commfit::Topology::parse("torus:4x4x4");
  auto one_way = [&](commfit::Rank r, commfit::Bytes bytes) {
    place.rank_of = {0, r};
    return commfit::model_trial_s({1, commfit::FlowKind::incast, bytes, 0}, place, tau, bandwidth, truth);
  };
  std::vector<commfit::RouteSample> routes;
  commfit::Rank longest = 0;
  for (commfit::Rank r = 1; r < 64; r += 3) {
    const int links = static_cast<int>(place.topology.route(r, 0).size());
    routes.push_back({links, one_way(r, 8)});
    if (links > static_cast<int>(place.topology.route(longest, 0).size())) longest = r;
  }
  const std::optional<commfit::RouteFit> fit = commfit::fit_route_latency(routes);
  REQUIRE(fit);
  CHECK(fit->link_latency_s == doctest::Approx(2.5e-7).epsilon(1e-3));
  CHECK(fit->error < 1e-3);
  const int links = static_cast<int>(place.topology.route(longest, 0).size());
  CHECK(links >= 5);
  const double latency = links * fit->link_latency_s;
  const auto window = commfit::fit_window(1 << 20, one_way(longest, 1 << 20), fit->base_s + latency, latency, bandwidth);
  REQUIRE(window);
  CHECK(*window == doctest::Approx(25000).epsilon(0.01));
  // Without the window, the longest route moves at the bandwidth: no bound to see.
  truth.window_bytes = 0;
  CHECK_FALSE(commfit::fit_window(1 << 20, one_way(longest, 1 << 20), fit->base_s + latency, latency, bandwidth));
  // Routes of one length: no slope to fit.
  CHECK_FALSE(commfit::fit_route_latency(std::vector<commfit::RouteSample>{{2, 3e-6}, {2, 3.1e-6}}));
}

TEST_CASE("two flows on one link: the first arrives by the shares each rule gives") {
  // 1 MiB from 1 and from 3 links away over one 10 GB/s link, 1 us to start and 0.25 us a link.
  commfit::SharedLink link{1e-6, 2.5e-7, 1e10, 0};
  const double b = 1 << 20;
  // Equal shares: both at 5 GB/s, the near one first.
  CHECK(commfit::first_arrival_s(1 << 20, 1, 3, link, false) == doctest::Approx(1.25e-6 + b / 5e9));
  // By route latency: the near one has 3/4 of the link.
  CHECK(commfit::first_arrival_s(1 << 20, 1, 3, link, true) == doctest::Approx(1.25e-6 + b / 7.5e9));
  // From 1 and 7 links away with a window of 7000 B: the far flow is held to 2 GB/s (7000 / 3.5 us),
  // the near one's cap is 14 GB/s. Equal shares give the near one what the far leaves, 8 GB/s; by
  // route latency its share is 7/8 of the link, 8.75 GB/s (the far one's 1.25 is under its cap).
  link.window_bytes = 7000;
  CHECK(commfit::first_arrival_s(1 << 20, 1, 7, link, false) == doctest::Approx(1.25e-6 + b / 8e9));
  CHECK(commfit::first_arrival_s(1 << 20, 1, 7, link, true) == doctest::Approx(1.25e-6 + b / 8.75e9));
  // Under the InfiniBand model two flows into one node pay 2 Be (1.93) each: no flow above
  // 10 / 1.93 GB/s. Equal shares (5 GB/s) stay under that bound; by route latency the near flow's
  // 7.5 GB/s is cut to it, so the two rules come close, and a measurement near the bound is
  // shares by route latency, which the unpenalised rules would call equal shares.
  link.window_bytes = 0;
  link.penalty = 2 * 0.965;
  CHECK(commfit::first_arrival_s(1 << 20, 1, 3, link, false) == doctest::Approx(1.25e-6 + b / 5e9));
  CHECK(commfit::first_arrival_s(1 << 20, 1, 3, link, true) == doctest::Approx(1.25e-6 + b / (1e10 / 1.93)));
  // A penalty below 1 is no penalty (a bound is never raised).
  link.penalty = 0.5;
  CHECK(commfit::first_arrival_s(1 << 20, 1, 3, link, true) == doctest::Approx(1.25e-6 + b / 7.5e9));
}
