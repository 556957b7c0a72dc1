// quantised split (beyond Ranka-Wang §6): every message is cut into ceil(b / q) near-equal pieces
// of at most q bytes, and the resulting bipartite multigraph is edge-coloured with exactly
// D = max over ranks of its piece count colours (König's theorem holds for multigraphs), pieces
// largest first so that full-size pieces share phases. A colour is a phase.
// Bound: D <= h + t/q, so the synchronous cost is at most (h + t/q)(tau + q mu); with
// q* = sqrt(tau t / (mu h)) that is h tau + t mu + 2 sqrt(h tau t mu) <= 2 LB.
// Needs: a valid CommMatrix, q >= 1. Guarantees: every phase a partial permutation (one piece
// per rank sent and received), every network byte sent exactly once, exactly D phases.
#pragma once

#include "ir/schedule.h"

namespace commfit {

Schedule quantised_split(const CommMatrix& m, Bytes q);

// Pieces per rank at chunk size q: max over ranks of the sum of ceil(b / q) over its messages.
std::int64_t quantised_degree(const CommMatrix& m, Bytes q);

}  // namespace commfit
