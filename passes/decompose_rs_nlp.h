// decompose (rs_nlp): the Ranka-Wang random-scheduling family of §4.2 and §5, faithful to Fig. 4
// (RS_Node/Link_Pairwise) with its two parts as options (§7.1's variants):
//   RS_N   = neither (Fig. 3; decompose_rs_n is this),
//   RS_NP  = pairwise: Locate_Pair first places i -> j and j -> i in the same phase where both are
//            idle, so they run as one pairwise exchange (§5, PAIRS);
//   RS_NL  = link_check: Check_Path / Mark_Path keep the routes of a phase link-disjoint on the
//            topology (§5, PATHS); a pick whose route crosses a claimed link is skipped;
//   RS_NLP = both.
// Each iteration starts at a random row (its own salted stream of seed) and is one phase. Locate_Pair
// is only outlined in the paper; ours is described in passes/ranka_wang_detail.h.
// Needs: the fresh CCOM of m (compress), m.ranks <= topology ranks (unless full). Guarantees:
// every phase is a partial permutation, every network message is sent whole exactly once, local
// copies are listed; with link_check no two transfers of a phase share a directed link.
#pragma once

#include "ir/ccom.h"
#include "ir/schedule.h"
#include "ir/topology.h"

namespace commfit {

struct RsNlpOptions {
  bool pairwise = true;     // P: Locate_Pair
  bool link_check = true;   // L: Check_Path / Mark_Path on the topology's routes
  std::uint64_t seed = 1;   // start rows (the CCOM carries compress's own seeded order)
};

struct RsNlpReport {
  std::int64_t pairs_located = 0;   // pairwise exchanges placed by Locate_Pair (each = 2 transfers)
};

Schedule decompose_rs_nlp(const CompressedMatrix& ccom, const CommMatrix& m, const Topology& topo,
                          const RsNlpOptions& options, RsNlpReport* report = nullptr);

// "rs_n", "rs_np", "rs_nl" or "rs_nlp" for the options (for tables and manifests).
const char* rs_nlp_name(const RsNlpOptions& options);

}  // namespace commfit
