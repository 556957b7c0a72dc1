// Patterns from global ids through the C++ class (<commfit/commfit_pattern.hpp>,
// commfit::runtime::Pattern), built against the installed package with find_package(commfit
// COMPONENTS runtime) or with mpicxx (docs/PATTERN.md, "Building against an installed commfit"):
//
//   mpicxx pattern_consumer.cpp -o pattern_consumer $(pkg-config --cflags --libs commfit-runtime)
//   mpirun -np NP pattern_consumer ["strategy=auto"]
//
// pattern_consumer.c's case (random owners, random needs, the draws of every rank computed on
// every rank from Park and Miller's generator): two gathers of doubles and one scatter of int64
// with MPI_SUM, every value checked. Exit status 0 only when all are right on every rank.
#include <commfit/commfit_pattern.hpp>

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using I64 = std::int64_t;

// Park and Miller's minimal standard generator: exact in 64-bit integers in every language.
I64 next(I64 s) { return s * 48271 % 2147483647; }
I64 id_of(I64 k) { return 7 * k + 3; }
int owner_of(I64 k, int np) { return static_cast<int>(next(next(k + 1)) % np); }

// Rank q's needed k, in the order drawn.
std::vector<I64> needed_ks(int q, I64 n_ids) {
  std::vector<I64> ks(static_cast<std::size_t>(20 + (q * 5) % 13));
  I64 s = 1000 + 7919 * I64{q};
  for (I64& k : ks) s = next(s), k = s % n_ids;
  return ks;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const std::string options = argc > 1 ? argv[1] : "";
  const I64 n_ids = 30 * I64{np} + 11;

  std::vector<I64> owned, needed, local(static_cast<std::size_t>(n_ids), -1);   // local: k -> position in owned
  for (I64 k = n_ids - 1; k >= 0; --k)
    if (owner_of(k, np) == rank) local[static_cast<std::size_t>(k)] = static_cast<I64>(owned.size()), owned.push_back(id_of(k));
  for (I64 k : needed_ks(rank, n_ids)) needed.push_back(id_of(k));

  long wrong = 0;
  try {
    auto p = commfit::runtime::Pattern::from_ids(MPI_COMM_WORLD, owned, needed, options);
    // Gather, twice with other values: needed value j is its owner's value of needed[j].
    std::vector<double> x(owned.size()), y(needed.size());
    for (int iter = 0; iter < 2; ++iter) {
      for (std::size_t i = 0; i < owned.size(); ++i) x[i] = 0.5 * double(owned[i]) + iter;
      y.assign(needed.size(), -1);
      p.gather(x.data(), y.data(), MPI_DOUBLE);
      for (std::size_t j = 0; j < needed.size(); ++j) wrong += y[j] != 0.5 * double(needed[j]) + iter;
    }
    // Scatter, MPI_SUM: each owned id gets its own id plus q + 1 for every time rank q needs it.
    std::vector<I64> z = owned, expect = owned, w(needed.size(), rank + 1);
    for (int q = 0; q < np; ++q)
      for (I64 k : needed_ks(q, n_ids))
        if (local[static_cast<std::size_t>(k)] >= 0) expect[static_cast<std::size_t>(local[static_cast<std::size_t>(k)])] += q + 1;
    p.scatter(w.data(), z.data(), MPI_INT64_T, MPI_SUM);
    for (std::size_t i = 0; i < owned.size(); ++i) wrong += z[i] != expect[i];
  } catch (const commfit::exec::Error& e) {   // raised on every rank alike
    if (rank == 0) std::fprintf(stderr, "pattern_consumer: %s\n", e.what());
    wrong = 1;
  }
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("pattern_consumer: %d ranks, %lld ids, 2 gathers and 1 scatter, %ld wrong values\n", np, static_cast<long long>(n_ids), all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
