// two-stage-split (Transportation §7-8, Appendix A; Bader-Helman-JaJa §3) and stage-schedule:
// property tests over many seeded matrices (uniform, the Transportation paper's Figures 1, 2, 3
// and 9, BHJ eq. (7) with h = n/p .. 8n/p, hot spots, skewed sample sort and MoE dispatch, p not
// a power of two, p = 1, 2, 3). Oracles: the verifier with the node rule on the lowered plan, the
// exact tiling of every message, and every bound the papers prove, asserted.
//
// Bounds asserted (bytes are the papers' elements; r_i, c_j, t, N over network messages):
//   every variant   each message's parts are floor or ceil of a_ij / p, exactly a_ij mod p ceil;
//   transport       bytes from source i to intermediary k  <= ceil(r_i / p) <= ceil(t / p)
//                   (Transportation §7.1, Fig. 8; no assumption);
//   transport-scan  the above, and bytes arriving at k in total <= ceil(N / p) <= t (Fig. 9);
//   transport-alt   bytes from k to destination j <= ceil(c_j / p) <= ceil(t / p), and bytes
//                   leaving k in total <= t (§8, Fig. 11-12 with the additional step);
//   bhj             bin (i, k) <= n/p^2 + (p-1)/2 and bin (k, j) <= h/p + (p-1)/2 (BHJ eq. (4),
//                   (5)), where n/p := the largest r_i and h := the largest c_j. The paper
//                   assumes every rank holds exactly n/p elements, h an integral multiple of p
//                   and n >= p^2; the proofs of (4) and (5) only use "rank i holds at most n/p,
//                   rank j receives at most h" and that the runs of one rank start at distinct
//                   bins, so the bounds are asserted on every matrix, and separately on the
//                   eq. (7) matrices that meet all of the paper's assumptions (key = 1 byte);
//   random          bytes from i to k <= ceil(r_i / p) (Appendix A keeps the stage-1 bound);
//   the schedule    modelled cost <= 2 (p-1) tau + (p-1) mu (B1 + B2), B1, B2 the variant's
//                   per-pair bounds of stage 1 and 2: 2 t mu + lower-order terms (§7.3).
#include "ir/cost_model.h"
#include "ir/error.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "passes/stage_schedule.h"
#include "passes/two_stage_split.h"
#include "passes/verify.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"
#include "workloads/skewed.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace commfit;

namespace {

struct SplitCase {
  std::string name;
  CommMatrix m;
};

constexpr TwoStageVariant kAll[] = {TwoStageVariant::transport, TwoStageVariant::transport_scan, TwoStageVariant::transport_alt,
                                    TwoStageVariant::bhj, TwoStageVariant::random};

Bytes ceil_div(Bytes a, Bytes b) { return (a + b - 1) / b; }

// Transportation Fig. 1, 2, 3 and 9, transcribed from the paper (row = source).
CommMatrix dense_matrix(const std::vector<std::vector<Bytes>>& rows) {
  std::vector<Message> msgs;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j)
      if (rows[i][j]) msgs.push_back({static_cast<Rank>(i), static_cast<Rank>(j), rows[i][j]});
  return make_matrix(static_cast<Rank>(rows.size()), std::move(msgs));
}
CommMatrix fig1() {
  return dense_matrix({{0, 3, 1, 0, 2, 1, 2, 1}, {1, 0, 2, 2, 1, 1, 3, 0}, {4, 1, 0, 2, 0, 2, 0, 1}, {0, 2, 0, 0, 0, 3, 1, 4},
                       {3, 0, 4, 0, 0, 2, 1, 0}, {1, 2, 1, 2, 0, 0, 0, 4}, {0, 2, 1, 0, 7, 0, 0, 0}, {1, 0, 1, 4, 0, 1, 3, 0}});
}
CommMatrix fig2() {
  return dense_matrix({{0, 3, 1, 0, 0, 1, 0, 1}, {1, 0, 2, 2, 0, 1, 1, 0}, {1, 1, 0, 2, 0, 2, 0, 1}, {0, 1, 0, 0, 0, 3, 1, 0},
                       {3, 0, 0, 0, 0, 2, 1, 0}, {1, 1, 1, 2, 0, 0, 0, 2}, {0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 1, 4, 0, 1, 0, 0}});
}
CommMatrix fig3() { return dense_matrix({{1, 5, 0, 3}, {2, 0, 5, 2}, {0, 4, 1, 4}, {6, 0, 3, 0}}); }
CommMatrix fig9() { return dense_matrix({{11, 1, 4, 1}, {2, 0, 3, 12}, {3, 10, 3, 1}, {1, 6, 7, 3}}); }

// Nominal per-pair totals of a split (self parts included, as the papers count them).
struct Totals {
  Rank p;
  std::vector<Bytes> s1, s2;   // s1[i * p + k]: i -> k; s2[k * p + j]: k -> j
  std::vector<Bytes> in, out;  // bytes arriving at / leaving intermediary k
  Bytes at1(Rank i, Rank k) const { return s1[static_cast<std::size_t>(i) * p + k]; }
  Bytes at2(Rank k, Rank j) const { return s2[static_cast<std::size_t>(k) * p + j]; }
};
Totals totals(const TwoStageSplit& s) {
  const Rank p = s.ranks;
  Totals t{p, std::vector<Bytes>(static_cast<std::size_t>(p) * p), std::vector<Bytes>(static_cast<std::size_t>(p) * p),
           std::vector<Bytes>(p), std::vector<Bytes>(p)};
  for (const StagePart& x : s.parts) {
    t.s1[static_cast<std::size_t>(x.src) * p + x.mid] += x.bytes;
    t.s2[static_cast<std::size_t>(x.mid) * p + x.dst] += x.bytes;
    t.in[x.mid] += x.bytes;
    t.out[x.mid] += x.bytes;
  }
  return t;
}

// Every network message tiled by its parts: contiguous from 0, one part per intermediary,
// sizes floor or ceil of a / p, exactly a mod p of them ceil (floor = 0 parts are absent).
std::string check_tiling(const TwoStageSplit& s, const CommMatrix& m) {
  const auto p = static_cast<Bytes>(m.ranks);
  std::size_t k = 0;
  std::string problem;
  m.for_each([&](Rank i, Rank j, Bytes a) {
    if (i == j || !problem.empty()) return;
    Bytes next = 0, ceil_parts = 0;
    std::vector<char> seen(static_cast<std::size_t>(p), 0);
    for (; k < s.parts.size() && s.parts[k].src == i && s.parts[k].dst == j; ++k) {
      const StagePart& x = s.parts[k];
      if (x.offset != next || x.bytes == 0) problem = "message " + std::to_string(i) + "->" + std::to_string(j) + ": gap or overlap";
      if (x.mid < 0 || static_cast<Bytes>(x.mid) >= p || seen[x.mid]++) problem = "intermediary repeated or out of range";
      if (x.bytes != a / p && x.bytes != a / p + 1) problem = "part size not floor or ceil of a/p";
      if (x.bytes == a / p + 1) ++ceil_parts;
      next += x.bytes;
    }
    if (problem.empty() && next != a) problem = "message " + std::to_string(i) + "->" + std::to_string(j) + " not covered";
    if (problem.empty() && ceil_parts != a % p) problem = "not exactly a mod p ceil parts";
  });
  if (problem.empty() && k != s.parts.size()) problem = "parts of no network message (or out of order)";
  return problem;
}

// The paper's bounds on the per-pair totals of each stage, B1 and B2, as exact rationals
// num / den (so (p-1)/2 needs no rounding). Used both for the split and the cost bound.
struct Bound {
  Bytes num, den;
  bool holds(Bytes x) const { return static_cast<unsigned __int128>(x) * den <= num; }
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
};
std::pair<Bound, Bound> pair_bounds(TwoStageVariant v, const TrafficStats& st, Rank p) {
  const auto up = static_cast<Bytes>(p);
  Bytes r = 0, c = 0;
  for (Bytes x : st.r) r = std::max(r, x);
  for (Bytes x : st.c) c = std::max(c, x);
  const Bound ceil_r{ceil_div(r, up), 1}, ceil_c{ceil_div(c, up), 1};
  // Sum over up to p-1 messages of ceil(a/p) <= total / p + (p - 1).
  const Bound loose_r{r + up * (up - 1), up}, loose_c{c + up * (up - 1), up};
  const Bound bhj_r{2 * r + up * (up - 1), 2 * up}, bhj_c{2 * c + up * (up - 1), 2 * up};
  switch (v) {
    case TwoStageVariant::transport:
    case TwoStageVariant::transport_scan:
    case TwoStageVariant::random: return {ceil_r, loose_c};
    case TwoStageVariant::transport_alt: return {loose_r, ceil_c};
    case TwoStageVariant::bhj: return {bhj_r, bhj_c};
  }
  return {};
}

void check_bounds(const TwoStageSplit& s, const CommMatrix& m, TwoStageVariant v) {
  const Rank p = m.ranks;
  const auto up = static_cast<Bytes>(p);
  const TrafficStats st = traffic_stats(m);
  const Totals tt = totals(s);
  const auto [b1, b2] = pair_bounds(v, st, p);
  for (Rank a = 0; a < p; ++a)
    for (Rank b = 0; b < p; ++b) {
      CAPTURE(a);
      CAPTURE(b);
      REQUIRE(b1.holds(tt.at1(a, b)));
      REQUIRE(b2.holds(tt.at2(a, b)));
      switch (v) {
        case TwoStageVariant::transport:
        case TwoStageVariant::transport_scan:
        case TwoStageVariant::random:
          REQUIRE(tt.at1(a, b) <= ceil_div(st.r[a], up));      // per source: ceil(r_i / p)
          REQUIRE(tt.at1(a, b) <= ceil_div(st.t, up));         // <= ceil(t / p)
          break;
        case TwoStageVariant::transport_alt:
          REQUIRE(tt.at2(a, b) <= ceil_div(st.c[b], up));      // per destination: ceil(c_j / p)
          REQUIRE(tt.at2(a, b) <= ceil_div(st.t, up));
          break;
        case TwoStageVariant::bhj:
          // r_i / p + (p-1)/2 and c_j / p + (p-1)/2, per rank (tighter than n/p^2, h/p).
          REQUIRE(2 * up * tt.at1(a, b) <= 2 * st.r[a] + up * (up - 1));
          REQUIRE(2 * up * tt.at2(a, b) <= 2 * st.c[b] + up * (up - 1));
          break;
      }
    }
  for (Rank k = 0; k < p; ++k) {
    CAPTURE(k);
    if (v == TwoStageVariant::transport_scan) {
      REQUIRE(tt.in[k] <= ceil_div(st.total_bytes, up));
      REQUIRE(tt.in[k] <= st.t);
    }
    if (v == TwoStageVariant::transport_alt) {
      REQUIRE(tt.out[k] <= ceil_div(st.total_bytes, up));
      REQUIRE(tt.out[k] <= st.t);
    }
  }
}

// Split, bounds, schedule, verifier, stage order, phase counts, cost bound: one case, one variant.
void check_case(const SplitCase& c, TwoStageVariant v, StageDecomposition d, std::uint64_t seed) {
  CAPTURE(c.name);
  const std::string variant = to_string(v);
  CAPTURE(variant);
  CAPTURE(seed);
  const CommMatrix& m = c.m;
  const Rank p = m.ranks;
  const TwoStageSplit split = two_stage_split(m, v, seed);
  REQUIRE(split.parts.size() == two_stage_part_count(m));
  REQUIRE(check_tiling(split, m) == "");
  check_bounds(split, m, v);

  const Schedule s = stage_schedule(split, m, d, seed);
  const CommMatrix m1 = stage_matrix(split, 1), m2 = stage_matrix(split, 2);
  const TrafficStats st1 = traffic_stats(m1), st2 = traffic_stats(m2);
  if (d == StageDecomposition::optimal) REQUIRE(s.phases == static_cast<Phase>(st1.h + st2.h));   // König per stage
  if (d == StageDecomposition::lp) REQUIRE(s.phases <= static_cast<Phase>(2 * std::max(p - 1, 0)));
  // Stage order: every transfer into staging precedes every transfer out of staging.
  Phase last_staged = 0, first_forward = s.phases;
  bool staged = false;
  for (const Transfer& t : s.transfers) {
    if (t.to != t.piece.dst) last_staged = std::max(last_staged, t.phase), staged = true;
    if (t.from != t.piece.src) first_forward = std::min(first_forward, t.phase);
  }
  if (staged) REQUIRE(last_staged < first_forward);
  const Plan plan = lower(s, m);
  VerifyRules rules;
  rules.contention = Contention::node;
  const auto problems = verify(plan, m, rules);
  REQUIRE_MESSAGE(problems.empty(), (problems.empty() ? "" : problems.front()));

  // Modelled cost within the paper's bound: with the optimal decomposition stage s has h_s
  // phases, with lp at most p - 1, each costing at most tau + mu B_s (rs_n promises no phase count).
  if (p >= 2 && d != StageDecomposition::rs_n) {
    const TrafficStats st = traffic_stats(m);
    const auto [b1, b2] = pair_bounds(v, st, p);
    CostOptions cost;
    cost.tau_s = 1e-6;
    cost.bandwidth_Bps = 1e9;
    const double mu = 1.0 / cost.bandwidth_Bps;
    const double estimate = synchronous_estimate_s(plan, cost);
    const double paper = 2 * (p - 1) * cost.tau_s + (p - 1) * mu * (b1.value() + b2.value());
    CHECK(estimate <= paper * (1 + 1e-12));
    if (d == StageDecomposition::optimal)
      CHECK(estimate <= ((st1.h + st2.h) * cost.tau_s + mu * (st1.h * b1.value() + st2.h * b2.value())) * (1 + 1e-12));
  }
}

std::vector<SplitCase> paper_cases() {
  std::vector<SplitCase> out;
  out.push_back({"Transportation Fig. 1", fig1()});
  out.push_back({"Transportation Fig. 2", fig2()});
  out.push_back({"Transportation Fig. 3", fig3()});
  out.push_back({"Transportation Fig. 9", fig9()});
  // The figures scaled so that t >= p^2 (the paper's regime) and by a non-multiple of p.
  for (Bytes f : {Bytes{64}, Bytes{1000003}}) {
    for (auto [name, base] : {std::pair{"Fig. 1", fig1()}, std::pair{"Fig. 9", fig9()}}) {
      std::vector<Message> msgs = messages_of(base);
      for (Message& x : msgs) x.bytes *= f;
      out.push_back({std::string(name) + " x" + std::to_string(f), make_matrix(base.ranks, msgs)});
    }
  }
  return out;
}

std::vector<SplitCase> small_split_cases() {
  std::vector<SplitCase> out;
  out.push_back({"p=1 empty", make_matrix(1, {})});
  out.push_back({"p=1 self", make_matrix(1, {{0, 0, 8}})});
  out.push_back({"p=2 both ways", make_matrix(2, {{0, 1, 3}, {1, 0, 5}, {1, 1, 2}})});
  out.push_back({"p=2 one byte", make_matrix(2, {{0, 1, 1}})});
  out.push_back({"p=3 ring", make_matrix(3, {{0, 1, 1}, {1, 2, 2}, {2, 0, 3}})});
  out.push_back({"p=3 one way", make_matrix(3, {{2, 0, 7}})});
  out.push_back({"p=3 dense", gen_dense(3, 100, 3)});
  std::uint64_t seed = 11;
  for (Rank n : {2, 3, 5, 6, 7, 12, 17, 31, 32, 33, 64, 100})
    for (double density : {0.1, 0.5, 1.0}) {
      if (n >= 64 && density > 0.1) continue;   // ~nnz * p parts: keep the file fast
      out.push_back({"sparse n=" + std::to_string(n) + " d=" + std::to_string(density),
                     gen_random_sparse(n, density, 1 + seed * 997 % 20000, seed, seed % 2 == 0)});
      ++seed;
    }
  for (Rank n : {4, 9, 16, 48})
    for (int d : {1, 3})
      if (d < n) out.push_back({"uniform n=" + std::to_string(n) + " d=" + std::to_string(d), gen_uniform(n, d, 4096 + 7, seed++)});
  for (Rank n : {20, 64})
    out.push_back({"lognormal n=" + std::to_string(n), gen_lognormal(n, 0.3, 5000, 2.0, seed++)});
  for (Rank n : {2, 3, 10, 64, 100})
    for (Rank hot : {Rank{0}, n - 1})
      if (n < 100 || hot == 0)
      out.push_back({"hot receiver n=" + std::to_string(n) + " hot=" + std::to_string(hot),
                     gen_hot_receiver(n, hot, 1 << 16, 0.1, seed++)});
  for (Rank n : {7, 32, 65})
    out.push_back({"hot spots n=" + std::to_string(n), gen_hot_spots(n, std::min<int>(n - 1, 16), 1.0 / 16, 100000 + n, seed++)});
  out.push_back({"hot spots l=1/2 k=2", gen_hot_spots(24, 2, 0.5, 77777, seed++)});
  out.push_back({"sample sort skewed n=24", gen_sample_sort_skewed(24, 200, 100, 1.1, 8, seed++)});
  out.push_back({"sample sort skewed n=50", gen_sample_sort_skewed(50, 60, 16, 1.5, 4, seed++)});
  out.push_back({"moe n=16", gen_moe_dispatch(16, 2, 64, 2, 1.2, 1024, seed++)});
  out.push_back({"moe n=40", gen_moe_dispatch(40, 1, 8, 2, 1.0, 3000, seed++)});
  return out;
}

// BHJ §3.1 eq. (7) matrices: h = n/p, 2n/p, 4n/p, 8n/p (h <= n: f <= p), with n >= p^2 and n/p a
// multiple of p, keys of 1 byte (bytes = elements).
struct BaderCase {
  SplitCase c;
  std::int64_t per_rank;   // n / p
  int f;                   // h = f n / p
};
std::vector<BaderCase> bader_cases() {
  std::vector<BaderCase> out;
  for (Rank p : {4, 8, 16, 6, 12, 24, 5})
    for (int f : {1, 2, 4, 8})
      for (std::int64_t per_rank : {static_cast<std::int64_t>(p), static_cast<std::int64_t>(4) * p})
        if (f <= p)
          out.push_back({{"BHJ eq. (7) p=" + std::to_string(p) + " h=" + std::to_string(f) + "n/p n/p=" + std::to_string(per_rank),
                          gen_bader_h_relation(p, per_rank, f, 1)},
                         per_rank, f});
  return out;
}

}  // namespace

TEST_CASE("two-stage split: bounds and verifier on the Transportation paper's figures") {
  for (const SplitCase& c : paper_cases())
    for (TwoStageVariant v : kAll) check_case(c, v, StageDecomposition::optimal, 1);
}

TEST_CASE("two-stage split: bounds and verifier on small, sparse, hot and skewed matrices") {
  std::uint64_t seed = 1;
  for (const SplitCase& c : small_split_cases())
    for (TwoStageVariant v : kAll) check_case(c, v, StageDecomposition::optimal, seed++);
}

TEST_CASE("two-stage split: every stage decomposition (optimal, lp, rs_n)") {
  std::uint64_t seed = 5;
  for (const SplitCase& c : {SplitCase{"Fig. 2", fig2()}, SplitCase{"sparse 33", gen_random_sparse(33, 0.4, 3000, 9)},
                             SplitCase{"hot 12", gen_hot_receiver(12, 3, 500, 0.3, 4)},
                             SplitCase{"bhj 16", gen_bader_h_relation(16, 64, 4, 1)}})
    for (TwoStageVariant v : kAll)
      for (StageDecomposition d : {StageDecomposition::optimal, StageDecomposition::lp, StageDecomposition::rs_n})
        check_case(c, v, d, seed++);
}

TEST_CASE("two-stage split: 150 random matrices of random shapes") {
  Rng rng(77);
  for (int k = 0; k < 150; ++k) {
    const std::uint64_t seed = rng.next();
    const auto n = static_cast<Rank>(1 + rng.below(48));
    const double density = rng.uniform();
    SplitCase c;
    switch (rng.below(4)) {
      case 0: c = {"sparse", gen_random_sparse(n, density, 1 + rng.below(1 << 14), seed, rng.below(2))}; break;
      case 1: c = {"lognormal", gen_lognormal(n, density, 300, 2.5, seed)}; break;
      case 2: c = {"hot", gen_hot_receiver(n, static_cast<Rank>(rng.below(n)), 1 + rng.below(5000), density / 4, seed)}; break;
      default: c = {"tiny messages", gen_random_sparse(n, density, 1 + rng.below(3), seed, true)}; break;
    }
    c.name += " n=" + std::to_string(n) + " case " + std::to_string(k);
    check_case(c, kAll[rng.below(5)], StageDecomposition::optimal, seed);
  }
}

TEST_CASE("two-stage split: BHJ eq. (7) under the paper's assumptions, bins <= n/p^2 + (p-1)/2 and h/p + (p-1)/2") {
  for (const auto& [c_, per_rank, f] : bader_cases()) {
    const auto& c = c_;
    CAPTURE(c.name);
    const Rank p = c.m.ranks;
    const auto up = static_cast<std::int64_t>(p);
    // The generator: every rank holds exactly n/p keys, rank 0 receives h of them.
    std::vector<std::int64_t> row(p, 0), col(p, 0);
    c.m.for_each([&](Rank i, Rank j, Bytes b) {
      row[i] += static_cast<std::int64_t>(b);
      col[j] += static_cast<std::int64_t>(b);
    });
    const std::int64_t n = up * per_rank, h = f * per_rank;
    for (Rank i = 0; i < p; ++i) REQUIRE(row[i] == per_rank);
    REQUIRE(*std::max_element(col.begin(), col.end()) == h);
    REQUIRE(col[0] == h);
    if (f == 8 && p % 4 == 0) {   // "approximately 3p/4 processors receive no elements"
      const auto empty = std::count(col.begin(), col.end(), 0);
      CHECK(empty >= 3 * up / 4 - 1);
    }
    // Bins in elements (1 byte each), self bins included: n/p^2 + (p-1)/2 and h/p + (p-1)/2.
    const TwoStageSplit s = two_stage_split(c.m, TwoStageVariant::bhj, 1);
    const Totals tt = totals(s);
    for (Rank a = 0; a < p; ++a)
      for (Rank b = 0; b < p; ++b) {
        REQUIRE(2 * up * up * static_cast<std::int64_t>(tt.at1(a, b)) <= 2 * n + up * up * (up - 1));
        REQUIRE(2 * up * static_cast<std::int64_t>(tt.at2(a, b)) <= 2 * h + up * (up - 1));
      }
    for (TwoStageVariant v : kAll) check_case(c, v, StageDecomposition::optimal, 3);
  }
}

TEST_CASE("two-stage split: the variants differ where the papers say they do") {
  // A cyclic shift of 1-byte messages: t = 1. Every transport source starts its round-robin at
  // intermediary 0, which so receives p bytes > t; the prefix scan spreads them, one per rank.
  const Rank p = 9;
  std::vector<Message> msgs;
  for (Rank i = 0; i < p; ++i) msgs.push_back({i, (i + 1) % p, 1});
  const CommMatrix shift = make_matrix(p, msgs);
  const Totals plain = totals(two_stage_split(shift, TwoStageVariant::transport, 1));
  const Totals scan = totals(two_stage_split(shift, TwoStageVariant::transport_scan, 1));
  CHECK(plain.in[0] == static_cast<Bytes>(p));
  for (Rank k = 0; k < p; ++k) CHECK(scan.in[k] == 1);

  // Transpose of the above: one source spreading remainders; transport-alt bounds stage 2 per
  // destination where transport only bounds stage 1 per source. A hot receiver of 1-byte
  // messages: transport puts every byte on intermediary 0 -> stage 2 (0, hot) carries p - 1;
  // transport-alt deals them round-robin, ceil((p-1)/p) = 1 per intermediary.
  const CommMatrix hot = gen_hot_receiver(p, 4, 1, 0, 2);
  const Totals hot_plain = totals(two_stage_split(hot, TwoStageVariant::transport, 1));
  const Totals hot_alt = totals(two_stage_split(hot, TwoStageVariant::transport_alt, 1));
  CHECK(hot_plain.at2(0, 4) == static_cast<Bytes>(p - 1));
  for (Rank k = 0; k < p; ++k) CHECK(hot_alt.at2(k, 4) <= 1);

  // BHJ starts message i -> j at bin (i + j) mod p.
  const TwoStageSplit b = two_stage_split(make_matrix(5, {{2, 4, 1}, {3, 0, 1}}), TwoStageVariant::bhj, 1);
  REQUIRE(b.parts.size() == 2);
  CHECK(b.parts[0].mid == 1);   // (2 + 4) mod 5
  CHECK(b.parts[1].mid == 3);   // (3 + 0) mod 5
}

TEST_CASE("two-stage split: self parts are not network transfers") {
  const CommMatrix m = make_matrix(4, {{1, 2, 4}, {2, 2, 9}});
  const TwoStageSplit s = two_stage_split(m, TwoStageVariant::transport, 1);
  REQUIRE(s.parts.size() == 4);   // one byte through each of ranks 0 .. 3
  const Schedule sch = stage_schedule(s, m, StageDecomposition::optimal, 1);
  REQUIRE(sch.copies.size() == 1);
  CHECK(sch.copies[0] == Piece{2, 2, 0, 9});
  // via 0 and 3: two hops each; via 1 (the source): stage 2 only; via 2 (the destination): stage 1 only.
  CHECK(sch.transfers.size() == 6);
  REQUIRE(sch.phases == 6);   // rank 1 sends to 0, 2, 3 in stage 1; rank 2 receives from 0, 1, 3 in stage 2
  int direct = 0;
  for (const Transfer& t : sch.transfers) {
    CHECK(t.from != t.to);
    if (t.from == 1 && t.to == 2) {
      ++direct;
      if (t.piece.offset == 1) CHECK(t.phase >= 3);   // part via the source (k = 1): stage 2, from the send buffer
      if (t.piece.offset == 2) CHECK(t.phase < 3);    // part via the destination (k = 2): stage 1, straight in
    }
  }
  CHECK(direct == 2);
  CHECK(verify(lower(sch, m), m, VerifyRules{}).empty());
}

TEST_CASE("two-stage split: random is seeded and deterministic, and differs across seeds") {
  const CommMatrix m = gen_random_sparse(40, 0.5, 5000, 3);
  const TwoStageSplit a = two_stage_split(m, TwoStageVariant::random, 7);
  const TwoStageSplit b = two_stage_split(m, TwoStageVariant::random, 7);
  const TwoStageSplit c = two_stage_split(m, TwoStageVariant::random, 8);
  CHECK(a.parts == b.parts);
  CHECK(a.parts != c.parts);
  for (TwoStageVariant v : {TwoStageVariant::transport, TwoStageVariant::transport_scan, TwoStageVariant::transport_alt, TwoStageVariant::bhj})
    CHECK(two_stage_split(m, v, 1).parts == two_stage_split(m, v, 2).parts);   // deterministic variants ignore the seed
}

TEST_CASE("strategy two-stage: every variant through make_plan, options, errors") {
  const CommMatrix m = gen_hot_spots(20, 8, 0.25, 50000, 4);
  for (const TwoStageVariantEntry& e : two_stage_variants())
    for (const char* algorithm : {"optimal", "lp", "rs_n"}) {
      PlanOptions o;
      o.strategy = "two-stage";
      o.variant = e.name;
      o.algorithm = algorithm;
      o.seed = 9;
      o.verify_each = true;
      const Plan plan = make_plan(m, o);
      CHECK(plan.manifest.options["variant"] == e.name);
      CHECK(plan.manifest.options["seed"] == 9);
      CHECK(plan.manifest.contract.contention == Contention::node);
      CHECK(plan.manifest.cost.estimate_s >= plan.manifest.cost.lower_bound_s);
      const Plan again = make_plan(m, o);
      CHECK(again.ranks.size() == plan.ranks.size());
      for (std::size_t r = 0; r < plan.ranks.size(); ++r) CHECK(again.ranks[r].steps == plan.ranks[r].steps);
    }
  PlanOptions bad;
  bad.strategy = "two-stage";
  bad.variant = "transpose";
  CHECK_THROWS_WITH_AS(make_plan(m, bad), doctest::Contains("transport, transport-scan, transport-alt, bhj, random"), UsageError);
  bad.variant = "bhj";
  bad.algorithm = "quantised";   // a direct-only algorithm
  CHECK_THROWS_WITH_AS(make_plan(m, bad), doctest::Contains("choose from: optimal, lp, rs_n"), UsageError);
}

TEST_CASE("skewed generators: shapes their sources describe") {
  // Transportation §9: l = 1/32, k = 32: one hot rank gets 31/32 of every other rank's traffic.
  const CommMatrix hs = gen_hot_spots(64, 32, 1.0 / 32, 32000, 1);
  const TrafficStats st = traffic_stats(hs);
  const auto hot = std::max_element(st.c.begin(), st.c.end()) - st.c.begin();
  CHECK(st.c[hot] >= 62 * 31000);
  CHECK(st.f[(hot + 1) % 64] == 32);
  for (Rank i = 0; i < 64; ++i) CHECK(st.r[i] == 32000);
  CHECK(hs.com.nonZeros() == gen_hot_spots(64, 32, 1.0 / 32, 32000, 1).com.nonZeros());

  // Sample sort on Zipf keys: every rank sends all its records; one bucket is much fuller than n/p.
  const CommMatrix ss = gen_sample_sort_skewed(32, 500, 10, 1.2, 8, 2);
  Bytes total = 0, top = 0;
  std::vector<Bytes> col(32, 0), row(32, 0);
  ss.for_each([&](Rank i, Rank j, Bytes b) { col[j] += b; row[i] += b; total += b; });
  for (Bytes b : row) CHECK(b == 5000);
  top = *std::max_element(col.begin(), col.end());
  CHECK(top > 3 * total / 32);

  // MoE dispatch: each token reaches 1 .. top_k ranks; the hottest rank receives far above average.
  const CommMatrix moe = gen_moe_dispatch(32, 2, 128, 2, 1.2, 100, 5);
  std::vector<Bytes> rrow(32, 0), rcol(32, 0);
  moe.for_each([&](Rank i, Rank j, Bytes b) { rrow[i] += b; rcol[j] += b; });
  for (Bytes b : rrow) CHECK((b >= 128 * 100 && b <= 2 * 128 * 100));
  Bytes all = 0;
  for (Bytes b : rcol) all += b;
  CHECK(*std::max_element(rcol.begin(), rcol.end()) > 4 * all / 32);
  CHECK(messages_of(moe) == messages_of(gen_moe_dispatch(32, 2, 128, 2, 1.2, 100, 5)));
}
