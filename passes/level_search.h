// level search (beyond Ranka-Wang and the profile split): lowers the phase maxima of a P-phase
// direct schedule, keeping P. docs/DECISIONS.md "Level search" has the design and the numbers.
//
// A direct schedule's cost is P tau + mu sum_k L_k, L_k the largest piece of phase k. Fix levels
// T_1..T_P: each message may take one phase k with T_k >= its size, or two phases whose levels
// add up to it (a cut), and the question is whether every message can take one so that no rank
// sends or receives twice in a phase. The pass answers it by tabu search (min-conflicts, in the
// manner of Hertz and de Werra's TabuCol for graph colouring): a message in conflict moves to the
// admissible phase set that meets the fewest occupied ports, a set it just left being barred for
// one or two moves. From the input schedule (whose own maxima are feasible levels) it
//  1. tries the target levels, when given (a profile-split template the colouring missed);
//  2. lowers the largest level not yet stuck by `step`, keeping the attempt if the search repairs
//     it within its move budget and marking the level stuck if not, until every level is: first
//     with probe moves per message, then, only if that lowered a level, with effort moves per
//     message (failed attempts are where the time goes, and where nothing gives at the probe
//     budget more rarely does), scoring at most max_work sets in all (work_per_message for
//     each message, if less). Largest first: lowering a small level early can bar it to the
//     message that would let a large one come down (tests/test_level_search.cpp has a case).
//  3. trades where nothing comes down alone: lowers one level by `step` while raising another by
//     `trade` times as many bytes (the largest first, against the smallest first; probe moves), and
//     after each trade that the search repairs, step 2 again.
// A level at 0 is never raised, so a phase the input leaves empty stays empty; the profile split
// hands it schedules whose every phase has pieces.
// A message's pieces are cut largest level first: min(left, T_k) bytes into each of its phases.
// Needs: a direct schedule of m (every piece sent by its source to its destination), at most 64
// phases. Guarantees: a direct schedule of m with at most the input's phases, every phase a
// partial permutation, a sum of phase maxima below the input's (the input is returned when
// nothing was lowered), deterministic.
// Work: the sets and port occupancy persist between attempts; an attempt scans the messages for
// those the new levels displace and makes at most its budget of moves, each O(admissible sets of
// the message x 2), up to P^2 / 2 pairs; a failed attempt undoes its moves.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/schedule.h"

#include <cstdint>
#include <vector>

namespace commfit {

struct LevelSearchOptions {
  std::vector<Bytes> target;        // levels to try first, one per phase; empty: none
  std::int64_t effort = 16;         // moves per message for the target and for step 2's attempts
  std::int64_t probe = 2;           // moves per message for step 2's first round (see below)
  std::int64_t max_work = std::int64_t{1} << 26;   // phase sets scored over the whole search (~0.5 s)
  std::int64_t work_per_message = 8192;            // and per message, whichever is less
  double step = 0.005;
  double trade = 0.75;              // step 3 gives this share of a lowered level to another (0: none)              // an attempt lowers one level by this fraction (>= 1 byte)
  std::uint64_t seed = 1;
};

struct LevelSearchReport {
  bool applied = false;          // false: the input was returned as it is
  bool target_met = false;       // the target levels were realised
  std::int64_t attempts = 0;     // levels tried (target included)
  std::int64_t accepted = 0;     // of which repaired
  std::int64_t moves = 0;        // tabu moves over all attempts
};

Schedule level_search(const CommMatrix& m, const Schedule& s, const LevelSearchOptions& o = {},
                      LevelSearchReport* report = nullptr);

}  // namespace commfit
