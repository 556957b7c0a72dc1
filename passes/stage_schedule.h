// stage schedule: the two communication stages of Transportation §7.1-7.2 ("Communication") and
// Bader-Helman-JaJa §3 Steps (2) and (4), as one Schedule. A TwoStageSplit's parts become
//   stage 1: part (src, mid, dst) from src to mid (to dst directly when mid == dst; none when mid == src);
//   stage 2: part from mid to dst (read from src's send buffer when mid == src; none when mid == dst).
// Each stage is a CommMatrix of per-(sender, receiver) byte totals, decomposed into phases by a
// whole-message decomposition (optimal: König, exactly h_stage phases; lp: linear permutation,
// the papers' choice; rs_n: Ranka-Wang random scheduling); every part then travels in the phase
// its (sender, receiver) pair got, so one pair's parts form one message of that phase.
// Needs: a split of m (two_stage_split(m, ...)). Guarantees: every stage-1 phase precedes every
// stage-2 phase (forwarded bytes are received strictly earlier, verifier rule 2), every phase a
// partial permutation of messages (<= 1 peer sent to, <= 1 received from per rank, rule 4), every
// network byte delivered once (rule 1), local messages as local copies; canonical order.
#pragma once

#include "ir/schedule.h"
#include "passes/two_stage_split.h"

#include <cstdint>

namespace commfit {

enum class StageDecomposition { optimal, lp, rs_n };

// Per-(sender, receiver) byte totals of stage 1 or 2 (stage = 1 or 2) of a split.
CommMatrix stage_matrix(const TwoStageSplit& split, int stage);

Schedule stage_schedule(const TwoStageSplit& split, const CommMatrix& m, StageDecomposition d, std::uint64_t seed);

}  // namespace commfit
