// decompose (rs_n): Random Scheduling avoiding Node contention, Ranka-Wang §4.2 Fig. 3.
// Each iteration starts at a random row x and scans rows x, x+1, ... (mod n); row i takes the
// first active CCOM entry k whose receiver is still free, moves the last active entry into the
// hole and decrements prt(i). One iteration = one phase.
// This is decompose_rs_nlp with neither Locate_Pair nor link checking (the RS_N of Fig. 4): the
// same iteration (passes/ranka_wang_detail.h), start rows and schedule.
// Needs: the CCOM of m (compress). Guarantees: every phase is a partial permutation, every
// network message is sent whole exactly once; local copies are listed.
#pragma once

#include "passes/decompose_rs_nlp.h"

namespace commfit {

inline Schedule decompose_rs_n(const CompressedMatrix& ccom, const CommMatrix& m, std::uint64_t seed) {
  return decompose_rs_nlp(ccom, m, Topology(), {.pairwise = false, .link_check = false, .seed = seed});
}

}  // namespace commfit
