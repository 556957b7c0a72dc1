// The Ranka-Wang family on topologies: decompose_rs_nlp (RS_N, RS_NP, RS_NL, RS_NLP; §4.2, §5,
// Figs. 3-4), heap_split (RS_NLH, RS_NLPH; §6) and link_check (the optimal decomposition made
// link-contention free). Property tests with the verifier as oracle (link rule on hypercubes,
// tori, meshes and fat trees, node rule too), pairwise exchanges counted in the lowered plans,
// and the reproduction of Table 1's and Table 2's "# iters" rows (docs/TOPOLOGY.md).
#include "ir/cost_model.h"
#include "ir/error.h"
#include "ir/topology.h"
#include "passes/compress.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "passes/decompose_rs_nlp.h"
#include "passes/heap_split.h"
#include "passes/link_check.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "support/decompose_checks.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace commfit;

namespace {

struct RankaCase {
  std::string name;
  CommMatrix m;
};

// Matrices of p = 64 ranks (and a few smaller ones, on machines with more ranks than the job).
std::vector<RankaCase> cases() {
  std::vector<RankaCase> out;
  for (int d : {1, 4, 16, 48, 63})
    out.push_back({"uniform d=" + std::to_string(d), gen_uniform(64, d, 1024, 300 + d)});
  for (int d : {4, 16, 32})
    out.push_back({"nonuniform d=" + std::to_string(d), gen_nonuniform(64, d, 256, 400 + d)});
  out.push_back({"sparse 0.1", gen_random_sparse(64, 0.1, 5000, 11, true)});
  out.push_back({"sparse 0.6", gen_random_sparse(64, 0.6, 100000, 12)});
  out.push_back({"hot receiver", gen_hot_receiver(64, 17, 1 << 20, 0.05, 13)});
  out.push_back({"lognormal", gen_lognormal(64, 0.2, 4096, 2.0, 14)});
  out.push_back({"dense", gen_dense(64, 1 << 16, 15)});
  out.push_back({"p=50 sparse", gen_random_sparse(50, 0.3, 1000, 16)});
  out.push_back({"p=2", make_matrix(2, {{0, 1, 5}, {1, 0, 7}})});
  out.push_back({"p=3 copies only", make_matrix(3, {{1, 1, 4}})});
  return out;
}

const char* const kTopologies[] = {
    "hypercube:6", "torus:8x8", "torus:4x4x4", "torus:4x4+node4", "mesh:4x4x4", "mesh:8x8",
    "fattree:2;8,8;1,4;1,1", "fattree:2;8,8;1,8;1,1", "fattree:3;4,4,4;1,2,2;1,1,1",
    "fattree:2;4,4;1,2;1,2+node4", "dragonfly:4,2;2,2;4,2;2", "full",
};

VerifyRules link_rules(const Topology& topo) {
  VerifyRules r;
  r.contention = Contention::link;
  r.route = [&topo](Rank a, Rank b, std::vector<Link>& l) { topo.route(a, b, l); };
  return r;
}

// Both contention rules (the link rule alone does not check node contention).
std::vector<std::string> verify_both(const Schedule& s, const CommMatrix& m, const Topology& topo) {
  const Plan plan = lower(s, m);
  std::vector<std::string> problems = verify(plan, m, VerifyRules{});
  for (std::string& p : verify(plan, m, link_rules(topo))) problems.push_back("link rule: " + p);
  return problems;
}

// Pairwise exchanges in a lowered plan: (rank, phase) with a send to and a receive from the
// same peer; each exchange is seen from both of its ranks.
std::int64_t pairwise_exchanges(const Plan& plan) {
  std::int64_t halves = 0;
  for (const RankSchedule& r : plan.ranks) {
    std::map<std::pair<Phase, Rank>, int> seen;   // (phase, peer) -> bit 1 send, bit 2 recv
    for (const Step& s : r.steps)
      if (s.op == Op::send) seen[{s.phase, s.peer}] |= 1;
      else if (s.op == Op::recv) seen[{s.phase, s.peer}] |= 2;
    for (const auto& [key, bits] : seen) halves += bits == 3;
  }
  return halves / 2;
}

// Locate_Pair's promise on a machine without links: in every phase, no two ranks that are both
// idle (neither send nor receive) still owe each other a message both ways. Returns violations.
int missed_pairs(const Schedule& s) {
  std::map<std::pair<Rank, Rank>, Phase> last;   // (from, to) -> last phase with a piece
  for (const Transfer& t : s.transfers) last[{t.from, t.to}] = std::max(last[{t.from, t.to}], t.phase);
  int missed = 0;
  std::vector<char> busy(static_cast<std::size_t>(s.ranks));
  std::size_t k = 0;
  for (Phase p = 0; p < s.phases; ++p) {
    std::fill(busy.begin(), busy.end(), 0);
    for (; k < s.transfers.size() && s.transfers[k].phase == p; ++k) busy[s.transfers[k].from] = busy[s.transfers[k].to] = 1;
    for (const auto& [pair, end] : last) {
      const auto [i, j] = pair;
      if (i < j && end > p && !busy[i] && !busy[j]) {
        const auto back = last.find({j, i});
        missed += back != last.end() && back->second > p;
      }
    }
  }
  return missed;
}

using test::same_schedule;

const RsNlpOptions kVariants[] = {{false, false, 0}, {true, false, 0}, {false, true, 0}, {true, true, 0}};

}  // namespace

TEST_CASE("decompose_rs_nlp: without link checking the topology plays no part") {
  // decompose_rs_n is RS_N on the full crossbar; test_decompose holds it to a literal Fig. 3.
  std::uint64_t seed = 1;
  for (const RankaCase& c : cases()) {
    CAPTURE(c.name);
    const CompressedMatrix ccom = compress(c.m, seed);
    for (const bool pairwise : {false, true})
      CHECK(same_schedule(decompose_rs_nlp(ccom, c.m, Topology::parse("hypercube:6"), {pairwise, false, seed}),
                          decompose_rs_nlp(ccom, c.m, Topology(), {pairwise, false, seed})));
    ++seed;
  }
}

TEST_CASE("decompose_rs_nlp: every variant on every topology passes the verifier's link and node rules") {
  std::uint64_t seed = 7;
  int checked = 0;
  for (const char* spec : kTopologies) {
    const Topology topo = Topology::parse(spec);
    for (const RankaCase& c : cases()) {
      CAPTURE(spec);
      CAPTURE(c.name);
      const CompressedMatrix ccom = compress(c.m, seed);
      for (RsNlpOptions o : kVariants) {
        CAPTURE(rs_nlp_name(o));
        o.seed = seed;
        const Schedule s = decompose_rs_nlp(ccom, c.m, topo, o);
        REQUIRE(test::check_direct_schedule(s, c.m) == "");
        CHECK(s.phases >= static_cast<Phase>(traffic_stats(c.m).h));
        if (o.link_check || topo.kind() == Topology::Kind::full) CHECK(verify_both(s, c.m, topo).empty());
        else CHECK(verify(lower(s, c.m), c.m, VerifyRules{}).empty());
        ++checked;
      }
      ++seed;
    }
  }
  CHECK(checked == 4 * static_cast<int>(cases().size() * std::size(kTopologies)));
}

TEST_CASE("link rule has teeth: unchecked decompositions share links on the hypercube") {
  const Topology topo = Topology::parse("hypercube:6");
  const CommMatrix m = gen_uniform(64, 16, 1024, 5);
  const Schedule rs = decompose_rs_n(compress(m, 5), m, 5);
  CHECK_FALSE(verify(lower(rs, m), m, link_rules(topo)).empty());
  CHECK_FALSE(verify(lower(decompose_optimal(m), m), m, link_rules(topo)).empty());
}

TEST_CASE("pairwise: Locate_Pair's exchanges are matched send/recv pairs of one phase") {
  std::int64_t total_located = 0;
  for (const char* spec : {"full", "hypercube:6", "fattree:2;8,8;1,4;1,1"}) {
    const Topology topo = Topology::parse(spec);
    for (int d : {4, 16, 32, 48}) {
      CAPTURE(spec);
      CAPTURE(d);
      const CommMatrix m = gen_uniform(64, d, 1024, 700 + d);
      const CompressedMatrix ccom = compress(m, d);
      RsNlpReport with, without;
      const bool links = topo.kind() != Topology::Kind::full;
      const Schedule p = decompose_rs_nlp(ccom, m, topo, {true, links, 3}, &with);
      const Schedule n = decompose_rs_nlp(ccom, m, topo, {false, links, 3}, &without);
      const std::int64_t seen_p = pairwise_exchanges(lower(p, m));
      const std::int64_t seen_n = pairwise_exchanges(lower(n, m));
      CHECK(without.pairs_located == 0);
      CHECK(with.pairs_located > 0);
      CHECK(seen_p >= with.pairs_located);    // located ones, plus any the row scan happens to form
      CHECK(seen_p > seen_n);
      if (!links) CHECK(missed_pairs(p) == 0);
      total_located += with.pairs_located;
      std::printf("pairwise %-24s d=%2d: RS_N%s %4lld exchanges, with Locate_Pair %4lld (%lld located) of %lld possible\n",
                  spec, d, links ? "L" : "", static_cast<long long>(seen_n), static_cast<long long>(seen_p),
                  static_cast<long long>(with.pairs_located),
                  static_cast<long long>([&] {
                    std::int64_t both = 0;
                    m.for_each([&](Rank i, Rank j, Bytes) { both += i < j && m.at(j, i) > 0; });
                    return both;
                  }()));
    }
  }
  CHECK(total_located > 1000);
  // missed_pairs can fail: ranks 0 and 1 owe each other a message and both idle in phase 0.
  Schedule missed;
  missed.ranks = 4;
  missed.phases = 2;
  missed.transfers = {{0, 2, 3, {2, 3, 0, 1}}, {1, 0, 1, {0, 1, 0, 1}}, {1, 1, 0, {1, 0, 0, 1}}};
  CHECK(missed_pairs(missed) == 1);
}

TEST_CASE("heap_split: RS_NLPH and RS_NLH pass the verifier on every topology; the sweep keeps the cheapest") {
  std::uint64_t seed = 11;
  CostOptions cost;
  cost.tau_s = 4.36e-4;
  cost.bandwidth_Bps = 1.54e6;
  for (const char* spec : kTopologies) {
    const Topology topo = Topology::parse(spec);
    for (const RankaCase& c : cases()) {
      CAPTURE(spec);
      CAPTURE(c.name);
      const CompressedMatrix ccom = compress(c.m, seed);
      for (bool pairwise : {true, false}) {
        CAPTURE(pairwise);
        HeapSplitOptions o;
        o.pairwise = pairwise;
        o.cost = cost;
        o.seed = seed;
        HeapSplitReport r;
        const Schedule s = heap_split(ccom, c.m, topo, o, &r);
        CHECK(verify_both(s, c.m, topo).empty());
        REQUIRE(!r.sweep.empty());
        CHECK(r.sweep.size() == std::max<std::size_t>(paper_lambda_ks(c.m.ranks).size(), 1));
        const double est = schedule_estimate_s(s, cost);
        CHECK(est == doctest::Approx(synchronous_estimate_s(lower(s, c.m), {cost.tau_s, cost.bandwidth_Bps})));
        CHECK(est == r.sweep[r.chosen].estimate_s);
        CHECK(s.phases == r.sweep[r.chosen].phases);
        for (const HeapSplitCandidate& x : r.sweep) CHECK(x.estimate_s >= est);
      }
      ++seed;
    }
  }
}

TEST_CASE("heap_split: lambda = 1 never splits; smaller lambda splits the large messages") {
  const CommMatrix m = gen_nonuniform(64, 16, 256, 21);
  const CompressedMatrix ccom = compress(m, 21);
  const Topology topo = Topology::parse("hypercube:6");
  HeapSplitOptions o;
  o.seed = 21;
  o.ks = {64};
  const Schedule whole = heap_split(ccom, m, topo, o);
  CHECK(test::check_direct_schedule(whole, m) == "");   // one whole piece per message
  o.ks = {48};
  const Schedule split = heap_split(ccom, m, topo, o);
  CHECK(split.transfers.size() > whole.transfers.size());
  CHECK(verify_both(split, m, topo).empty());
  // Largest first: the first phase carries the largest message of some row at its full size.
  Bytes first_max = 0;
  for (const Transfer& t : whole.transfers)
    if (t.phase == 0) first_max = std::max(first_max, t.piece.bytes);
  CHECK(first_max == traffic_stats(m).max_message);
  CHECK(paper_lambda_ks(64) == std::vector<Rank>{63, 62, 60, 56, 48});
  CHECK(paper_lambda_ks(8) == std::vector<Rank>{7, 6});
  CHECK(paper_lambda_ks(4) == std::vector<Rank>{3});
  CHECK(paper_lambda_ks(2) == std::vector<Rank>{1});
  CHECK(paper_lambda_ks(1).empty());
  o.ks = {0};
  CHECK_THROWS_AS(heap_split(ccom, m, topo, o), UsageError);
}

TEST_CASE("heap_split with pairwise: Locate_Pair misses no pair on a machine without links") {
  for (int d : {8, 32}) {
    const CommMatrix m = gen_nonuniform(64, d, 16, 900 + d);
    HeapSplitOptions o;
    o.link_check = false;
    o.seed = 5;
    HeapSplitReport r;
    const Schedule s = heap_split(compress(m, 5), m, Topology(), o, &r);
    CHECK(r.pairs_located > 0);
    CHECK(missed_pairs(s) == 0);
    CHECK(pairwise_exchanges(lower(s, m)) >= r.pairs_located);
  }
}

TEST_CASE("link_check: the optimal decomposition made link-disjoint, and what it costs over h") {
  std::printf("link_check on decompose_optimal, p = 64 (phases: h -> after link check)\n");
  for (const char* spec : kTopologies) {
    const Topology topo = Topology::parse(spec);
    std::int64_t before = 0, after = 0, conflicts = 0, floor = 0;
    for (const RankaCase& c : cases()) {
      CAPTURE(spec);
      CAPTURE(c.name);
      const Schedule opt = decompose_optimal(c.m);
      LinkCheckReport r;
      const Schedule s = link_check(opt, topo, &r);
      REQUIRE(test::check_direct_schedule(s, c.m) == "");
      CHECK(verify_both(s, c.m, topo).empty());
      CHECK(r.phases_in == static_cast<Phase>(traffic_stats(c.m).h));
      CHECK(r.phases_out == s.phases);
      CHECK(s.phases >= opt.phases);
      CHECK(r.phase_lower_bound >= r.phases_in);
      CHECK(s.phases >= r.phase_lower_bound);
      if (r.conflicts == 0) CHECK(same_schedule(s, opt));
      if (topo.kind() == Topology::Kind::full) CHECK(r.conflicts == 0);
      // Kept transfers keep their phase: only evicted ones move.
      std::int64_t moved = 0;
      for (std::size_t k = 0; k < opt.transfers.size(); ++k) {
        const Transfer& t = opt.transfers[k];
        const auto it = std::find_if(s.transfers.begin(), s.transfers.end(),
                                     [&](const Transfer& x) { return x.piece == t.piece; });
        moved += it->phase != t.phase;
      }
      CHECK(moved <= r.conflicts);
      before += r.phases_in;
      after += r.phases_out;
      conflicts += r.conflicts;
      floor += r.phase_lower_bound;
    }
    std::printf("  %-30s phases %5lld -> %5lld (+%.1f%% over h), link-aware floor %5lld (+%.1f%% over it), %lld transfers moved\n", spec,
                static_cast<long long>(before), static_cast<long long>(after),
                100.0 * static_cast<double>(after - before) / static_cast<double>(before), static_cast<long long>(floor),
                100.0 * static_cast<double>(after - floor) / static_cast<double>(floor), static_cast<long long>(conflicts));
  }
  // RS_N's schedule, repaired the same way.
  const Topology cube = Topology::parse("hypercube:6");
  const CommMatrix m = gen_uniform(64, 16, 1024, 8);
  const Schedule s = link_check(decompose_rs_n(compress(m, 8), m, 8), cube);
  CHECK(verify_both(s, m, cube).empty());
}

TEST_CASE("ranka-wang passes are deterministic") {
  const CommMatrix m = gen_nonuniform(64, 16, 256, 3);
  const CompressedMatrix ccom = compress(m, 3);
  const Topology topo = Topology::parse("torus:8x8");
  CHECK(same_schedule(decompose_rs_nlp(ccom, m, topo, {true, true, 3}), decompose_rs_nlp(ccom, m, topo, {true, true, 3})));
  CHECK_FALSE(same_schedule(decompose_rs_nlp(ccom, m, topo, {true, true, 3}), decompose_rs_nlp(ccom, m, topo, {true, true, 4})));
  HeapSplitOptions o;
  CHECK(same_schedule(heap_split(ccom, m, topo, o), heap_split(ccom, m, topo, o)));
  CHECK(same_schedule(link_check(decompose_optimal(m), topo), link_check(decompose_optimal(m), topo)));
  CHECK_THROWS_AS(decompose_rs_nlp(ccom, m, Topology::parse("torus:4x4"), {}), UsageError);   // 64 ranks, 16 nodes
}

namespace {

// The iPSC/860 of the paper as a cost model, fitted to Table 1's RS_N rows at d = 4 (1 KiB:
// 6.514 ms, 128 KiB: 505.875 ms over 5.92 phases): tau = 0.436 ms, 1.54 MB/s.
CostOptions ipsc860() {
  CostOptions c;
  c.tau_s = 4.36e-4;
  c.bandwidth_Bps = 1.54e6;
  return c;
}

constexpr int kDs[] = {4, 8, 16, 32, 48};
constexpr int kSamples = 50;

}  // namespace

TEST_CASE("Ranka-Wang Table 1: # iters of RS_N, RS_NP, RS_NL, RS_NLP on a 64-node hypercube") {
  // §7.1: n = 64, 50 random samples per d; each rank sends and receives exactly d messages of
  // one size (gen_uniform, fully specified by the paper). Same seeds as test_decompose's RS_N check.
  const Topology cube = Topology::parse("hypercube:6");
  const double paper[4][5] = {{5.92, 10.5, 19.16, 35.52, 51.58},    // RS_N
                              {5.78, 10.46, 19.14, 35.66, 51.6},    // RS_NP
                              {7.04, 11.88, 20.62, 37.7, 53.84},    // RS_NL
                              {7.1, 11.92, 20.74, 37.76, 53.74}};   // RS_NLP
  std::printf("Table 1 # iters, hypercube:6, %d samples per d: ours / paper (ratio)\n", kSamples);
  std::printf("%4s %22s %22s %22s %22s\n", "d", "RS_N", "RS_NP", "RS_NL", "RS_NLP");
  for (int k = 0; k < 5; ++k) {
    double total[4] = {};
    for (int sample = 0; sample < kSamples; ++sample) {
      const std::uint64_t seed = 1000 * static_cast<std::uint64_t>(kDs[k]) + static_cast<std::uint64_t>(sample);
      const CommMatrix m = gen_uniform(64, kDs[k], 1024, seed);
      const CompressedMatrix ccom = compress(m, seed);
      for (int v = 0; v < 4; ++v) {
        RsNlpOptions o = kVariants[v];
        o.seed = seed;
        const Schedule s = decompose_rs_nlp(ccom, m, cube, o);
        total[v] += s.phases;
        if (o.link_check && sample % 10 == 0) CHECK(verify_both(s, m, cube).empty());
      }
    }
    std::printf("%4d", kDs[k]);
    for (int v = 0; v < 4; ++v) {
      const double ours = total[v] / kSamples;
      std::printf("   %6.2f / %6.2f (%.3f)", ours, paper[v][k], ours / paper[v][k]);
      CAPTURE(kDs[k]);
      CAPTURE(rs_nlp_name(kVariants[v]));
      CHECK(ours / paper[v][k] >= 0.9);
      CHECK(ours / paper[v][k] <= 1.1);
    }
    std::printf("\n");
  }
}

// A loosely synchronous estimate, standing in for the iPSC/860's measured times (§7: S1, no
// global synchronisation): each rank has a clock; a transfer in phase k starts when both its
// ranks are done with their earlier phases and takes tau + bytes / bandwidth; a pairwise
// exchange (i -> j and j -> i in one phase) is one such slot of the larger piece. Crude (a rank
// that sends to one rank and receives from another in one phase is charged once), but it is the
// kind of time the paper measured, where the synchronous model is not.
double loosely_synchronous_s(const Schedule& s, const CostOptions& c) {
  std::vector<double> clock(static_cast<std::size_t>(s.ranks), 0), next;
  std::map<std::pair<Rank, Rank>, Bytes> phase;
  for (std::size_t k = 0; k < s.transfers.size();) {
    const Phase p = s.transfers[k].phase;
    phase.clear();
    for (; k < s.transfers.size() && s.transfers[k].phase == p; ++k)
      phase[{s.transfers[k].from, s.transfers[k].to}] += s.transfers[k].piece.bytes;
    next = clock;
    for (const auto& [key, b] : phase) {
      const auto [i, j] = key;
      const auto back = phase.find({j, i});
      if (back != phase.end() && j < i) continue;   // counted with (j, i)
      const Bytes slot = back != phase.end() ? std::max(b, back->second) : b;
      const double end = std::max(clock[i], clock[j]) + c.tau_s + static_cast<double>(slot) / c.bandwidth_Bps;
      next[i] = std::max(next[i], end);
      next[j] = std::max(next[j], end);
    }
    clock.swap(next);
  }
  return clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
}

TEST_CASE("Ranka-Wang Table 2: # iters of RS_NLP, RS_NLPH, RS_NLH on a 64-node hypercube") {
  // §7.2 test set 1: the pattern of Table 1 with COM(i, j) = random() mod n units (gen_nonuniform,
  // msg_unit = 256 bytes; entries drawn as 0 are no message): the generator is fully specified.
  // lambda is not: the paper keeps, per sample, the lambda of (n-1)/n ... 3/4 whose schedule ran
  // fastest on the iPSC/860, and reports that schedule's phases. Asserted here (10 %): RS_NLP, and
  // RS_NLPH / RS_NLH at lambda = (n-1)/n, the paper's first value, whose counts match the paper's;
  // printed beside: the mean lambda and phases when the pass chooses per sample with the
  // synchronous model (its default) and with the loosely synchronous estimate above. Neither
  // model is the machine: the synchronous one splits far more (lambda ~0.8, about twice the
  // phases), the loosely synchronous one mostly keeps (n-1)/n but not always.
  const Topology cube = Topology::parse("hypercube:6");
  const double paper[3][5] = {{7.04, 11.86, 20.78, 37.74, 53.68},    // RS_NLP
                              {8.32, 13.5, 23.42, 42.0, 60.98},      // RS_NLPH
                              {8.16, 13.62, 23.16, 42.3, 60.78}};    // RS_NLH
  std::printf("Table 2 # iters, hypercube:6, msg_unit 256, %d samples per d: ours / paper (ratio), H rows at lambda = 63/64;\n"
              "then lambda and phases chosen per sample by the synchronous model | by the loosely synchronous estimate (NLPH, NLH)\n",
              kSamples);
  std::printf("%4s %22s %22s %22s   %-28s | %-28s\n", "d", "RS_NLP", "RS_NLPH", "RS_NLH", "synchronous", "loosely synchronous");
  const CostOptions cost = ipsc860();
  for (int k = 0; k < 5; ++k) {
    double total[3] = {}, lambda[2][2] = {}, phases[2][2] = {};
    for (int sample = 0; sample < kSamples; ++sample) {
      const std::uint64_t seed = 2000 * static_cast<std::uint64_t>(kDs[k]) + static_cast<std::uint64_t>(sample);
      const CommMatrix m = gen_nonuniform(64, kDs[k], 256, seed);
      const CompressedMatrix ccom = compress(m, seed);
      total[0] += decompose_rs_nlp(ccom, m, cube, {true, true, seed}).phases;
      for (int v = 0; v < 2; ++v) {
        HeapSplitOptions o;
        o.pairwise = v == 0;
        o.cost = cost;
        o.seed = seed;
        o.ks = {63};
        const Schedule h = heap_split(ccom, m, cube, o);
        total[v + 1] += h.phases;
        if (sample % 10 == 0) CHECK(verify_both(h, m, cube).empty());
        o.ks.clear();
        for (int model = 0; model < 2; ++model) {
          if (model == 1) o.estimate = [&](const Schedule& x) { return loosely_synchronous_s(x, cost); };
          HeapSplitReport r;
          const Schedule c = heap_split(ccom, m, cube, o, &r);
          lambda[model][v] += r.sweep[r.chosen].lambda;
          phases[model][v] += c.phases;
          CHECK(r.sweep[r.chosen].estimate_s == doctest::Approx(model == 0 ? schedule_estimate_s(c, cost) : loosely_synchronous_s(c, cost)));
        }
      }
    }
    std::printf("%4d", kDs[k]);
    for (int v = 0; v < 3; ++v) std::printf("   %6.2f / %6.2f (%.3f)", total[v] / kSamples, paper[v][k], total[v] / kSamples / paper[v][k]);
    for (int model = 0; model < 2; ++model)
      std::printf("   %.3f %.3f %6.2f %6.2f", lambda[model][0] / kSamples, lambda[model][1] / kSamples,
                  phases[model][0] / kSamples, phases[model][1] / kSamples);
    std::printf("\n");
    for (int v = 0; v < 3; ++v) {
      CAPTURE(kDs[k]);
      CAPTURE(v);
      CHECK(total[v] / kSamples / paper[v][k] >= 0.9);
      CHECK(total[v] / kSamples / paper[v][k] <= 1.1);
    }
  }
}
