// lookup=auto's rule (runtime/owner_lookup.hpp auto_lookup, docs/PATTERN.md "How the owners are
// found"): the rule itself on the statistic's values at 4 to 1024 ranks, and what find_owners runs
// under lookup=auto on ids numbered part by part (directory-block), on sparse ids that would leave
// most blocks empty (the hashed directory below 64 ranks) and on ids whose rank has a problem (the
// error, as every method raises it: the lowest rank's). Every choice must find the hashed
// directory's owners; the time find_owners reports in collectives lies within the call's.
#include "runtime/owner_lookup.hpp"

#include "backends/exec/commfit_exec.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using commfit::runtime::auto_lookup;
using commfit::runtime::BlockStatistic;
using commfit::runtime::find_owners;
using commfit::runtime::LookupMethod;
using commfit::runtime::LookupOptions;
using commfit::runtime::OwnerLookup;

namespace {

int rank = 0, size = 0, failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) ++failures, std::fprintf(stderr, "FAIL rank %d: %s\n", rank, what.c_str());
}

LookupOptions options(const char* words) {
  std::string spec = words;
  return commfit::runtime::take_lookup_options(spec);
}

// Rank r owns `per` ids from first(r), step apart, and needs the next rank's first 10.
OwnerLookup run(const char* words, std::int64_t step, std::int64_t per) {
  std::vector<std::int64_t> owned, needed;
  for (std::int64_t k = 0; k < per; ++k) owned.push_back((rank * per + k) * step);
  for (std::int64_t k = 0; k < 10; ++k) needed.push_back((((rank + 1) % size) * per + k) * step);
  return find_owners(MPI_COMM_WORLD, owned, needed, options(words), "");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // The rule. Dense ids, no rank on more than 32 other ranks' blocks: directory-block at any p.
  for (int p : {4, 16, 64, 256, 1024}) check(auto_lookup(p, BlockStatistic{999, 1000, 0}) == LookupMethod::directory_block, "dense, few blocks");
  check(auto_lookup(64, BlockStatistic{1999, 1000, 0}) == LookupMethod::directory_block, "half dense: directory-block");
  // Up to 33 ranks no rank can have more than 32 others' blocks: dense ids are enough.
  const BlockStatistic spread{999, 1000, 1}, sparse{2000, 1000, 0};
  check(auto_lookup(4, spread) == LookupMethod::directory_block && auto_lookup(33, spread) == LookupMethod::directory_block, "33 ranks or fewer, dense");
  // Less than half dense, or a rank on more than 32 blocks beyond 33 ranks: the rule by p.
  check(auto_lookup(4, sparse) == LookupMethod::directory, "4 ranks, sparse: directory");
  check(auto_lookup(16, sparse) == LookupMethod::directory, "16 ranks, sparse: directory");
  for (const BlockStatistic& s : {spread, sparse}) {
    check(auto_lookup(34, s) == LookupMethod::directory, "34 ranks: directory");
    check(auto_lookup(64, s) == LookupMethod::ring4d, "64 ranks: ring4d");
    check(auto_lookup(256, s) == LookupMethod::ring4d, "256 ranks: ring4d");
    check(auto_lookup(96, s) == LookupMethod::ring4d, "96 ranks (4x3x2x2): ring4d");
    check(auto_lookup(67, s) == LookupMethod::directory, "67 ranks (prime): directory");
    check(auto_lookup(1024, s) == LookupMethod::directory, "1024 ranks: directory");
  }

  // find_owners under lookup=auto, on this job's ranks.
  const OwnerLookup ref = run("lookup=directory", 1, 100), by_part = run("lookup=auto", 1, 100);
  check(by_part.method == LookupMethod::directory_block, "ids by part: lookup=auto runs directory-block");
  check(same_owners(by_part, ref), "ids by part: lookup=auto finds the directory's owners");
  const OwnerLookup ref_sparse = run("lookup=directory", 3, 100), sparse_ids = run("lookup=auto reverse=nbx", 3, 100);
  check(sparse_ids.method == LookupMethod::directory, "ids a third dense: lookup=auto runs the hashed directory");
  check(same_owners(sparse_ids, ref_sparse), "sparse ids: lookup=auto finds the directory's owners");

  // A rank's own problem (a negative id, as the pattern reports it: its ids left out) is raised on
  // every rank.
  {
    const bool bad = rank == size - 1;
    std::vector<std::int64_t> owned{rank * 10 + 0, rank * 10 + 1}, needed{rank * 10};
    if (bad) owned.clear(), needed.clear();
    std::string message;
    try {
      find_owners(MPI_COMM_WORLD, owned, needed, options("lookup=auto"), bad ? "id -5 is negative (needed[0])" : "");
    } catch (const commfit::exec::Error& e) {
      message = e.what();
    }
    check(message.find("id -5 is negative") != std::string::npos, "a rank's own problem under lookup=auto: raised on every rank");
  }
  // Several ranks with problems of their own: the lowest one's, on every rank, whatever the method.
  for (const char* words : {"lookup=directory", "lookup=directory-block reverse=nbx", "lookup=ring2d"}) {
    const bool bad = size == 1 || rank % 2 == 1;
    const std::string expected = "rank " + std::to_string(size == 1 ? 0 : 1) + ": problem of rank " + std::to_string(size == 1 ? 0 : 1);
    std::string message;
    try {
      find_owners(MPI_COMM_WORLD, {}, {}, options(words), bad ? "problem of rank " + std::to_string(rank) : "");
    } catch (const commfit::exec::Error& e) {
      message = e.what();
    }
    check(message.find(expected) != std::string::npos, std::string(words) + ": the lowest rank's problem on every rank, got '" + message + "'");
  }
  // A directory rank keeps its share as a table indexed by id where the ids it holds are dense
  // (step 1) and as sorted entries where they are not (step 10): the same owners, and for ids owned
  // twice the same error, the smallest such id with its first two owners in (rank, index) order.
  for (std::int64_t step : {1, 10}) {
    const std::string form = step == 1 ? "a table" : "sorted entries";
    const OwnerLookup block = run("lookup=directory-block", step, 100), hashed = run("lookup=directory", step, 100);
    check(same_owners(block, hashed), "directory-block's share as " + form + ": the hashed directory's owners");
    std::int64_t kept = block.directory_ids;
    MPI_Allreduce(MPI_IN_PLACE, &kept, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    check(kept == 100 * size, "directory-block's share as " + form + ": every owned id kept once");
    std::vector<std::int64_t> owned;
    for (std::int64_t k = 0; k < 100; ++k) owned.push_back((rank * 100 + k) * step);
    if (rank == 0) owned.push_back(5 * step);
    if (rank == size - 1) owned.push_back(7 * step), owned.push_back(5 * step);
    const std::string expected = "id " + std::to_string(5 * step) + " is owned twice by rank 0 (owned[5] and owned[100])";
    for (const char* words : {"lookup=directory-block", "lookup=directory"}) {
      std::string message;
      try {
        find_owners(MPI_COMM_WORLD, owned, {}, options(words), "");
      } catch (const commfit::exec::Error& e) {
        message = e.what();
      }
      check(message.find(expected) != std::string::npos, std::string(words) + ", ids " + form + ": '" + expected + "' on every rank, got '" + message + "'");
    }
  }
  // The time in collectives is part of the call's.
  for (const char* words : {"lookup=directory", "lookup=directory-block", "lookup=ring2d", "lookup=ring reverse=allreduce"}) {
    const double t0 = MPI_Wtime();
    const OwnerLookup got = run(words, 1, 100);
    const double elapsed = MPI_Wtime() - t0;
    check(got.collective_seconds > 0 && got.collective_seconds <= elapsed, std::string(words) + ": collective_seconds within the call's time");
    check(same_owners(got, ref), std::string(words) + ": the directory's owners");
  }

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("owner_lookup: %s (%d ranks)\n", all == 0 ? "ok" : "FAILED", size);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
