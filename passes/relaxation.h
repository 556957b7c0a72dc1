// relaxation: the continuous-relaxation schedule under per-rank memory limits
// (Pinar-Hendrickson §3.1, "Continuous Relaxation"), rounded to integer bytes.
//
// Memory model of docs/FORMAT.md §4 rule 5 (see memory_bound.h); F_j free bytes, r_j / c_j network bytes
// rank j sends / receives, T = sum r_j, M = sum F_j, L = ceil(T/M). Every byte takes the route
//   src --pre--> holder --main--> receiver --post--> dst      (hops between equal ranks vanish)
// with one pre-processing phase, L main phases and one post-processing phase. The paper's two
// pre-processing steps (equalise every rank's incoming and outgoing volume; reassign equal send and
// receive amounts to open up space for the first phase) are merged into one choice of numbers, as
// the paper suggests ("send and receive operations can cancel each other"):
//  - every rank j gets a main-phase volume b_j (sum b_j = T) that it both sends and receives in
//    the main phases, so its free memory G_j = F_j + r_j - b_j is the same at every main phase
//    start. It holds min(r_j, b_j) of its own outgoing bytes for the main phases; a donor
//    (r_j > b_j) parks the rest in the pre phase on takers (b_k > r_k), directly on the destination
//    where it has a message for it. It receives min(c_j, b_j) of its own incoming bytes in the main
//    phases (the pre-delivered ones among them); the rest are received by proxies (b_k > c_k),
//    preferably the holder itself, and forwarded in the post phase.
//  - pre phase: j receives max(0, b_j - r_j) <= F_j; main phases: j receives b_j / L per phase
//    <= G_j; post phase: j receives max(0, c_j - b_j) <= G_j, which is c_j <= F_j + r_j
//    (feasibility). So the schedule keeps rule 5 iff (L+1) b_j <= L (F_j + r_j), and such b_j
//    with sum T exist iff L M >= T: the paper's ceil(T/M) + 2 phases for the continuous problem.
//  - rounding: each (holder, receiver) stream is cut into L parts at floor(t*v/L); a rank's
//    receipts through main phase t are at most t b_j / L and its sends before it at least
//    (t-1) b_j / L - sigma_j (sigma_j = its main-phase peers), so b_j is capped at
//    floor((L (F_j + r_j) - (L-1) sigma_j) / (L+1)), and these add up to T when
//    L M - T >= (L-1) sum_j sigma_j + p (L+1). sigma_j starts at j's out-degree and grows to the
//    peers the assignment really gives it (a few rounds). The construction makes at most about
//    2E + 7p streams (E messages), so the premise stated and asserted in docs/MEMORY.md and
//    tests/test_memory.cpp is L M - T >= (L+1)(2E + 8p). Otherwise L may grow by one, up to
//    max_extra_phases times, and then no schedule is returned: the caller decides (strategy
//    memory falls back to parking and says so).
//
// Needs: feasible limits (memory_feasibility(m) empty). Guarantees: a schedule that keeps rule 5
// in every phase (checked here by an exact simulation before it is returned), every byte delivered
// once, forwarded bytes only in strictly later phases; empty phases removed; at most
// L + 2 phases for the L it reports. Local copies in phase 0. Deterministic.
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
