#include "support/split_matrices.h"

#include "workloads/generators.h"

namespace commfit::test {

std::vector<CommMatrix> split_test_matrices() {
  std::vector<CommMatrix> out;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    out.push_back(gen_random_sparse(static_cast<Rank>(3 + seed * 7), 0.3, 1 << 16, seed, true));
    out.push_back(gen_lognormal(static_cast<Rank>(16 + seed * 5), 0.2, 4096, 2.0, seed));
    out.push_back(gen_hot_receiver(static_cast<Rank>(10 + seed * 3), 0, 1 << 20, 0.1, seed));
    out.push_back(gen_nonuniform(64, static_cast<int>(4 * seed), 256, seed));
    out.push_back(gen_uniform(32, static_cast<int>(seed), 1000, seed));
  }
  out.push_back(gen_dense(12, 100000, 5));
  out.push_back(make_matrix(1, {{0, 0, 7}}));
  out.push_back(make_matrix(2, {{0, 1, 1}, {1, 0, 1000000}}));
  out.push_back(make_matrix(3, {{0, 1, 5}, {1, 2, 5}, {1, 1, 9}}));
  return out;
}

}  // namespace commfit::test
