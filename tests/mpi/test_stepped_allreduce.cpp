// The interposer's agreement (runtime/stepped_allreduce.h) against MPI_Allreduce with the same fold
// (OR of word 0, XOR of words 1-4, max of word 5): 200 reductions back to back on one communicator,
// each rank's words drawn from (rank, round), each taken a step at a time with some ranks sleeping
// a little before a step, and the rest finished at once after a number of steps drawn per round
// (the same on every rank: they finish together, as the interposer's checking calls do); then 40 on
// each communicator of the first k ranks, k = 1 .. p (powers of two and not). The last reduction on
// each is left under way for the destructor to finish. Exit 0 when every result is MPI_Allreduce's
// on every rank; otherwise each difference is printed.
// Usage: mpirun -np N test_stepped_allreduce
#include "ir/random.h"
#include "runtime/stepped_allreduce.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace {

using commfit::pmpi::SteppedAllreduce;
constexpr int kWords = SteppedAllreduce::kWords;

void fold_words(const std::uint64_t* a, std::uint64_t* b) {
  b[0] |= a[0];
  for (int k = 1; k < 5; ++k) b[k] ^= a[k];
  b[5] = std::max(a[5], b[5]);
}

void fold_op(void* in, void* inout, int*, MPI_Datatype*) {
  fold_words(static_cast<const std::uint64_t*>(in), static_cast<std::uint64_t*>(inout));
}

void words(int rank, int round, std::uint64_t* w) {
  for (int k = 0; k < kWords; ++k) w[k] = commfit::splitmix64((std::uint64_t(round) << 32) ^ (std::uint64_t(rank) << 8) ^ std::uint64_t(k));
  w[0] &= 1ull << (rank % 64);   // flags: one bit each, some set
}

// Runs `rounds` reductions on `comm`; the number of failures.
int check(MPI_Comm comm, int rounds, MPI_Op op, const char* what) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm agree;
  MPI_Comm_dup(comm, &agree);
  int failures = 0;
  {
    SteppedAllreduce ag(agree, 1, fold_words);
    int expected_steps = 0;
    while ((2 << expected_steps) <= size) ++expected_steps;
    if ((1 << expected_steps) < size) expected_steps += 2;
    if (ag.steps() != expected_steps) {
      std::fprintf(stderr, "%s rank %d: %d steps at p = %d, expected %d\n", what, rank, ag.steps(), size, expected_steps);
      ++failures;
    }
    for (int round = 0; round < rounds; ++round) {
      std::uint64_t mine[kWords], want[kWords];
      words(rank, round, mine);
      MPI_Allreduce(mine, want, kWords, MPI_UINT64_T, op, comm);
      ag.start(mine);
      const int steps = static_cast<int>(commfit::splitmix64(std::uint64_t(round) * 31) % (ag.steps() + 2));
      bool done = ag.steps() == 0;
      for (int t = 0; t < steps && !done; ++t) {
        if ((rank + round + t) % 3 == 0) {
          const timespec nap{0, 20000};
          nanosleep(&nap, nullptr);
        }
        done = ag.step();
      }
      if (done != (steps >= ag.steps())) {
        std::fprintf(stderr, "%s rank %d round %d: %s after %d of %d steps\n", what, rank, round, done ? "done" : "not done", steps, ag.steps());
        ++failures;
      }
      ag.finish();
      if (ag.active()) {
        std::fprintf(stderr, "%s rank %d round %d: no result after waiting\n", what, rank, round);
        ++failures;
        continue;
      }
      for (int k = 0; k < kWords; ++k)
        if (ag.result()[k] != want[k]) {
          std::fprintf(stderr, "%s rank %d round %d word %d: %016" PRIx64 ", MPI_Allreduce %016" PRIx64 "\n", what, rank, round, k, ag.result()[k],
                       want[k]);
          ++failures;
          break;
        }
    }
    // One left under way: the destructor waits for it (as the interposer's does before freeing).
    std::uint64_t mine[kWords];
    words(rank, rounds, mine);
    ag.start(mine);
    ag.step();
  }
  MPI_Comm_free(&agree);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op op;
  MPI_Op_create(fold_op, 1, &op);
  int failures = check(MPI_COMM_WORLD, 200, op, "world");
  // Every size from 1 to p: the first k ranks (others sit out).
  for (int k = 1; k <= size; ++k) {
    MPI_Comm part;
    MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &part);
    if (part != MPI_COMM_NULL) {
      char what[32];
      std::snprintf(what, sizeof what, "first %d", k);
      failures += check(part, 40, op, what);
      MPI_Comm_free(&part);
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("stepped allreduce: %d failures over p = 1..%d\n", total, size);
  MPI_Op_free(&op);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
