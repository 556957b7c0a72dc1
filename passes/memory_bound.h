// memory_bound: feasibility and a lower bound on the phases of any memory-constrained schedule
// (Pinar-Hendrickson §3.1, "the minimum number of phases is ceil(T/M)", tightened here).
//
// Model (docs/FORMAT.md §4, rule 5): rank j starts with F_j free bytes; in every phase the bytes
// it receives over the network are at most its free bytes at the start of the phase, and after the
// phase its free bytes grow by what it sent and shrink by what it received. Local copies do not
// count. r_j / c_j are the network bytes j sends / receives, T = sum r_j, M = sum F_j.
//
// Needs: m.memory of size p. Guarantees (when the input is feasible, see memory_feasibility):
// every schedule that keeps rule 5 has at least `phases` phases, where phases is the largest of
//   1                     if T > 0;
//   ceil(T / M)           every phase receives at most M bytes in total (sum of free is invariant:
//                         every byte sent is received), and every byte moves at least once;
//   1 + ceil(D / M)       D = sum_j max(0, c_j - F_j). Rank j can receive, through phase K-1,
//                         at most F_j + (bytes it sent in phases 0..K-2): so it sends at least
//                         c_j - F_j bytes before the last phase, and phases 0..K-2 carry at most
//                         (K-1) M bytes in total. This is what makes Figure 3 need 3 phases, not
//                         ceil(200/102) = 2. (The same bound follows from the time-reversed
//                         schedule, whose free memory is F_j + r_j - c_j: reversal adds nothing.)
//   3                     when the bounds above give 2 but no two-phase schedule exists: a
//                         maximum-flow test of a relaxation of the two-phase problem (phase 0
//                         moves only original data; each rank's phase-1 receipts fit its free
//                         memory then), see two_phases_possible in memory_bound.cpp.
// A per-rank bound ceil(c_j / F_j) is NOT valid: a rank's free memory grows as it sends.
#pragma once

#include "ir/comm_matrix.h"

#include <string>

namespace commfit {

struct MemoryBound {
  Bytes total = 0;          // T: network bytes to move
  Bytes memory = 0;         // M: free bytes over all ranks
  Bytes deficit = 0;        // D: sum over ranks of max(0, c_j - F_j)
  std::uint64_t volume_bound = 0;      // ceil(T / M)
  std::uint64_t last_phase_bound = 0;  // 1 + ceil(D / M), 0 when D == 0
  std::uint64_t two_phase_bound = 0;   // 3 when two phases are ruled out by the flow test, else 0
  std::uint64_t phases = 0;            // the largest of the bounds above (and 1 when T > 0)
};

// Empty when a schedule exists; else why not (names the first rank at fault):
//  - no memory limits given (m.memory empty or of the wrong size);
//  - rank j must end up holding more than it has: c_j > F_j + r_j (its free bytes after the
//    exchange would be negative; with r_j = 0 and F_j = 0 it can never receive at all);
//  - no free memory anywhere (M == 0) while there are bytes to move.
// These conditions are also sufficient: with parking, some byte can always move (park.h).
std::string memory_feasibility(const CommMatrix& m);

// Needs a feasible input (memory_feasibility(m) empty).
MemoryBound memory_lower_bound(const CommMatrix& m);

}  // namespace commfit
