// The loosely synchronous estimate (ir/cost_model.h): a hand-computed critical path, and on many
// plans of every direct algorithm, two-stage and memory strategy: busiest port <= loose <= synchronous.
#include "ir/cost_model.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace commfit;

TEST_CASE("loose_estimate_follows_the_critical_path") {
  // Phase 0: 0 -> 1 (1000 B) and 2 -> 3 (10 B); phase 1: 2 -> 3 (10 B). With tau = 1 s and
  // 1 B/s: synchronous = (1 + 1000) + (1 + 10) = 1012; ranks 2 and 3 do not wait for 0 -> 1, so
  // the critical path is max(1 + 1000, 2 x (1 + 10)) = 1001.
  const CommMatrix m = make_matrix(4, {{0, 1, 1000}, {2, 3, 20}});
  Schedule s;
  s.ranks = 4;
  s.phases = 2;
  s.transfers = {{0, 0, 1, {0, 1, 0, 1000}}, {0, 2, 3, {2, 3, 0, 10}}, {1, 2, 3, {2, 3, 10, 10}}};
  const Plan plan = lower(s, m);
  const CostOptions c{.tau_s = 1.0, .bandwidth_Bps = 1.0};
  CHECK(synchronous_estimate_s(plan, c) == doctest::Approx(1012));
  CHECK(loose_estimate_s(plan, c) == doctest::Approx(1001));
  // A chain: 1 -> 2 in phase 1 waits for rank 1's phase 0 (0 -> 1, 1000 B).
  const CommMatrix chain = make_matrix(3, {{0, 1, 1000}, {1, 2, 10}});
  Schedule t;
  t.ranks = 3;
  t.phases = 2;
  t.transfers = {{0, 0, 1, {0, 1, 0, 1000}}, {1, 1, 2, {1, 2, 0, 10}}};
  CHECK(loose_estimate_s(lower(t, chain), c) == doctest::Approx(1001 + 11));
}

TEST_CASE("loose_estimate_lies_between_the_busiest_port_and_the_synchronous_estimate") {
  std::vector<CommMatrix> ms;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    ms.push_back(gen_lognormal(40, 0.2, 4096, 2.0, seed));
    ms.push_back(gen_nonuniform(32, 6, 256, seed));
    ms.push_back(gen_hot_receiver(24, 3, 1 << 16, 0.1, seed));
  }
  int checked = 0;
  for (const CommMatrix& m : ms)
    for (const char* spec : {"direct/optimal", "direct/rs_nlp", "direct/quantised", "direct/lp", "two-stage/transport", "direct/optimal@torus"}) {
      PlanOptions o;
      const std::string sv = spec;
      o.strategy = sv.substr(0, sv.find('/'));
      const std::string rest = sv.substr(sv.find('/') + 1);
      const std::string name = rest.substr(0, rest.find('@'));
      if (o.strategy == "direct") o.algorithm = name;
      else o.variant = name;
      if (rest.find("@torus") != std::string::npos) o.topology = Topology::parse("torus:" + std::to_string(m.ranks / 4) + "x4");
      const Plan plan = make_plan(m, o);
      const double sync = synchronous_estimate_s(plan, o.cost, o.topology);
      const double loose = loose_estimate_s(plan, o.cost, o.topology);
      INFO(spec << " p = " << m.ranks);
      CHECK(loose <= sync * (1 + 1e-12));
      if (o.strategy == "direct") {
        // One message per port per phase: a port's messages run one after another, so the
        // busiest port's messages x tau + bytes x mu is a floor (senders and receivers).
        std::vector<double> out(m.ranks, 0.0), in(m.ranks, 0.0);
        m.for_each([&](Rank i, Rank j, Bytes b) {
          if (i == j) return;
          const double t = o.cost.tau_s + static_cast<double>(b) / o.cost.bandwidth_Bps;
          out[i] += t;
          in[j] += t;
        });
        const double port = std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
        CHECK(loose >= port * (1 - 1e-12));
      }
      ++checked;
    }
  CHECK(checked == 72);
}

TEST_CASE("synchronous_cost_s: the phases in order, empty ones free") {
  Rng rng(16);
  for (int trial = 0; trial < 500; ++trial) {
    const CostOptions c{.tau_s = rng.uniform() * 1e-5, .bandwidth_Bps = 1e6 + rng.uniform() * 1e11};
    std::vector<Bytes> largest(rng.below(40));
    for (Bytes& b : largest) b = rng.below(3) == 0 ? 0 : static_cast<Bytes>(1 + rng.below(1 << 24));
    double oracle = 0;   // the sum spelt out, in phase order (bit-identical, not approximately)
    for (Bytes b : largest)
      if (b != 0) oracle = oracle + (c.tau_s + static_cast<double>(b) / c.bandwidth_Bps);
    CHECK(synchronous_cost_s(largest, c) == oracle);
    std::vector<Bytes> padded = largest;   // empty phases at the end cost nothing
    padded.resize(padded.size() + rng.below(4), 0);
    CHECK(synchronous_cost_s(padded, c) == oracle);
  }
}

TEST_CASE("schedule_estimate_s: a direct schedule costs what its lowered plan does") {
  Rng rng(2016);
  for (int trial = 0; trial < 60; ++trial) {
    const auto n = static_cast<Rank>(2 + rng.below(30));
    const CommMatrix m = gen_lognormal(n, 0.1 + 0.5 * rng.uniform(), 4096, 2.0, rng.next());
    // Each message in up to 3 pieces, each in its own random phase (a phase with two pieces of
    // one pair would be one message of their sum in the plan).
    Schedule s;
    s.ranks = n;
    s.phases = static_cast<Phase>(1 + rng.below(12));
    std::vector<Phase> order(s.phases);
    for (Phase k = 0; k < s.phases; ++k) order[k] = k;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i == j) return;
      rng.shuffle(order.begin(), order.end());
      const Bytes k = std::min<Bytes>({static_cast<Bytes>(1 + rng.below(3)), static_cast<Bytes>(s.phases), b});
      for (Bytes x = 0, offset = 0; x < k; ++x) {
        const Bytes len = x + 1 == k ? b - offset : b / k;
        s.transfers.push_back({order[x], i, j, {i, j, offset, len}});
        offset += len;
      }
    });
    s.copies = local_copies(m);
    canonicalize(s);
    if (s.transfers.empty()) continue;
    const CostOptions c{.tau_s = rng.uniform() * 1e-5, .bandwidth_Bps = 1e8 + rng.uniform() * 1e10};
    CAPTURE(trial);
    CHECK(schedule_estimate_s(s, c) == synchronous_cost_s(phase_max_piece(s), c));
    CHECK(schedule_estimate_s(s, c) == synchronous_estimate_s(lower(s, m), c));
  }
}
