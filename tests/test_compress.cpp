// compress (Ranka-Wang §4.2): CCOM rows hold exactly the network destinations of their row,
// prt = row size, in a seeded random order.
#include "passes/compress.h"
#include "workloads/generators.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <vector>

using namespace commfit;

namespace {

std::vector<CommMatrix> compress_cases() {
  std::vector<CommMatrix> out;
  out.push_back(make_matrix(0, {}));
  out.push_back(make_matrix(1, {{0, 0, 5}}));
  out.push_back(make_matrix(2, {{0, 1, 3}, {1, 0, 4}, {1, 1, 2}}));
  out.push_back(make_matrix(3, {}));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Rank n = static_cast<Rank>(2 + seed * 7 % 61);
    out.push_back(gen_random_sparse(n, 0.05 * static_cast<double>(seed % 10), 1000, seed, seed % 2 == 0));
  }
  out.push_back(gen_dense(33, 100, 7));
  out.push_back(gen_hot_receiver(100, 17, 1000, 0.05, 3));
  out.push_back(gen_uniform(64, 16, 1, 5));
  return out;
}

}  // namespace

TEST_CASE("compress: CCOM invariants on many matrices") {
  for (const CommMatrix& m : compress_cases()) {
    for (std::uint64_t seed : {1ULL, 2ULL, 12345ULL}) {
      const CompressedMatrix c = compress(m, seed);
      CAPTURE(m.ranks);
      CAPTURE(seed);
      CHECK(check_ccom(c, m).empty());
      for (Rank i = 0; i < m.ranks; ++i) {
        std::int64_t network = 0;
        for (SparseCom::InnerIterator it(m.com, i); it; ++it) network += it.col() != i;
        CHECK(c.prt[i] == network);   // prt = row size: no local copy in CCOM
        CHECK(c.row_size(i) == network);
      }
    }
  }
}

TEST_CASE("compress: the seed alone decides the order") {
  const CommMatrix m = gen_dense(40, 1000, 11);
  const CompressedMatrix a = compress(m, 99), b = compress(m, 99), c = compress(m, 100);
  CHECK(a.dest == b.dest);
  CHECK(a.prt == b.prt);
  CHECK(a.dest != c.dest);
  // The rows are shuffled, not left in column order.
  int unsorted = 0;
  for (Rank i = 0; i < m.ranks; ++i) unsorted += !std::is_sorted(a.row(i), a.row(i) + a.prt[i]);
  CHECK(unsorted >= m.ranks - 1);
}

TEST_CASE("compress: each destination lands in each position about equally often") {
  // Row 0 has destinations 1..4; over many seeds every (destination, position) pair should
  // appear about 1/4 of the time (expected 1000 of 4000, sd ~27).
  const CommMatrix m = make_matrix(5, {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {0, 0, 9}});
  std::array<std::array<int, 4>, 4> count{};
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {
    const CompressedMatrix c = compress(m, seed);
    REQUIRE(c.prt[0] == 4);
    for (int pos = 0; pos < 4; ++pos) ++count[c.row(0)[pos] - 1][pos];
  }
  for (const auto& row : count)
    for (int k : row) {
      CHECK(k > 850);
      CHECK(k < 1150);
    }
}
