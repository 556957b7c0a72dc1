// SimGrid's InfiniBand penalties as the network model applies them (ir/ib_penalties.h), on cases
// worked by hand with the factors Be = 0.9, Bs = 0.8, ys = 1.5.
#include "ir/ib_penalties.h"

#include <doctest/doctest.h>

#include <vector>

namespace commfit {
namespace {

struct Net {
  IbPenalties ib;
  std::vector<double> base = std::vector<double>(8, 100.0), bound = std::vector<double>(8, 100.0);
  std::vector<std::uint32_t> changed;
  Net() { ib.reset(8, IbFactors{0.9, 0.8, 1.5}); }
  void refresh() {
    changed.clear();
    ib.refresh(base, bound, changed);
  }
};

TEST_CASE("ib_penalties: a sender's flows out, a receiver's flows in, and the larger of the two") {
  Net n;
  // Node 0 sends flows 0 and 1 to nodes 1 and 2: out = 2 Bs = 1.6; each receiver has one flow in.
  n.ib.add(0, Node{0}, Node{1});
  n.ib.add(1, Node{0}, Node{2});
  CHECK(n.ib.pending());
  n.refresh();
  CHECK(!n.ib.pending());
  CHECK(n.bound[0] == doctest::Approx(100 / 1.6));
  CHECK(n.bound[1] == doctest::Approx(100 / 1.6));
  // Nodes 3 and 4 each send one flow into node 1: it has 3 flows in from 3 senders, so each flow
  // into it pays 1 x Be x 3 = 2.7; node 0 now also pays ys (a receiver with more than 2 flows
  // in): out = 2 Bs ys = 2.4 < 2.7.
  n.ib.add(2, Node{3}, Node{1});
  n.ib.add(3, Node{4}, Node{1});
  n.refresh();
  CHECK(n.bound[0] == doctest::Approx(100 / 2.7));
  CHECK(n.bound[1] == doctest::Approx(100 / 2.4));
  CHECK(n.bound[2] == doctest::Approx(100 / 2.7));
  CHECK(n.bound[3] == doctest::Approx(100 / 2.7));
}

TEST_CASE("ib_penalties: a removal refreshes the nodes still connected, and only changed bounds are told") {
  Net n;
  n.ib.add(0, Node{0}, Node{1});
  n.ib.add(1, Node{2}, Node{1});
  n.refresh();   // two senders into node 1: 1 x Be x 2 = 1.8 each
  CHECK(n.bound[0] == doctest::Approx(100 / 1.8));
  n.ib.remove(1, Node{2}, Node{1});
  n.refresh();   // from node 2: node 1 is no longer its receiver, so only node 2 is visited
  CHECK(n.changed.empty());
  CHECK(n.bound[0] == doctest::Approx(100 / 1.8));   // kept until an update reaches node 0, as SimGrid
  n.ib.add(2, Node{0}, Node{3});
  n.refresh();   // node 0: 2 flows out (1.6), node 1 has one flow in now
  CHECK(n.bound[0] == doctest::Approx(100 / 1.6));
  CHECK(n.bound[2] == doctest::Approx(100 / 1.6));
  CHECK(n.changed.size() == 2);
}

}  // namespace
}  // namespace commfit
