// decompose (rs_n): Random Scheduling avoiding Node contention, Ranka-Wang §4.2 Fig. 3.
// Each iteration starts at a random row x and scans rows x, x+1, ... (mod n); row i takes the
// first active CCOM entry k whose receiver is still free, moves the last active entry into the
// hole and decrements prt(i). One iteration = one phase.
// Needs: the CCOM of m (compress). Guarantees: every phase is a partial permutation, every
// network message is sent whole exactly once; local copies are listed.
#pragma once

#include "ir/ccom.h"
#include "ir/schedule.h"

namespace commfit {

Schedule decompose_rs_n(CompressedMatrix ccom, const CommMatrix& m, std::uint64_t seed);

}  // namespace commfit
