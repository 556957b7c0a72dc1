// The defining property of each generator of `commfit gen` that is not tested beside the pass
// that uses it (gen_uniform's d partners each way: test_decompose.cpp; the Ranka-Wang sets'
// phase counts: test_ranka_wang.cpp; hot-spots, sample sort and MoE shapes: test_two_stage.cpp):
// stencils' neighbour counts and piece sizes, the Transportation (k, l) split, Bader-Helman-JaJa
// eq. (7), sample sort's bucket balance, MoE's routing, and `commfit gen` itself (every kind,
// seeds, errors).
#include "backends/atomic_output.h"
#include "ir/comm_matrix.h"
#include "ir/matrix_io.h"
#include "workloads/skewed.h"
#include "workloads/stencil.h"
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

using namespace commfit;
using commfit::test::slurp;
namespace fs = std::filesystem;

namespace {

// Pairs (x, x') on an axis of length L with |x - x'| <= 1: L + 2 (L - 1).
std::int64_t near_pairs(std::int64_t len) { return len + 2 * (len - 1); }

std::vector<std::vector<Bytes>> rows_of(const CommMatrix& m) {
  std::vector<std::vector<Bytes>> rows(static_cast<std::size_t>(m.ranks));
  m.for_each([&](Rank i, Rank, Bytes b) { rows[i].push_back(b); });
  return rows;
}

}  // namespace

TEST_CASE("gen_stencil: non-periodic neighbour counts on 2D and 3D grids") {
  const std::int64_t cells = 10;
  for (const std::vector<Rank>& g : {std::vector<Rank>{1, 1}, {2, 3}, {5, 4}, {7, 1}, {3, 3, 3}, {4, 2, 5}, {1, 6, 2}}) {
    const bool three = g.size() == 3;
    for (int points : three ? std::vector<int>{7, 27} : std::vector<int>{5, 9}) {
      CAPTURE(points);
      CAPTURE(g[0]);
      CAPTURE(g[1]);
      const CommMatrix m = gen_stencil(g, points, false, cells, 8);
      const TrafficStats st = traffic_stats(m);
      std::int64_t p = 1, faces = 0, near = 1;
      for (std::size_t a = 0; a < g.size(); ++a) {
        p *= g[a];
        near *= near_pairs(g[a]);
        faces += 2 * (g[a] - 1) * [&] {   // face-adjacent ordered pairs along axis a
          std::int64_t other = 1;
          for (std::size_t b = 0; b < g.size(); ++b)
            if (b != a) other *= g[b];
          return other;
        }();
      }
      CHECK(m.ranks == p);
      CHECK(st.local_copies == 0);
      // 5/7-point: one message per face-adjacent ordered pair; 9/27-point: every ordered pair of
      // ranks within distance one in every axis.
      CHECK(st.messages == (points == 5 || points == 7 ? faces : near - p));
      // Symmetric, and a piece's size is cells^(d - axes it crosses) values.
      m.for_each([&](Rank i, Rank j, Bytes b) {
        CHECK(m.at(j, i) == b);
        const int d = static_cast<int>(g.size());
        Rank ci = i, cj = j;
        int axes = 0;
        for (int a = 0; a < d; ++a) {
          axes += (ci % g[a]) != (cj % g[a]);
          CHECK(std::abs(ci % g[a] - cj % g[a]) <= 1);
          ci /= g[a];
          cj /= g[a];
        }
        CHECK(b == static_cast<Bytes>(std::pow(cells, d - axes)) * 8);
        if (points == 5 || points == 7) CHECK(axes == 1);
      });
    }
  }
  // Corner rank 0 of a large grid: 2, 3, 3 and 7 neighbours.
  CHECK(traffic_stats(gen_stencil({6, 6}, 5, false, 4, 8)).f[0] == 2);
  CHECK(traffic_stats(gen_stencil({6, 6}, 9, false, 4, 8)).f[0] == 3);
  CHECK(traffic_stats(gen_stencil({6, 6, 6}, 7, false, 4, 8)).f[0] == 3);
  CHECK(traffic_stats(gen_stencil({6, 6, 6}, 27, false, 4, 8)).f[0] == 7);
}

TEST_CASE("gen_stencil: periodic grids give every rank 4, 8, 6 or 26 neighbours") {
  const std::int64_t n = 6;
  for (auto [grid, points_, faces, edges, corners] :
       {std::tuple{std::vector<Rank>{3, 5}, 5, 4, 0, 0}, std::tuple{std::vector<Rank>{4, 3}, 9, 4, 4, 0},
        std::tuple{std::vector<Rank>{3, 4, 3}, 7, 6, 0, 0}, std::tuple{std::vector<Rank>{3, 3, 4}, 27, 6, 12, 8}}) {
    const auto& points = points_;
    CAPTURE(points);
    const CommMatrix m = gen_stencil(grid, points, true, n, 4);
    const TrafficStats st = traffic_stats(m);
    const int d = static_cast<int>(grid.size());
    const Bytes face = static_cast<Bytes>(std::pow(n, d - 1)) * 4, edge = d == 3 ? n * 4 : 4, corner = 4;
    for (Rank i = 0; i < m.ranks; ++i) {
      CHECK(st.f[i] == faces + edges + corners);
      CHECK(st.g[i] == faces + edges + corners);
      CHECK(st.r[i] == faces * face + edges * edge + corners * corner);
    }
  }
  // An axis of 2 ranks: both offsets reach the same rank, so the pieces add up; of 1: local copies.
  const CommMatrix two = gen_stencil({2, 1}, 5, true, 8, 1);
  CHECK(two.at(0, 1) == 2 * 8);
  CHECK(two.at(0, 0) == 2 * 8);   // the y axis of one rank wraps onto itself
  CHECK(traffic_stats(two).local_copies == 2);
}

TEST_CASE("gen_stencil: the 4 x 4 5-point example is examples/stencil2d_16.json") {
  const CommMatrix ours = gen_stencil({4, 4}, 5, false, 1024, 8);
  const MatrixFile ex = read_matrix(fs::path(COMMFIT_SOURCE_DIR) / "examples/stencil2d_16.json");
  CHECK(matrix_fingerprint(ours) == matrix_fingerprint(ex.matrix));
}

TEST_CASE("gen_transport_kl: fan-out k, l t bytes to (1 - l) k ranks, (1 - l) t to l k, every r and c equal t") {
  for (auto [p_, k_, l_, t] : {std::tuple{64, 32, 1.0 / 32, Bytes{320000}}, std::tuple{64, 2, 0.5, Bytes{1000}},
                            std::tuple{100, 8, 0.25, Bytes{77777}}, std::tuple{33, 32, 0.125, Bytes{4096}},
                            std::tuple{10, 1, 0.5, Bytes{55}}, std::tuple{256, 16, 1.0 / 16, Bytes{1 << 20}}}) {
    const auto& p = p_; const auto& k = k_; const auto& l = l_;
    CAPTURE(p);
    CAPTURE(k);
    CAPTURE(l);
    const CommMatrix m = gen_transport_kl(p, k, l, t, 7);
    const TrafficStats st = traffic_stats(m);
    CHECK(st.local_copies == 0);
    CHECK(st.messages == static_cast<std::int64_t>(p) * k);
    for (Rank i = 0; i < p; ++i) {
      CHECK(st.f[i] == k);
      CHECK(st.g[i] == k);
      CHECK(st.r[i] == t);
      CHECK(st.c[i] == t);
    }
    // Per sender: the round(l k) largest messages carry (1 - l) t (rounded), the others l t.
    const int heavy = k == 1 ? 1 : std::clamp<int>(static_cast<int>(std::lround(l * k)), 1, k - 1);
    const Bytes heavy_bytes = k == 1 ? t : static_cast<Bytes>(std::llround((1 - l) * static_cast<double>(t)));
    for (auto row : rows_of(m)) {
      std::sort(row.rbegin(), row.rend());
      CHECK(std::accumulate(row.begin(), row.begin() + heavy, Bytes{0}) == heavy_bytes);
      CHECK(std::accumulate(row.begin() + heavy, row.end(), Bytes{0}) == t - heavy_bytes);
      CHECK(row.front() - row[heavy - 1] <= 1);   // evenly within the heavy group
      if (heavy < k) CHECK(row[heavy] - row.back() <= 1);
    }
  }
  // The paper's best case: of each sender's 32 messages one carries 31/32 of its traffic.
  const CommMatrix best = gen_transport_kl(64, 32, 1.0 / 32, 32000, 3);
  for (const auto& row : rows_of(best)) CHECK(*std::max_element(row.begin(), row.end()) == 31000);
  // Seeded: same seed same matrix, other seed another.
  CHECK(messages_of(gen_transport_kl(50, 6, 0.5, 600, 1)) == messages_of(gen_transport_kl(50, 6, 0.5, 600, 1)));
  CHECK(messages_of(gen_transport_kl(50, 6, 0.5, 600, 1)) != messages_of(gen_transport_kl(50, 6, 0.5, 600, 2)));
  // Too little traffic to give every message a byte.
  CHECK_FALSE(transport_kl_split(32, 1.0 / 32, 100).every_message_nonempty);
  CHECK(transport_kl_split(32, 1.0 / 32, 10000).every_message_nonempty);
}

TEST_CASE("gen_bader_h_relation: column sums are eq. (7)'s v_i, row sums n / p, keys held cyclically") {
  const Rank p = 16;
  const std::int64_t per = 64, n = p * per;
  for (int factor : {1, 2, 4, 8}) {
    CAPTURE(factor);
    const double h = factor * static_cast<double>(per);
    // Eq. (7) in floating point (2n/h is an integer here, so the paper's sum is exact).
    std::vector<std::int64_t> v(p, 0);
    std::int64_t sum = 0;
    for (Rank i = 0; i < p - 1; ++i) {
      if (factor > 1 && i >= 2.0 * n / h) break;
      v[i] = factor == 1 ? per : static_cast<std::int64_t>(std::floor(h * (1 - h / (2.0 * n - h) * i)));
      sum += v[i];
    }
    v[p - 1] = n - sum;
    const CommMatrix m = gen_bader_h_relation(p, per, factor, 8);
    const TrafficStats st = traffic_stats(m);
    std::vector<Bytes> col(p, 0), row(p, 0);
    m.for_each([&](Rank i, Rank j, Bytes b) {
      col[j] += b;
      row[i] += b;
      // Key g (on rank g mod p) is labelled for j when it lies in j's block: each rank holds
      // every p-th key of the block, so its share differs from v_j / p by under one key.
      CHECK(std::abs(static_cast<double>(b / 8) - static_cast<double>(v[j]) / p) < 1.0);
    });
    for (Rank i = 0; i < p; ++i) {
      CHECK(row[i] == static_cast<Bytes>(per) * 8);
      CHECK(col[i] == static_cast<Bytes>(v[i]) * 8);
    }
    CHECK(col[0] == static_cast<Bytes>(h) * 8);   // processor 0 receives h
    const auto idle = std::count(col.begin(), col.end(), Bytes{0});
    if (factor == 8) CHECK(idle >= p / 2);           // "approximately 3p/4 processors receive no elements"
    if (factor == 1) CHECK(st.h == p - 1);           // the transpose: everyone to everyone
  }
}

TEST_CASE("gen_moe_dispatch: top-1 routing sends every token once; uniform popularity spreads it") {
  const CommMatrix m = gen_moe_dispatch(16, 2, 400, 1, 0.0, 10, 3);
  std::vector<Bytes> row(16, 0), col(16, 0);
  m.for_each([&](Rank i, Rank j, Bytes b) {
    row[i] += b;
    col[j] += b;
  });
  for (Bytes b : row) CHECK(b == 400 * 10);
  for (Bytes b : col) CHECK((b > 400 * 10 / 2 && b < 400 * 10 * 2));   // about n/p each without skew
}

TEST_CASE("gen_sample_sort_skewed: splitters from a regular sample balance unskewed keys; skew fills one bucket") {
  // Every rank sends all its records (row sums), unskewed keys land within a factor of two of
  // n/p per bucket, and Zipf keys with s = 1.5 put far more than n/p into one bucket.
  const Rank p = 16;
  const std::int64_t keys = 2000;
  for (double s : {0.0, 1.5}) {
    CAPTURE(s);
    const CommMatrix m = gen_sample_sort_skewed(p, keys, 4, s, 64, 11);
    std::vector<Bytes> row(p, 0), col(p, 0);
    m.for_each([&](Rank i, Rank j, Bytes b) {
      row[i] += b;
      col[j] += b;
    });
    for (Bytes b : row) CHECK(b == static_cast<Bytes>(keys) * 4);
    const Bytes mean = static_cast<Bytes>(keys) * 4;   // n/p records per bucket on average
    const Bytes top = *std::max_element(col.begin(), col.end());
    if (s == 0.0) {
      CHECK(top <= 2 * mean);
      CHECK(*std::min_element(col.begin(), col.end()) >= mean / 2);
    } else {
      CHECK(top > 3 * mean);
    }
  }
}

// `commfit gen` end to end.
namespace {

fs::path gen_scratch() { return test::scratch_dir("gen"); }

test::CommandRun gen(const std::string& args) { return test::run_commfit("gen " + args, gen_scratch(), gen_scratch()); }

}  // namespace

TEST_CASE("commfit gen: every kind writes a loadable matrix; seeds decide it") {
  const std::vector<std::pair<std::string, bool>> kinds = {
      {"uniform -n 32 -d 4", true},
      {"nonuniform -n 32 -d 4", true},
      {"random -n 32 --density 0.2", true},
      {"dense -n 8", true},
      {"hot -n 32 --hot 3 --density 0.1", true},
      {"lognormal -n 32 --density 0.2", true},
      {"transport -n 64 -k 32 --l 0.03125 --traffic 32000", true},
      {"hot-spots -n 64 -k 8 --l 0.125 --traffic 8000", true},
      {"bader -n 16 --keys-per-rank 64 --h-factor 4", false},
      {"stencil --grid 4x4x2 --points 27 --periodic --cells 8", false},
      {"sample-sort -n 16 --keys-per-rank 256 --zipf 1.2", true},
      {"moe -n 16 --tokens-per-rank 64 --top-k 2 --zipf 1.0", true},
  };
  for (const auto& [args_, seeded] : kinds) {
    const auto& args = args_;
    INFO(args);
    const test::CommandRun a = gen(args + " --seed 5 -o a.json");
    REQUIRE(a.status == 0);
    CHECK(a.err.empty());
    const MatrixFile f = read_matrix(gen_scratch() / "a.json");
    CHECK(f.matrix.nnz() > 0);
    CHECK(gen(args + " --seed 5 -o b.json").status == 0);
    CHECK(slurp(gen_scratch() / "a.json") == slurp(gen_scratch() / "b.json"));
    CHECK(gen(args + " --seed 6 -o c.json").status == 0);
    // The description is a command line that makes the same matrix.
    const std::string again = f.matrix.description.substr(std::string("commfit gen ").size(),
                                                         f.matrix.description.find(" (docs/") - std::string("commfit gen ").size());
    CHECK(gen(again + " -o d.json").status == 0);
    CHECK(matrix_fingerprint(read_matrix(gen_scratch() / "d.json").matrix) == matrix_fingerprint(f.matrix));
    if (seeded) CHECK(slurp(gen_scratch() / "a.json") != slurp(gen_scratch() / "c.json"));
    else CHECK(matrix_fingerprint(read_matrix(gen_scratch() / "c.json").matrix) == matrix_fingerprint(f.matrix));
  }
  // The stencil's rank count comes from the grid.
  REQUIRE(gen("stencil --grid 4x4x2 --points 7 -o s.json").status == 0);
  CHECK(read_matrix(gen_scratch() / "s.json").matrix.ranks == 32);
}

TEST_CASE("commfit gen: bad options exit 2 with one line and write nothing") {
  for (const char* args : {"nosuch", "stencil --grid 4x0", "stencil --grid 4xx4", "stencil --grid 4x4 --points 7",
                           "stencil --grid 4x4 -n 15", "transport -n 8 -k 8", "transport -n 8 -k 2 --l 1",
                           "transport -n 64 -k 32 --l 0.03125 --traffic 10", "bader -n 4 --h-factor 8", "moe -n 2 --top-k 5",
                           "sample-sort -n 4 --zipf -1", "uniform -n 4 -d 4", "random -n 100000 --density 0.5",
                           "dense -n 20000000"}) {
    INFO(args);
    fs::remove(gen_scratch() / "bad.json");
    const test::CommandRun r = gen(std::string(args) + " -o bad.json");
    CHECK(r.status == 2);
    CHECK(r.err.rfind("commfit: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(gen_scratch() / "bad.json"));
    for (const auto& e : fs::directory_iterator(gen_scratch())) CHECK(e.path().filename().string().rfind(".bad.json.tmp-", 0) != 0);
  }
}

TEST_CASE("gen -o: replaces a file in one rename, refuses what is not one, names the reason") {
  const fs::path d = gen_scratch();
  fs::remove_all(d / "sub");
  fs::create_directory(d / "sub");
  fs::remove(d / "link.json");
  fs::create_symlink("old.json", d / "link.json");
  struct Case { const char* out; const char* err; };
  for (const Case& c : {Case{"nodir/x.json", "cannot write nodir/x.json: nodir does not exist"},
                        Case{"sub", "sub is a directory: not replacing it"},
                        Case{"link.json", "link.json is a symbolic link: not replacing it (give the file it points to, or remove the link)"}}) {
    const test::CommandRun r = gen(std::string("uniform -n 8 -d 2 -o ") + c.out);
    CHECK(r.status == 2);
    CHECK(r.err == std::string("commfit: error: ") + c.err + "\n");
  }
  CHECK(fs::is_symlink(d / "link.json"));
  CHECK(fs::is_empty(d / "sub"));
  // A dead writer's temporary (same host, a PID that no longer runs) is removed by the next write
  // of the same name.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  const std::string mine = temp_sibling(d / "again.json").filename().string();   // .again.json.tmp-HOST-PID
  const fs::path stale = d / (mine.substr(0, mine.rfind('-') + 1) + std::to_string(dead));
  std::ofstream(stale) << "half a matrix";
  REQUIRE(gen("uniform -n 8 -d 2 -o again.json").status == 0);
  CHECK_FALSE(fs::exists(stale));
  const std::string first = slurp(d / "again.json");
  REQUIRE(gen("uniform -n 8 -d 2 --seed 5 -o again.json").status == 0);
  CHECK(slurp(d / "again.json") != first);
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().rfind(".again.json.tmp-", 0) != 0);
}
