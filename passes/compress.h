// compress: COM -> CCOM, Ranka-Wang §4.2.
// Each row lists the rank's network destinations (src != dst) in a random order drawn from
// `seed` (the paper randomises the destination lists "to reduce collisions"), prt(i) = row size.
// Needs: a valid CommMatrix. Guarantees: check_ccom(result, m) is empty.
#pragma once

#include "ir/ccom.h"

namespace commfit {

CompressedMatrix compress(const CommMatrix& m, std::uint64_t seed);

}  // namespace commfit
