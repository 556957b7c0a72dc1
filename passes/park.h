// park: greedy phase minimisation under per-rank memory limits with parking
// (Pinar-Hendrickson §3.1, "Greedy Algorithms": the basics of the 3/2-approximation).
//
// Memory model of docs/FORMAT.md §4 rule 5 (see memory_bound.h). Phase by phase:
//  1. Receive as much as possible (the paper's first rule): every rank with bytes still to come
//     receives min(free, bytes still to come). So a rank ends a phase with free memory only when
//     nothing more is on its way. Which senders it takes them from (the paper leaves it open) is
//     decided by this order, first to last:
//       a. original senders that themselves lack memory (bytes still to come to them exceed their
//          free bytes): what they send frees memory exactly where it is needed. All of theirs when
//          it fits; else every such message gives the same fraction of what is left of it (so
//          equally needy senders progress together; draining one at a time leaves the others short
//          in the next phase), the rounding remainder going to the most lacking first;
//       b. pieces parked for this rank, oldest first: they occupy memory that could park more;
//       c. the other original senders, largest remaining message first (ties: lower rank).
//     Messages are split at byte granularity.
//  2. Park (the paper's second rule): ranks that received everything they are owed still have free
//     memory nobody else can use. Bytes of message s -> d are parked there when the transfer
//     cannot complete in the next phase (more bytes still go to d than d will have free), up to
//     that excess per d and up to what s lacks (bytes still to come to s minus its free bytes),
//     most lacking sender first, largest free space first; as much as both sides allow.
//     A parked piece is forwarded by rule 1b in a later phase, when its destination has room.
//
// Needs: feasible limits (memory_feasibility(m) empty). Guarantees: every byte of every network
// message reaches its dst once, a parked byte is forwarded in a strictly later phase, and in every
// phase every rank receives at most its free bytes at the phase's start (rule 5). Some byte moves
// in every phase (with parking this always holds on feasible input; without it the greedy can
// deadlock, which is reported as a UsageError, as is a schedule longer than max_phases).
// Local copies go in phase 0. Deterministic; no randomness.
#pragma once

#include "ir/schedule.h"

namespace commfit {

struct ParkOptions {
  bool parking = true;                 // false: rule 1 only (Figure 3 then needs 100 phases)
  Phase max_phases = Phase{1} << 20;   // give up (UsageError) beyond this many phases
};

struct ParkStats {
  Bytes parked_bytes = 0;   // bytes received by a rank other than their destination
};

Schedule park(const CommMatrix& m, const ParkOptions& o, ParkStats* stats = nullptr);

}  // namespace commfit
