// decompose_lp (Ranka-Wang §4.1), decompose_rs_n (§4.2 Fig. 3), decompose_optimal (König):
// property tests on many seeded matrices with the direct-schedule oracle and the verifier,
// the paper's bounds, Table 1's RS_N iteration counts, determinism, and the generators they use.
#include "ir/random.h"
#include "passes/compress.h"
#include "passes/decompose_lp.h"
#include "passes/decompose_optimal.h"
#include "passes/decompose_rs_n.h"
#include "passes/edge_colouring_detail.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "support/decompose_checks.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace commfit;

namespace {

struct Case {
  std::string name;
  CommMatrix m;
};

// Small and medium matrices: every algorithm, the oracle and the verifier on each.
std::vector<Case> small_cases() {
  std::vector<Case> out;
  out.push_back({"p=0", make_matrix(0, {})});
  out.push_back({"p=1 empty", make_matrix(1, {})});
  out.push_back({"p=1 self", make_matrix(1, {{0, 0, 8}})});
  out.push_back({"p=2 both ways", make_matrix(2, {{0, 1, 3}, {1, 0, 5}, {1, 1, 2}})});
  out.push_back({"p=3 ring", make_matrix(3, {{0, 1, 1}, {1, 2, 2}, {2, 0, 3}})});
  out.push_back({"p=3 one way", make_matrix(3, {{2, 0, 7}})});
  std::uint64_t seed = 1;
  for (Rank n : {2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 32, 33, 64, 100, 128})
    for (double density : {0.05, 0.3, 0.9}) {
      const bool self = seed % 3 == 0;
      out.push_back({"sparse n=" + std::to_string(n) + " density=" + std::to_string(density),
                     gen_random_sparse(n, density, 1 + seed * 37 % 5000, seed, self)});
      ++seed;
    }
  for (Rank n : {2, 3, 8, 13, 32})
    out.push_back({"dense n=" + std::to_string(n), gen_dense(n, 1000, 40 + n)});
  for (Rank n : {16, 50, 128})
    for (double density : {0.1, 0.5})
      out.push_back({"lognormal n=" + std::to_string(n),
                     gen_lognormal(n, density, 4096, 2.0, 70 + static_cast<std::uint64_t>(n))});
  for (Rank n : {2, 3, 10, 64, 257})
    for (Rank hot : {Rank{0}, n / 2, n - 1})
      out.push_back({"hot n=" + std::to_string(n) + " hot=" + std::to_string(hot),
                     gen_hot_receiver(n, hot, 1 << 20, n > 10 ? 0.05 : 0.3, 90 + static_cast<std::uint64_t>(hot))});
  for (int d : {1, 4, 16, 48, 63})
    out.push_back({"uniform n=64 d=" + std::to_string(d), gen_uniform(64, d, 1024, 100 + d)});
  for (int d : {4, 16})
    out.push_back({"nonuniform n=64 d=" + std::to_string(d), gen_nonuniform(64, d, 16, 200 + d)});
  out.push_back({"uniform n=100 d=99", gen_uniform(100, 99, 1, 3)});
  out.push_back({"uniform n=37 d=18", gen_uniform(37, 18, 5, 4)});
  return out;
}

// Larger matrices, up to p = 4096, for decompose_optimal (including the hashed colour table).
std::vector<Case> large_cases() {
  std::vector<Case> out;
  out.push_back({"sparse 4096", gen_random_sparse(4096, 0.01, 1 << 16, 5, true)});
  out.push_back({"hot 4096", gen_hot_receiver(4096, 1234, 1 << 16, 0.002, 6)});
  out.push_back({"hot 4096 denser background", gen_hot_receiver(4096, 4095, 1 << 16, 0.02, 7)});
  // Flips through senders of degree 1 (hash maps of two slots).
  out.push_back({"hot 4096 thin background", gen_hot_receiver(4096, 4095, 1 << 20, 0.0003, 22)});
  out.push_back({"hot 16384 thin background", gen_hot_receiver(16384, 0, 1 << 20, 0.0001, 22)});
  out.push_back({"uniform 1024 d=128", gen_uniform(1024, 128, 100, 8)});
  out.push_back({"uniform 300 d=290", gen_uniform(300, 290, 100, 9)});
  out.push_back({"lognormal 2048", gen_lognormal(2048, 0.02, 65536, 2.5, 10)});
  out.push_back({"dense 200", gen_dense(200, 1 << 20, 11)});
  out.push_back({"nonuniform 1000 d=100", gen_nonuniform(1000, 100, 1, 12)});
  return out;
}

std::vector<std::string> verified(const Schedule& s, const CommMatrix& m) {
  return verify(lower(s, m), m, VerifyRules{});
}

void check_all_algorithms(const Case& c, std::uint64_t seed, bool run_verifier) {
  CAPTURE(c.name);
  CAPTURE(seed);
  const CommMatrix& m = c.m;
  const TrafficStats st = traffic_stats(m);

  const Schedule opt = decompose_optimal(m);
  REQUIRE(test::check_direct_schedule(opt, m) == "");
  REQUIRE(opt.phases == static_cast<Phase>(st.h));   // König: exactly h phases

  const Schedule lp = decompose_lp(m);
  REQUIRE(test::check_direct_schedule(lp, m) == "");
  CHECK(lp.phases <= static_cast<Phase>(std::max(m.ranks - 1, 0)));
  CHECK(lp.phases >= static_cast<Phase>(st.h));

  const Schedule rs = decompose_rs_n(compress(m, seed), m, seed);
  REQUIRE(test::check_direct_schedule(rs, m) == "");
  CHECK(rs.phases >= static_cast<Phase>(st.h));

  if (run_verifier) {
    CHECK(verified(opt, m).empty());
    CHECK(verified(lp, m).empty());
    CHECK(verified(rs, m).empty());
  }
}

// Fig. 3, transcribed literally (send/receive reset and all n rows scanned every iteration),
// as the reference for the bookkeeping shortcuts of decompose_rs_n (RsState of
// passes/ranka_wang_detail.h). The salt must match kRsStartRowSalt there.
Schedule rs_n_reference(CompressedMatrix ccom, const CommMatrix& m, std::uint64_t seed) {
  const Rank n = ccom.ranks;
  Schedule s;
  s.ranks = n;
  s.copies = local_copies(m);
  Rng rng(seed ^ 0x7a3c5e91d2b4f608ULL);
  auto remaining = [&] {
    return std::any_of(ccom.prt.begin(), ccom.prt.end(), [](std::int64_t k) { return k > 0; });
  };
  std::vector<Rank> send(n), receive(n);
  for (Phase phase = 0; n > 0 && remaining(); ++phase) {
    std::fill(send.begin(), send.end(), -1);
    std::fill(receive.begin(), receive.end(), -1);
    const auto x = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(n)));
    for (Rank y = 0; y < n; ++y) {
      const Rank i = (x + y) % n;
      for (std::int64_t j = 0; send[i] == -1 && j < ccom.prt[i]; ++j) {
        const Rank k = ccom.row(i)[j];
        if (receive[k] == -1) {
          send[i] = k;
          receive[k] = i;
          ccom.row(i)[j] = ccom.row(i)[ccom.prt[i] - 1];
          ccom.row(i)[ccom.prt[i] - 1] = -1;
          --ccom.prt[i];
        }
      }
    }
    for (Rank i = 0; i < n; ++i)
      if (send[i] >= 0) s.transfers.push_back({phase, i, send[i], {i, send[i], 0, m.at(i, send[i])}});
    s.phases = phase + 1;
  }
  canonicalize(s);
  return s;
}

using test::same_schedule;

}  // namespace

TEST_CASE("decompose: every algorithm on small and skewed matrices") {
  std::uint64_t seed = 1;
  for (const Case& c : small_cases()) check_all_algorithms(c, seed++, true);
}

TEST_CASE("decompose: 300 random matrices of random shapes") {
  Rng rng(2024);
  for (std::uint64_t k = 0; k < 300; ++k) {
    const std::uint64_t seed = rng.next();
    const auto n = static_cast<Rank>(1 + rng.below(k < 250 ? 40 : 300));
    const double density = rng.uniform();
    Case c;
    switch (rng.below(5)) {
      case 0: c = {"sparse", gen_random_sparse(n, density, 1 + rng.below(1 << 20), seed, rng.below(2))}; break;
      case 1: c = {"lognormal", gen_lognormal(n, density, 1000, 3.0, seed)}; break;
      case 2: c = {"hot", gen_hot_receiver(n, static_cast<Rank>(rng.below(n)), 100, density / 4, seed)}; break;
      case 3: c = {"uniform", gen_uniform(n, static_cast<int>(rng.below(n)), 1 + rng.below(100), seed)}; break;
      default: c = {"nonuniform", gen_nonuniform(n, static_cast<int>(rng.below(n)), 8, seed)}; break;
    }
    c.name += " n=" + std::to_string(n) + " case " + std::to_string(k);
    check_all_algorithms(c, seed, true);
  }
}

TEST_CASE("decompose: matrices up to p = 4096") {
  std::uint64_t seed = 1000;
  for (const Case& c : large_cases()) check_all_algorithms(c, seed++, c.m.nnz() < 200000);
}

TEST_CASE("decompose_optimal: a hot receiver at p = 4096 needs exactly p - 1 phases") {
  const CommMatrix m = gen_hot_receiver(4096, 7, 1000, 0.01, 21);
  const Schedule s = decompose_optimal(m);
  REQUIRE(test::check_direct_schedule(s, m) == "");
  CHECK(s.phases == 4095);
}

TEST_CASE("decompose_optimal: a hot receiver at p = 65536 stays within O(m + p) memory") {
  // h = 65535: a dense p x h colour table would need 2 x 65536 x 65535 entries (34 GB); the
  // hashed table holds O(m + p).
  const CommMatrix m = gen_hot_receiver(65536, 65535, 1 << 20, 2e-5, 22);
  const Schedule s = decompose_optimal(m);
  REQUIRE(test::check_direct_schedule(s, m) == "");
  CHECK(s.phases == 65535);
}

TEST_CASE("decompose_optimal: the largest message goes first") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const CommMatrix m = gen_lognormal(64, 0.3, 1000, 2.0, seed);
    const Schedule s = decompose_optimal(m);
    Bytes largest = 0;
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != j) largest = std::max(largest, b);
    });
    const std::vector<Bytes> top = phase_max_piece(s);
    REQUIRE(!top.empty());
    CHECK(top[0] == largest);
  }
}

TEST_CASE("decompose_lp: Fig. 2 pairing") {
  SUBCASE("power of two: i -> j and j -> i share a phase (a pairwise exchange)") {
    const CommMatrix m = gen_random_sparse(32, 0.4, 100, 3);
    const Schedule s = decompose_lp(m);
    for (const Transfer& t : s.transfers) {
      if (!m.at(t.to, t.from)) continue;
      const bool paired = std::any_of(s.transfers.begin(), s.transfers.end(), [&](const Transfer& r) {
        return r.from == t.to && r.to == t.from && r.phase == t.phase;
      });
      CHECK(paired);
    }
  }
  SUBCASE("dense matrices need all p - 1 steps") {
    for (Rank n : {2, 3, 5, 8, 12, 16}) {
      const CommMatrix m = gen_dense(n, 10, 4);
      CHECK(decompose_lp(m).phases == static_cast<Phase>(n - 1));
    }
  }
  SUBCASE("empty steps are dropped") {
    // p = 6 (not a power of two): only shifts 1 and 3 are used.
    const CommMatrix m = make_matrix(6, {{0, 1, 5}, {4, 5, 5}, {2, 5, 5}, {5, 2, 1}, {3, 3, 9}});
    const Schedule s = decompose_lp(m);
    CHECK(s.phases == 2);
    CHECK(s.copies == std::vector<Piece>{{3, 3, 0, 9}});
  }
}

TEST_CASE("decompose_rs_n: identical to a literal transcription of Fig. 3") {
  std::uint64_t seed = 7;
  for (const Case& c : small_cases()) {
    CAPTURE(c.name);
    const CompressedMatrix ccom = compress(c.m, seed);
    CHECK(same_schedule(decompose_rs_n(ccom, c.m, seed), rs_n_reference(ccom, c.m, seed)));
    ++seed;
  }
}

TEST_CASE("decompose_rs_n: Ranka-Wang Table 1 iteration counts") {
  // n = 64, 50 random samples per density d, RS_N "# iters" of Table 1.
  const int ds[] = {4, 8, 16, 32, 48};
  const double paper[] = {5.92, 10.5, 19.16, 35.52, 51.58};
  constexpr int kSamples = 50;
  std::printf("RS_N phases, n = 64, %d samples per d (Ranka-Wang Table 1)\n", kSamples);
  std::printf("%4s %8s %8s %7s\n", "d", "ours", "paper", "ratio");
  for (int k = 0; k < 5; ++k) {
    double total = 0;
    for (int sample = 0; sample < kSamples; ++sample) {
      const std::uint64_t seed = 1000 * static_cast<std::uint64_t>(ds[k]) + static_cast<std::uint64_t>(sample);
      const CommMatrix m = gen_uniform(64, ds[k], 1024, seed);
      const Schedule s = decompose_rs_n(compress(m, seed), m, seed);
      REQUIRE(test::check_direct_schedule(s, m) == "");
      total += s.phases;
    }
    const double ours = total / kSamples;
    const double ratio = ours / paper[k];
    std::printf("%4d %8.2f %8.2f %7.3f\n", ds[k], ours, paper[k], ratio);
    CAPTURE(ds[k]);
    CHECK(ratio >= 0.9);
    CHECK(ratio <= 1.1);
  }
}

TEST_CASE("decompose: determinism") {
  const CommMatrix m = gen_lognormal(200, 0.1, 5000, 1.5, 31);
  SUBCASE("same seed same schedule") {
    CHECK(same_schedule(decompose_rs_n(compress(m, 5), m, 5), decompose_rs_n(compress(m, 5), m, 5)));
    CHECK(same_schedule(decompose_optimal(m), decompose_optimal(m)));
    CHECK(same_schedule(decompose_lp(m), decompose_lp(m)));
  }
  SUBCASE("rs_n: different seeds give different schedules") {
    const Schedule a = decompose_rs_n(compress(m, 5), m, 5);
    const Schedule b = decompose_rs_n(compress(m, 6), m, 6);
    CHECK_FALSE(same_schedule(a, b));
    // The start-row seed alone changes the schedule too.
    const CompressedMatrix c = compress(m, 5);
    CHECK_FALSE(same_schedule(decompose_rs_n(c, m, 5), decompose_rs_n(c, m, 6)));
  }
}

TEST_CASE("edge colouring: dense and hashed tables agree on multigraphs") {
  // The union of d random permutations (a d-regular bipartite multigraph: repeated pairs and
  // "self" pairs allowed here), tight as it is or thinned so that degrees vary down to 1,
  // coloured with d colours by both tables, in the same order, with the hashed tables' tracked
  // ranges [0, degree): the colourings must be proper, complete and identical.
  using namespace commfit::detail;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed);
    const Vertex p = static_cast<Vertex>(1 + rng.below(300));
    const Colour d = static_cast<Colour>(1 + rng.below(40));
    const std::uint64_t keep_percent = seed % 2 ? 100 : 10 + rng.below(80);
    std::vector<std::pair<Vertex, Vertex>> edges;
    std::vector<Vertex> perm(static_cast<std::size_t>(p));
    for (Colour k = 0; k < d; ++k) {
      for (Vertex i = 0; i < p; ++i) perm[i] = i;
      rng.shuffle(perm.begin(), perm.end());
      for (Vertex i = 0; i < p; ++i)
        if (rng.below(100) < keep_percent) edges.push_back({i, p + perm[i]});
    }
    rng.shuffle(edges.begin(), edges.end());
    std::vector<std::int32_t> degree(2 * static_cast<std::size_t>(p), 0);
    for (const auto& [u, v] : edges) ++degree[u], ++degree[v];
    DenseTable dense(2 * p, d);
    HashedTable hashed(degree);
    FreeColours free_dense(degree), free_hashed(degree);
    KempeColouring<DenseTable> kd(dense, free_dense);
    KempeColouring<HashedTable> kh(hashed, free_hashed);
    for (const auto& [u, v] : edges) {
      CHECK(kd.colour(u, v) < d);
      CHECK(kh.colour(u, v) < d);
    }
    CAPTURE(seed);
    for (Vertex x = 0; x < 2 * p; ++x) {
      std::vector<std::pair<Colour, Vertex>> a, b;
      dense.for_each(x, [&](Colour c, Vertex w) { a.push_back({c, w}); });
      hashed.for_each(x, [&](Colour c, Vertex w) { b.push_back({c, w}); });
      std::sort(b.begin(), b.end());
      REQUIRE(a == b);
      CHECK(static_cast<std::int32_t>(a.size()) == degree[x]);   // every edge coloured, colours distinct at x
      for (const auto& [c, w] : a) CHECK(dense.get(w, c) == x);   // both ends agree
    }
  }
}

namespace {

// The quantised split's colouring as it was written before it used KempeColouring (the oracle
// for Walk::textbook): per vertex and colour the edge id; first fit below cap, else with a, b the
// smallest colours free at u and v, the a/b path from v swapped and a taken.
std::vector<std::int32_t> textbook_reference(std::int64_t vertices, std::int64_t cap,
                                             const std::vector<std::pair<std::int32_t, std::int32_t>>& edges) {
  std::vector<std::int64_t> at(static_cast<std::size_t>(vertices * cap), -1);
  std::vector<std::int32_t> colour(edges.size(), -1);
  auto slot = [&](std::int64_t x, std::int64_t c) -> std::int64_t& { return at[static_cast<std::size_t>(x * cap + c)]; };
  auto first_free = [&](std::int64_t x, std::int64_t y) {
    for (std::int64_t c = 0; c < cap; ++c)
      if (slot(x, c) < 0 && (y < 0 || slot(y, c) < 0)) return c;
    return std::int64_t{-1};
  };
  auto set = [&](std::int64_t e, std::int64_t c) {
    colour[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(c);
    slot(edges[static_cast<std::size_t>(e)].first, c) = e;
    slot(edges[static_cast<std::size_t>(e)].second, c) = e;
  };
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [u, v] = edges[e];
    if (const std::int64_t c = first_free(u, v); c >= 0) {
      set(static_cast<std::int64_t>(e), c);
      continue;
    }
    const std::int64_t a = first_free(u, -1), b = first_free(v, -1);
    REQUIRE((a >= 0 && b >= 0));
    std::vector<std::int64_t> path;
    for (std::int64_t x = v, c = a; slot(x, c) >= 0; c = c == a ? b : a) {
      const std::int64_t f = slot(x, c);
      path.push_back(f);
      x = x == edges[static_cast<std::size_t>(f)].first ? edges[static_cast<std::size_t>(f)].second : edges[static_cast<std::size_t>(f)].first;
    }
    for (std::int64_t f : path) {
      slot(edges[static_cast<std::size_t>(f)].first, colour[static_cast<std::size_t>(f)]) = -1;
      slot(edges[static_cast<std::size_t>(f)].second, colour[static_cast<std::size_t>(f)]) = -1;
    }
    for (std::int64_t f : path) set(f, colour[static_cast<std::size_t>(f)] == a ? b : a);
    set(static_cast<std::int64_t>(e), a);
  }
  return colour;
}

}  // namespace

TEST_CASE("edge colouring: the textbook walk on Linked tables keeps edge ids, as the reference") {
  // Multigraphs with many parallel edges (the pieces of a message), coloured with the maximum
  // degree D as the cap (every flip needed) or D plus some slack, in random edge order: the
  // colouring is proper and complete, both ends hold the same edge id, and every edge has the
  // colour the spelt-out reference gives it.
  using namespace commfit::detail;
  using Table = DenseTableOf<Linked>;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    const Vertex p = static_cast<Vertex>(1 + rng.below(seed % 4 ? 12 : 80));
    std::vector<std::pair<std::int32_t, std::int32_t>> edges;
    const std::uint64_t pairs = 1 + rng.below(static_cast<std::uint64_t>(3 * p));
    for (std::uint64_t k = 0; k < pairs; ++k) {
      const auto u = static_cast<Vertex>(rng.below(static_cast<std::uint64_t>(p)));
      const auto v = static_cast<Vertex>(p + rng.below(static_cast<std::uint64_t>(p)));
      for (std::uint64_t m = 1 + rng.below(rng.below(2) ? 1 : 6); m > 0; --m) edges.push_back({u, v});
    }
    rng.shuffle(edges.begin(), edges.end());
    std::vector<std::int32_t> degree(2 * static_cast<std::size_t>(p), 0);
    for (const auto& [u, v] : edges) ++degree[u], ++degree[v];
    const Colour d = *std::max_element(degree.begin(), degree.end());
    const Colour cap = d + static_cast<Colour>(seed % 3 ? 0 : rng.below(static_cast<std::uint64_t>(d)));
    Table table(2 * p, cap);
    {
      FreeColours free(std::vector<std::int32_t>(degree.size(), cap));
      KempeColouring<Table> kempe(table, free, KempeColouring<Table>::Walk::textbook);
      for (std::size_t e = 0; e < edges.size(); ++e) CHECK(kempe.colour(edges[e].first, edges[e].second, static_cast<std::int32_t>(e)) < cap);
    }
    CAPTURE(seed);
    std::vector<std::int32_t> colour(edges.size(), -1);
    for (Vertex x = 0; x < 2 * p; ++x) {
      std::int32_t count = 0;
      table.for_each(x, [&](Colour c, Linked w) {
        ++count;
        REQUIRE((w.edge >= 0 && static_cast<std::size_t>(w.edge) < edges.size()));
        const auto [u, v] = edges[static_cast<std::size_t>(w.edge)];
        CHECK(((x == u && w.nb == v) || (x == v && w.nb == u)));   // the entry is that edge, seen from x
        const Linked back = table.get(w.nb, c);
        CHECK((back.nb == x && back.edge == w.edge));              // both ends agree
        if (x < p) colour[static_cast<std::size_t>(w.edge)] = c;
      });
      CHECK(count == degree[x]);   // colours distinct at x and every edge of x coloured
    }
    CHECK(colour == textbook_reference(2 * p, cap, edges));
  }
}

TEST_CASE("gen_uniform: exactly d distinct partners each way and no self messages") {
  for (Rank n : {1, 2, 3, 4, 5, 9, 64, 101})
    for (int d : {0, 1, 2, 3, n / 2, n - 2, n - 1}) {
      if (d < 0 || d > n - 1) continue;
      CAPTURE(n);
      CAPTURE(d);
      const CommMatrix m = gen_uniform(n, d, 7, static_cast<std::uint64_t>(n * 131 + d));
      const TrafficStats st = traffic_stats(m);
      CHECK(st.local_copies == 0);
      CHECK(st.messages == static_cast<std::int64_t>(n) * d);
      for (Rank i = 0; i < n; ++i) {
        CHECK(st.f[i] == d);   // make_matrix rejects duplicate pairs, so partners are distinct
        CHECK(st.g[i] == d);
      }
    }
}

TEST_CASE("generators: shapes and sizes") {
  const CommMatrix dense = gen_dense(20, 50, 1);
  CHECK(dense.nnz() == 400);
  dense.for_each([](Rank, Rank, Bytes b) { CHECK((b >= 1 && b <= 50)); });

  const CommMatrix hot = gen_hot_receiver(300, 17, 10, 0.0, 2);
  const TrafficStats hs = traffic_stats(hot);
  CHECK(hs.g[17] == 299);
  CHECK(hs.messages == 299);

  const CommMatrix sparse = gen_random_sparse(2000, 0.01, 100, 3);
  const double expected = 2000.0 * 1999 * 0.01;
  CHECK(std::abs(static_cast<double>(sparse.nnz()) - expected) < 5 * std::sqrt(expected));
  CHECK(traffic_stats(sparse).local_copies == 0);
  CHECK(traffic_stats(gen_random_sparse(100, 1.0, 5, 4, true)).local_copies == 100);

  const CommMatrix nonuniform = gen_nonuniform(64, 8, 16, 5);
  nonuniform.for_each([](Rank, Rank, Bytes b) { CHECK((b % 16 == 0 && b < 64 * 16)); });
  CHECK(nonuniform.nnz() <= 64 * 8);

  // Lognormal sizes: the median of the drawn sizes is near the requested median.
  const CommMatrix ln = gen_lognormal(300, 0.1, 1000, 1.0, 6);
  std::vector<Bytes> sizes;
  ln.for_each([&](Rank, Rank, Bytes b) { sizes.push_back(b); });
  std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
  CHECK(sizes[sizes.size() / 2] > 900);
  CHECK(sizes[sizes.size() / 2] < 1100);

  // Same seed, same matrix.
  CHECK(messages_of(gen_lognormal(50, 0.2, 100, 1.0, 9)) == messages_of(gen_lognormal(50, 0.2, 100, 1.0, 9)));
  CHECK(messages_of(gen_uniform(50, 10, 1, 9)) == messages_of(gen_uniform(50, 10, 1, 9)));
  CHECK(messages_of(gen_uniform(50, 10, 1, 9)) != messages_of(gen_uniform(50, 10, 1, 10)));
}
