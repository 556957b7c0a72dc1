// Pattern reuse (docs/EXECUTOR.md, "Pattern reuse"): when the sparsity pattern of an exchange is
// unchanged and only its sizes change, keep the plan's structure (who meets whom in which phase)
// and recompute only the sizes, on each rank from its own counts, with no gather and no planner;
// the cost model decides whether the adapted plan is still good enough or the pattern is re-planned.
#pragma once

#include "ir/plan.h"
#include "runtime/in_job.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace commfit::runtime {

// This rank's schedule for new counts (bytes, MPI_Alltoallv's row and column of this rank) with
// the structure of `old`: every message in its phase, with its new size. nullopt when `old` cannot
// be adapted: a message split into pieces or forwarded through a staging area, a request window,
// or counts whose nonzero pattern is not the plan's. `fingerprint` names the new matrix (it must
// be the same on every rank): the matrix's "sha256:..." where it is known, or another agreed name
// (the interposer's "counts:" and its count signature) for a schedule that is not written out.
std::optional<RankSchedule> adapt_schedule(const RankSchedule& old, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                                           const std::string& fingerprint);

struct AdaptReport {
  bool adapted = false;      // false: re-planned (plan_in_job)
  std::string why;           // why it re-planned
  double old_ratio = 0;      // the old plan's estimate / LB on its matrix (synchronous model)
  double new_ratio = 0;      // the adapted plan's on the new one (0 when some rank could not adapt)
  double seconds = 0;        // wall time of the whole collective call on this rank
  RankSchedule schedule;     // this rank's schedule now in use
};

// Collective over `comm`. Adapts every rank's `old` schedule to the new counts and prices both plans
// with the synchronous cost model of options.plan.cost (each phase: tau + its largest message /
// bandwidth) against their lower bounds (h tau + t / bandwidth). Keeps the adapted plan when every
// rank could adapt and its estimate / LB is at most `slack` times the old plan's; otherwise
// re-plans in-job with `options`. Returns the executor of the plan kept.
exec::Executor adapt_or_plan(MPI_Comm comm, const RankSchedule& old, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                       const std::string& fingerprint, const InJobOptions& options, double slack, AdaptReport* report);

}  // namespace commfit::runtime
