// relaxation: the continuous-relaxation schedule under per-rank memory limits
// (Pinar-Hendrickson §3.1, "Continuous Relaxation"), rounded to integer bytes.
//
// Memory model of DESIGN.md rule 5 (see memory_bound.h); L = ceil(T/M). Every byte takes the route
//   src --pre--> holder --main--> receiver --post--> dst      (hops between equal ranks vanish)
// in three stages:
//  - pre-processing (one phase): receive assignments are rebalanced so that every rank sends, in
//    the main phases, exactly as many bytes as it receives there. A rank that sends c_j - r_j < 0
//    net ("net sender") ships its surplus r_j - c_j in this phase to net receivers (directly when
//    it has a message for one, else parked there, to be sent on in the main phases); a net
//    receiver takes in exactly c_j - r_j <= F_j (feasibility). Then, to open up space for the
//    first main phase, a rank j whose free memory G_j after this phase is below its main volume
//    per phase hands equal amounts of send and receive assignments to a helper h with spare
//    memory: x of the data j holds is parked on h in this phase, and x of the data j would receive
//    in the main phases is received by h instead and forwarded to j in the post phase;
//  - L main phases: every (holder, receiver) stream is cut into L parts at floor(t*b/L); since
//    every rank sends what it receives, its free memory is the same G_j at every main phase start;
//  - post-processing (one phase): helpers forward what they received on others' behalf.
// Rounding: with floor cuts a rank's receipts through main phase t are at most t*beta_j/L and its
// sends before it at least (t-1)*beta_j/L - sigma_j (sigma_j = number of ranks it sends to in the
// main phases), so the main phases keep rule 5 when L*(G_j - sigma_j) >= beta_j: the pre phase
// establishes exactly this "slack" for every rank. When the greedy construction cannot (integer
// effects: free memory comparable to message counts, see docs/MEMORY.md), it retries with one more
// main phase, up to max_extra_phases times, and then gives up (returns no schedule): the caller
// decides (strategy memory falls back to parking and says so in the manifest).
//
// Needs: feasible limits (memory_feasibility(m) empty). Guarantees: a schedule that keeps rule 5
// in every phase (checked here by an exact simulation before it is returned), every byte delivered
// once, forwarded bytes only in strictly later phases; empty phases removed; at most
// L + 2 + (extra main phases) phases. Local copies in phase 0. Deterministic.
#pragma once

#include "ir/schedule.h"

#include <optional>

namespace commfit {

struct RelaxationOptions {
  std::uint32_t max_extra_phases = 64;   // main phases beyond ceil(T/M) to try before giving up
};

struct RelaxationStats {
  std::uint64_t main_phases = 0;   // L actually used (ceil(T/M) unless widened)
  Bytes parked_bytes = 0;          // bytes received by a rank other than their destination
};

std::optional<Schedule> relaxation(const CommMatrix& m, const RelaxationOptions& o, RelaxationStats* stats = nullptr);

}  // namespace commfit
