// quantised split (beyond Ranka-Wang §6): every message is cut into ceil(b / q) near-equal pieces
// of at most q bytes, and the resulting bipartite multigraph is edge-coloured, pieces largest
// first, each into the smallest colour free at both its ends (first fit), so that pieces of
// similar size share phases and few phases are set by one large piece. A colour is a phase.
// At most D + slack colours, D = max over ranks of its piece count: when first fit finds no
// colour below that cap, an alternating-path flip (König's theorem holds for multigraphs) frees
// one below D. slack = 0 gives exactly D phases; slack >= D - 1 is first fit alone (<= 2D - 1).
// A little slack keeps large pieces together at the price of a few more phases; the strategy
// prices several under the cost model.
// Bound (exact): D <= h + t/q, so the synchronous cost is at most (h + t/q)(tau + q mu); with
// q* = sqrt(tau t / (mu h)) that is h tau + t mu + 2 sqrt(h tau t mu) <= 2 LB.
// Needs: a valid CommMatrix, q >= 1. Guarantees: every phase a partial permutation (one piece
// per rank sent and received), every network byte sent exactly once, at most D + slack phases
// (exactly D with slack 0).
#pragma once

#include "ir/schedule.h"

namespace commfit {

Schedule quantised_split(const CommMatrix& m, Bytes q, std::int64_t slack = 0);

// The same pieces coloured by bottleneck peeling (min-bottleneck perfect matchings, a weighted
// edge-colouring heuristic of SS/TDMA time-slot assignment): padded to D-regular with 0-byte
// dummies, the multigraph is peeled into D perfect matchings, each the one whose largest piece is
// smallest (binary search over sizes, Hopcroft–Karp). Exactly D phases, pieces of similar size
// together. Work: D binary searches of O(log E) matchings of O(E sqrt p) each, E = p·D pieces and
// dummies (the strategy skips it beyond p·D² = 2^23).
Schedule quantised_split_bottleneck(const CommMatrix& m, Bytes q);


// Pieces per rank at chunk size q: max over ranks of the sum of ceil(b / q) over its messages.
std::int64_t quantised_degree(const CommMatrix& m, Bytes q);

}  // namespace commfit
