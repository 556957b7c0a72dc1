// Seeded generators of communication matrices: the papers' test sets and the adversarial and
// skewed patterns the property tests and benchmarks use. Each names its source.
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>

namespace commfit {

// Ranka-Wang §7.1: every rank sends exactly d messages and receives exactly d messages, to and
// from distinct other ranks (a random d-regular bipartite simple graph without self loops),
// each of `bytes` bytes. Needs 0 <= d <= n - 1.
CommMatrix gen_uniform(Rank n, int d, Bytes bytes, std::uint64_t seed);

// Ranka-Wang §7.2 test set 1: the pattern of gen_uniform with COM(i, j) = (random() mod n)
// units of `unit` bytes (entries drawn as 0 are dropped, as the paper's would be).
CommMatrix gen_nonuniform(Rank n, int d, Bytes unit, std::uint64_t seed);

// Each ordered pair (i, j), i != j, present with probability `density`, sizes uniform in
// [1, max_bytes]. Self messages with probability `density` too when `self` is true.
CommMatrix gen_random_sparse(Rank n, double density, Bytes max_bytes, std::uint64_t seed,
                             bool self = false);

// All pairs (including self), sizes uniform in [1, max_bytes].
CommMatrix gen_dense(Rank n, Bytes max_bytes, std::uint64_t seed);

// Every other rank sends to `hot` (sizes in [1, max_bytes]), plus a sparse background of
// density `background`.
CommMatrix gen_hot_receiver(Rank n, Rank hot, Bytes max_bytes, double background,
                            std::uint64_t seed);

// Sparse pattern of density `density` with lognormal sizes (median `median` bytes, sigma).
CommMatrix gen_lognormal(Rank n, double density, double median, double sigma,
                         std::uint64_t seed);

}  // namespace commfit
