// Owner lookup for patterns from global ids (runtime/pattern.cpp, docs/PATTERN.md "How the owners
// are found"): every rank gives the ids it owns and the ids it needs; every rank learns the owner
// of each id it needs (rank and index in the owner's owned[]), and every owner what it serves
// (needing rank, position in that rank's needed[], owned index). Pinar and Hendrickson,
// "Communication Support for Adaptive Computation", §2.1:
//   - the distributed directory (Fig. 1): a rendezvous at each id's directory rank, which answers
//     needers and owners at once (hashed or block-assigned ids); a rank writes only to the
//     directory ranks that hold its ids (a sparse exchange, as the rings' reverse step) and hears
//     back only from them;
//   - the ring and its k-dimensional torus variants, the paper's baselines: the needed lists travel
//     along a ring (per grid dimension), each owner records what it serves; the needers then learn
//     their owners in a reverse step, a sparse exchange in which a rank does not know who sends to
//     it: NBX (Hoefler, Siebert and Lumsdaine), an MPI_Allreduce or an MPI_Reduce_scatter_block of
//     message counts.
// Needs ids >= 0 (the caller checks). Guarantees: the same inputs give the same result whatever the
// method (`served` sorted by needer, then position); a problem is raised on every rank with the
// same message. Internal to commfit_runtime.
#pragma once

#include "commfit_exec.h"   // <mpi.h> without the MPI C++ bindings

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace commfit::runtime {

enum class LookupMethod { automatic, directory, directory_block, ring, ring2d, ring3d, ring4d };
enum class ReverseMethod { nbx, allreduce, reduce_scatter };

// The pattern's own option words (docs/PATTERN.md "How the owners are found"): lookup=METHOD|auto and
// reverse=METHOD|auto (the sparse exchange of the rings' reverse step and of the directory's
// registrations and queries). lookup=auto is chosen by find_owners from p and the ids' blocks
// (auto_lookup); reverse=auto is reduce-scatter.
struct LookupOptions {
  LookupMethod method = LookupMethod::automatic;
  ReverseMethod reverse = ReverseMethod::reduce_scatter;
};

// Removes the words lookup=... and reverse=... from `spec` (what remains is in-job planning's) and
// parses them; a later word overrides an earlier one. UsageError naming the key, the value and the
// accepted values for a bad value.
LookupOptions take_lookup_options(std::string& spec);

// The method's name as the option spells it ("ring2d"; "auto" for automatic).
const char* lookup_name(LookupMethod method);

// What lookup=auto knows of the ids, agreed by every rank: the largest id, the ids owned in all,
// and, where it matters (more than kFewDirectoryRanks + 1 ranks, dense ids), how many ranks have
// ids (owned or needed) in the blocks of more than kFewDirectoryRanks other ranks under
// directory-block (blocks of top / p + 1 consecutive ids); 0 where it was not counted.
constexpr int kFewDirectoryRanks = 32;
struct BlockStatistic {
  std::int64_t top = -1, owned_ids = 0, ranks_above = 0;
};

// The method lookup=auto runs on p ranks (docs/PATTERN.md "How the owners are found").
LookupMethod auto_lookup(int p, const BlockStatistic& ids);

struct Served {
  std::int64_t needer, position, index;   // owned[index] is needer's needed[position]
  bool operator==(const Served&) const = default;
};

struct OwnerLookup {
  std::vector<int> owner;                   // per needed[j]: the rank that owns it
  std::vector<std::int64_t> owner_index;    // per needed[j]: its index in the owner's owned[]
  std::vector<Served> served;               // what this rank owns and others (or it) need, by needer then position
  LookupMethod method = LookupMethod::directory;   // the method that ran (lookup=auto's choice)
  std::int64_t directory_ids = 0;           // ids this rank kept as a directory rank (directory methods)
  double reverse_seconds = 0;               // MPI_Wtime this rank spent in the rings' reverse step (for benchmarks)
  double collective_seconds = 0;            // MPI_Wtime this rank spent in the lookup's collectives, waits included: the
                                            // agreements and the count reductions of the sparse exchanges (not NBX's barrier)
};

// Whether two lookups found the same owners and the same served entries (the method that ran and
// its figures aside): the check that every method finds what the others find.
inline bool same_owners(const OwnerLookup& a, const OwnerLookup& b) {
  return a.owner == b.owner && a.owner_index == b.owner_index && a.served == b.served;
}

// Collective over `comm` (its traffic: tags below 100 on this communicator; give it one of its own).
// `local_error`: this rank's problem with its arguments so far, raised on every rank at the first
// agreement, before any id moves. Throws exec::Error (usage) on every rank, with the same message,
// for an id needed that no rank owns, an id owned twice (the rings see only the ids someone needs
// and the ids one rank owns twice), or a step that would exceed MPI's int counts.
OwnerLookup find_owners(MPI_Comm comm, std::span<const std::int64_t> owned, std::span<const std::int64_t> needed,
                        const LookupOptions& options, const std::string& local_error);

}  // namespace commfit::runtime
