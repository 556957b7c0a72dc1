// shave: lowers the largest piece of phases by moving the excess bytes of their largest pieces
// into phases where both the sender and the receiver are idle (beyond Ranka-Wang §6: their heap
// split cuts messages at a threshold, this fills the idle slots other phases already pay for).
// A phase costs tau + mu * (its largest piece), so a chunk of at most that size added to a phase
// whose sender and receiver are idle there costs nothing; every byte moved off the largest pieces
// of another phase lowers that phase's cost. Phases left empty are removed (saving tau each).
// For each phase k (smallest first) the lowest level L it can be cut to is
//   L = max over its pieces of max(0, b - capacity), capacity = sum of the largest pieces of the
//   other phases where the piece's sender and receiver are both idle,
// and every piece above L moves its tail beyond L into those phases, largest first.
// Needs: a direct schedule (from == src, to == dst) whose phases are partial permutations.
// Guarantees: the same bytes of every message, phases still partial permutations, the sum over
// phases of the largest piece never grows and the number of phases never grows. Skips the work
// (returns the input) when transfers x phases exceeds `max_work`.
#pragma once

#include "ir/schedule.h"

namespace commfit {

struct ShaveReport {
  Phase phases_in = 0, phases_out = 0;
  Bytes max_sum_in = 0, max_sum_out = 0;   // sum over phases of the largest piece
  std::int64_t chunks_moved = 0;
  bool skipped = false;
};

Schedule shave(const Schedule& s, ShaveReport* report = nullptr, double max_work = 4e8);

}  // namespace commfit
