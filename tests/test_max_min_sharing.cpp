// The network model's max-min fair sharing (ir/max_min_sharing.h) on cases solved by hand.
#include "ir/max_min_sharing.h"

#include <doctest/doctest.h>

#include <vector>

namespace commfit {
namespace {

struct SharingCase {
  std::vector<std::vector<std::int32_t>> routes;
  std::vector<double> bound, penalty;
};

std::vector<double> solve(std::vector<double> capacity, const SharingCase& c, std::size_t* work = nullptr) {
  MaxMinSharing s;
  s.reset(std::move(capacity));
  std::vector<std::uint32_t> flows;
  for (std::uint32_t f = 0; f < c.routes.size(); ++f) flows.push_back(f);
  std::vector<double> rate(c.routes.size(), -1);
  const std::size_t w = s.solve(flows, c.routes, c.bound, c.penalty, rate);
  if (work) *work = w;
  return rate;
}

TEST_CASE("max_min_sharing: equal shares, a bound that frees capacity, and a flow that uses nothing") {
  // Two flows on one resource of 10: 5 each; bounded at 2, the first leaves 8 to the second.
  CHECK(solve({10}, {{{0}, {0}}, {100, 100}, {1, 1}}) == std::vector<double>{5, 5});
  CHECK(solve({10}, {{{0}, {0}}, {2, 100}, {1, 1}}) == std::vector<double>{2, 8});
  // No resource: its bound alone.
  CHECK(solve({10}, {{{}, {0}}, {3, 100}, {1, 1}}) == std::vector<double>{3, 10});
}

TEST_CASE("max_min_sharing: the textbook chain, each bottleneck fixing its flows in turn") {
  // Resources 0 (capacity 10) and 1 (capacity 4). Flow a uses both, b uses 0, c uses 1.
  // Resource 1 is tightest (level 2): a and c get 2; b takes what 0 has left, 8.
  std::size_t work = 0;
  const std::vector<double> r = solve({10, 4}, {{{0, 1}, {0}, {1}}, {100, 100, 100}, {1, 1, 1}}, &work);
  CHECK(r == std::vector<double>{2, 8, 2});
  CHECK(work == 4 + 3);   // route entries and flows
}

TEST_CASE("max_min_sharing: penalties weight the shares as SimGrid's levels") {
  // Capacity 9, penalties 1 and 2: level L = 9 / (1 + 1/2) = 6; rates L / penalty = 6 and 3.
  CHECK(solve({9}, {{{0}, {0}}, {100, 100}, {1, 2}}) == std::vector<double>{6, 3});
}

}  // namespace
}  // namespace commfit
