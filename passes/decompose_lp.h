// decompose (lp): Linear Permutation, Ranka-Wang §4.1 Fig. 2.
// Phase k (k = 1 .. p-1) pairs rank i with i XOR k when p is a power of two; otherwise with the
// usual (i + k) mod p send / (i - k) mod p receive pairing. A message i -> j is sent in the phase
// that pairs i with j; phases with no message are dropped.
// Needs: a valid CommMatrix. Guarantees: every phase is a partial permutation, every network
// message is sent whole exactly once, local copies are listed; at most p - 1 phases.
#pragma once

#include "ir/schedule.h"

namespace commfit {

Schedule decompose_lp(const CommMatrix& m);

}  // namespace commfit
