// The seeded matrix family the splitting passes' property tests share (tests/test_quantised_split.cpp,
// tests/test_profile_split.cpp): random sparse, lognormal sizes, hot receivers, Ranka-Wang
// non-uniform and uniform sets over a range of sizes and degrees, plus a dense matrix and small
// edge cases (one rank, a 1-byte and a 1 MB message, a rank with only a local copy).
#pragma once

#include "ir/comm_matrix.h"

#include <vector>

namespace commfit::test {

std::vector<CommMatrix> split_test_matrices();

}  // namespace commfit::test
