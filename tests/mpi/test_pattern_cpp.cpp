// commfit::runtime::Pattern (commfit_pattern.hpp) on a small case: rank r owns the ids i with
// i mod p == r, in descending order, and needs every id of the next rank plus its own first one
// twice; gather, scatter with MPI_SUM, their split forms, stats, and an id owned twice raised as
// Error on every rank.
#include "runtime/commfit_pattern.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto check = [&](bool ok, const char* what) {
    if (!ok) ++failures, std::fprintf(stderr, "FAIL rank %d: %s\n", rank, what);
  };
  const int per = 50;
  std::vector<std::int64_t> owned, needed;
  for (int k = per - 1; k >= 0; --k) owned.push_back(std::int64_t{k} * size + rank);
  for (int k = 0; k < per; ++k) needed.push_back(std::int64_t{k} * size + (rank + 1) % size);
  needed.push_back(rank), needed.push_back(rank);
  {
    auto p = commfit::runtime::Pattern::from_ids(MPI_COMM_WORLD, owned, needed, "strategy=direct");
    check(p.stats().local == (size == 1 ? per + 2 : 2), "stats: local");
    check(p.stats().sent == (size == 1 ? 0 : per), "stats: sent");
    std::vector<double> x(owned.size()), y(needed.size(), -1);
    for (std::size_t i = 0; i < owned.size(); ++i) x[i] = 0.5 * double(owned[i]);
    p.gather(x.data(), y.data(), MPI_DOUBLE);
    for (std::size_t j = 0; j < needed.size(); ++j) check(y[j] == 0.5 * double(needed[j]), "gather");
    std::vector<std::int64_t> z(owned.size(), 10), w(needed.size(), 1);
    p.scatter(w.data(), z.data(), MPI_INT64_T, MPI_SUM);
    // Every owned id is needed once by the previous rank; the first (rank's own id) also twice by itself.
    for (std::size_t i = 0; i < owned.size(); ++i) {
      const std::int64_t expect = 10 + 1 + (owned[i] == rank ? 2 : 0);
      check(z[i] == expect, "scatter MPI_SUM");
    }
    // Split phase: the same values, work between; scatter_end without its begin is Error (usage).
    std::fill(y.begin(), y.end(), -1.0);
    p.gather_begin(x.data(), y.data(), MPI_DOUBLE);
    double acc = 0;
    for (int k = 1; k < 20000; ++k) acc += 1.0 / k;
    p.gather_end();
    for (std::size_t j = 0; j < needed.size(); ++j) check(y[j] == 0.5 * double(needed[j]) && acc > 0, "gather_begin/end");
    std::fill(z.begin(), z.end(), 10);
    p.scatter_begin(w.data(), z.data(), MPI_INT64_T, MPI_SUM);
    p.scatter_end();
    for (std::size_t i = 0; i < owned.size(); ++i) check(z[i] == 10 + 1 + (owned[i] == rank ? 2 : 0), "scatter_begin/end");
    bool refused = false;
    try {
      p.scatter_end();
    } catch (const commfit::exec::Error& e) {
      refused = e.kind() == commfit::exec::Error::Kind::usage && std::strstr(e.what(), "without scatter_begin") != nullptr;
    }
    check(refused, "scatter_end without begin: Error (usage)");
  }
  owned.push_back(size == 1 ? 0 : (rank + 1) % size);   // owned by the next rank too
  bool raised = false;
  try {
    commfit::runtime::Pattern::from_ids(MPI_COMM_WORLD, owned, needed);
  } catch (const commfit::exec::Error& e) {
    raised = e.kind() == commfit::exec::Error::Kind::usage && std::strstr(e.what(), "is owned") != nullptr;
  }
  check(raised, "an id owned twice: Error (usage) naming it");
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("test_pattern_cpp: %d ranks, %d failures\n", size, all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
