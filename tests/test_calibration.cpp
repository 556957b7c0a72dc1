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
