// lower + verify: a hand-made forwarding schedule, one mutation per verifier rule, and random
// forwarding schedules through the staging allocator.
#include "ir/cost_model.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace commfit;

namespace {

// 0 -> 3 (1000 B) forwarded through rank 1 in two pieces; 1 -> 2 direct; 2 -> 2 local.
struct VerifyFixture {
  CommMatrix m = make_matrix(4, {{0, 3, 1000}, {1, 2, 500}, {2, 2, 10}});
  Schedule s;
  VerifyFixture() {
    s.ranks = 4;
    s.phases = 3;
    s.transfers = {
        {0, 0, 1, {0, 3, 0, 600}},    // to staging on 1
        {0, 1, 2, {1, 2, 0, 500}},
        {1, 0, 1, {0, 3, 600, 400}},  // to staging on 1 while [0, 600) is still live
        {1, 1, 3, {0, 3, 0, 600}},    // forwarded
        {2, 1, 3, {0, 3, 600, 400}},  // forwarded
    };
    s.copies = {{2, 2, 0, 10}};
  }
};

std::vector<Bytes> phase_max_message_of(const Plan& p) { return phase_max_message(p); }

// Rules differing from the defaults in one field (designated initializers that leave fields out
// draw -Wmissing-field-initializers).
VerifyRules only(Contention c) {
  VerifyRules r;
  r.contention = c;
  return r;
}
VerifyRules with_memory() {
  VerifyRules r;
  r.memory = true;
  return r;
}

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) { return p.find(what) != std::string::npos; });
}

Step* find_step(Plan& plan, Rank r, Phase phase, Op op) {
  for (Step& s : plan.ranks[r].steps)
    if (s.phase == phase && s.op == op) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("lower_assigns_staging") {
  VerifyFixture f;
  const Plan plan = lower(f.s, f.m);
  CHECK(verify(plan, f.m, {}).empty());
  const RankSchedule& r1 = plan.ranks[1];
  CHECK(r1.staging_bytes == 1000);   // both pieces live during phase 1
  CHECK(plan.manifest.staging_bytes_max == 1000);
  REQUIRE(r1.steps.size() == 5);
  // phase 0: recv into stage @0, send own message; phase 1: recv stage @600, send stage @0; phase 2: send stage @600
  CHECK(r1.steps[0].op == Op::recv);
  CHECK(r1.steps[0].buffer == Buffer::stage);
  CHECK(r1.steps[0].stage_offset == 0);
  CHECK(r1.steps[1].buffer == Buffer::send);
  CHECK(r1.steps[2].stage_offset == 600);
  CHECK(r1.steps[3].buffer == Buffer::stage);
  CHECK(r1.steps[3].stage_offset == 0);
  CHECK(r1.steps[4].stage_offset == 600);
  CHECK(plan.ranks[2].steps.back().op == Op::copy);
  CHECK(plan.ranks[0].sends == std::vector<PeerBytes>{{3, 1000}});
  CHECK(plan.ranks[2].recvs == std::vector<PeerBytes>{{1, 500}, {2, 10}});
}

TEST_CASE("lower_reuses_freed_staging") {
  // The second piece arrives after the first has left: it reuses offset 0.
  VerifyFixture f;
  f.s.phases = 4;
  f.s.transfers = {
      {0, 0, 1, {0, 3, 0, 600}},
      {0, 1, 2, {1, 2, 0, 500}},
      {1, 1, 3, {0, 3, 0, 600}},
      {2, 0, 1, {0, 3, 600, 400}},
      {3, 1, 3, {0, 3, 600, 400}},
  };
  const Plan plan = lower(f.s, f.m);
  CHECK(verify(plan, f.m, {}).empty());
  CHECK(plan.ranks[1].staging_bytes == 600);
}

TEST_CASE("verify_rule_1_and_3_missing_receive") {
  VerifyFixture f;
  Plan plan = lower(f.s, f.m);
  auto& steps = plan.ranks[3].steps;
  steps.erase(std::find_if(steps.begin(), steps.end(), [](const Step& s) { return s.phase == 2; }));
  const auto p = verify(plan, f.m, {});
  CHECK(mentions(p, "rule 3: send without a matching receive: phase 2, 1 -> 3"));
  CHECK(mentions(p, "rule 1: bytes [600, 1000) of 0->3 never arrive"));
}

TEST_CASE("verify_rule_1_duplicate_arrival") {
  VerifyFixture f;
  Plan plan = lower(f.s, f.m);
  plan.ranks[2].steps.push_back(plan.ranks[2].steps.back());   // the local copy, twice
  CHECK(mentions(verify(plan, f.m, {}), "rule 1: bytes [0, 10) of 2->2 arrive more than once"));
}

TEST_CASE("verify_rule_2_forward_before_arrival") {
  VerifyFixture f;
  f.s.transfers[3].phase = 0;   // 1 forwards [0, 600) in the phase it receives it
  Plan plan = lower(f.s, f.m);  // lower does not check causality; the verifier does
  const auto p = verify(plan, f.m, only(Contention::none));
  CHECK(mentions(p, "rule 2: rank 1: phase 0 sends bytes [0, 600) of 0->3 from staging offset 0"));
}

TEST_CASE("verify_rule_4_node_and_link") {
  const CommMatrix m = make_matrix(3, {{0, 2, 5}, {1, 2, 5}});
  Schedule s{3, 1, {{0, 0, 2, {0, 2, 0, 5}}, {0, 1, 2, {1, 2, 0, 5}}}, {}};
  const Plan plan = lower(s, m);
  CHECK(mentions(verify(plan, m, {}), "rule 4: rank 2 receives from more than one rank in phase 0 (0 and 1)"));
  CHECK(verify(plan, m, only(Contention::none)).empty());
  // Link rule: 0 -> 2 and 1 -> 2 share the link into 2; 0 -> 1 and 1 -> 2 would not.
  VerifyRules links = only(Contention::link);
  links.route = [](Rank a, Rank b, std::vector<Link>& out) { out = {Link{100 + a}, Link{200 + b}}; };
  CHECK(mentions(verify(plan, m, links), "rule 4: phase 0: 0 -> 2 and 1 -> 2 share link 202"));
  const CommMatrix m2 = make_matrix(3, {{0, 1, 5}, {1, 2, 5}});
  Schedule s2{3, 1, {{0, 0, 1, {0, 1, 0, 5}}, {0, 1, 2, {1, 2, 0, 5}}}, {}};
  CHECK(verify(lower(s2, m2), m2, links).empty());
}

TEST_CASE("verify_rule_4_pieces_of_one_pair_are_one_message") {
  // Two pieces 0 -> 1 in one phase travel as one message: the node rule holds.
  const CommMatrix m = make_matrix(3, {{0, 1, 10}, {0, 2, 10}});
  Schedule s{3, 3, {{0, 0, 1, {0, 1, 0, 10}}, {0, 0, 1, {0, 2, 0, 4}}, {1, 1, 2, {0, 2, 0, 4}}, {2, 0, 2, {0, 2, 4, 6}}}, {}};
  canonicalize(s);
  const Plan plan = lower(s, m);
  CHECK(verify(plan, m, {}).empty());
  CHECK(phase_max_message_of(plan) == std::vector<Bytes>{14, 4, 6});
  // Moving the last piece into phase 1 makes rank 2 receive from 0 and 1 at once.
  s.transfers.back().phase = 1;
  canonicalize(s);
  CHECK(mentions(verify(lower(s, m), m, {}), "rule 4: rank 2 receives from more than one rank in phase 1 (0 and 1)"));
}

TEST_CASE("verify_rule_5_memory") {
  VerifyFixture f;
  f.m.memory = {0, 1000, 1000, 1000};
  const Plan plan = lower(f.s, f.m);
  CHECK(verify(plan, f.m, with_memory()).empty());
  f.m.memory[1] = 599;   // rank 1 receives 600 B into staging in phase 0
  CHECK(mentions(verify(plan, f.m, with_memory()), "rule 5: rank 1 receives 600 bytes in phase 0 with only 599 bytes free"));
  // Sending frees memory: 1 sends 500 B in phase 0, so 600 + 400 fit in 600 + 500 - 600 + ...
  f.m.memory[1] = 600;
  CHECK(verify(plan, f.m, with_memory()).empty());
  f.m.memory[3] = 999;   // rank 3 receives 600, then 400: 999 - 600 = 399 < 400
  CHECK(mentions(verify(plan, f.m, with_memory()), "rule 5: rank 3 receives 400 bytes in phase 2 with only 399 bytes free"));
}

TEST_CASE("verify_rule_6_staging_overlap") {
  VerifyFixture f;
  Plan plan = lower(f.s, f.m);
  find_step(plan, 1, 1, Op::recv)->stage_offset = 100;   // lands on the live [0, 600)
  find_step(plan, 0, 1, Op::send);                        // (the sender side is unchanged)
  const auto p = verify(plan, f.m, {});
  CHECK(mentions(p, "rule 6: rank 1: phase 1: staging range [100, 500) overlaps a live staged piece"));
}

TEST_CASE("verify_rule_7_declared_figures") {
  VerifyFixture f;
  const Plan plan = lower(f.s, f.m);
  CHECK(verify(plan, f.m, {}).empty());
  Plan bad = plan;
  bad.ranks[1].staging_bytes = Bytes{3} << 30;
  bad.manifest.staging_bytes_max = Bytes{3} << 30;
  CHECK(verify(bad, f.m, {}) == std::vector<std::string>{"rule 7: rank 1: staging_bytes 3221225472 but the steps use at most 1000"});
  bad = plan;
  bad.manifest.phases = kMaxPhases;
  for (RankSchedule& rs : bad.ranks) rs.phases = kMaxPhases;
  CHECK(verify(bad, f.m, {}) ==
        std::vector<std::string>{"rule 7: phases 16777216 but the steps use at most 3 (the phases after the last step are empty on every rank)"});
}

TEST_CASE("verify_format_checks") {
  VerifyFixture f;
  const Plan plan = lower(f.s, f.m);
  const CommMatrix other = make_matrix(4, {{0, 3, 1000}, {1, 2, 501}, {2, 2, 10}});
  const auto p = verify(plan, other, {});
  CHECK(mentions(p, "format: manifest fingerprint"));
  CHECK(mentions(p, "format: rank 1: \"sends\" is not row 1 of the matrix"));
  Plan bad = plan;
  bad.ranks[0].steps[0].phase = 7;
  CHECK(mentions(verify(bad, f.m, {}), "is not below the phase count 3"));
  bad = plan;
  bad.ranks[3].steps[0].buffer = Buffer::send;
  CHECK(mentions(verify(bad, f.m, {}), "only the message's src sends from its send buffer"));
  bad = plan;
  std::swap(bad.ranks[1].steps[0], bad.ranks[1].steps[4]);
  CHECK(mentions(verify(bad, f.m, {}), "steps are not in phase order"));
}

TEST_CASE("lower_random_forwarding_schedules_verify") {
  // Every message split in two: one piece direct, one through a random intermediary k, with the
  // forwarding hop in a random later phase. The staging allocator must keep rules 2 and 6.
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Rank p = static_cast<Rank>(2 + seed % 13);
    const CommMatrix m = gen_random_sparse(p, 0.4, 5000, seed, true);
    Rng rng(seed * 77);
    Schedule s;
    s.ranks = p;
    s.copies = local_copies(m);
    Phase last = 0;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i == j) return;
      const Bytes cut = b / 2;
      const Rank k = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(p)));
      const auto a = static_cast<Phase>(rng.below(6));
      if (cut > 0 && k != i && k != j) {
        const Phase later = a + 1 + static_cast<Phase>(rng.below(4));
        s.transfers.push_back({a, i, k, {i, j, 0, cut}});
        s.transfers.push_back({later, k, j, {i, j, 0, cut}});
        last = std::max(last, later);
      } else if (cut > 0) {
        s.transfers.push_back({a, i, j, {i, j, 0, cut}});
      }
      s.transfers.push_back({a, i, j, {i, j, cut, b - cut}});
      last = std::max(last, a);
    });
    s.phases = last + 1;
    canonicalize(s);
    const Plan plan = lower(s, m);
    const auto problems = verify(plan, m, only(Contention::none));
    INFO("seed " << seed << ": " << (problems.empty() ? std::string() : problems.front()));
    CHECK(problems.empty());
  }
}
