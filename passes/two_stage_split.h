// two-stage split: Transportation primitive §7-8 (Fig. 8, 9, 11, 12, Appendix A) and
// Bader-Helman-JaJa §3 (Step 1, eq. (4)-(5), §3.3). Every network message a_ij (i != j) is cut
// into p parts, one per intermediary k = 0 .. p-1, each of floor(a_ij / p) or ceil(a_ij / p)
// bytes; stage 1 carries part k from i to k, stage 2 from k to j. Bytes are the papers'
// "elements" (a part is a contiguous byte range, so every part is one piece). The variants differ
// only in which a_ij mod p intermediaries get the extra byte, i.e. where the run of "ceil" parts
// of each message starts:
//
//   transport       Fig. 8: inside each source, round-robin continuing from message to message,
//                   every source starting at k = 0.
//                   Guarantees: part bytes from source i to k  <= ceil(r_i / p) <= ceil(t / p).
//   transport-scan  Fig. 9's additional step: source i starts where sources 0 .. i-1 stopped
//                   (prefix scan of r_i mod p), one round-robin over all sources.
//                   Guarantees: the above, and bytes arriving at k in total <= ceil(N / p) <= t.
//   transport-alt   §8, Fig. 11-12, with the "additional step" (global sum-combine): round-robin
//                   across sources, per destination, destinations continuing one another.
//                   Guarantees: bytes from k to destination j <= ceil(c_j / p) <= ceil(t / p),
//                   and bytes leaving k in total <= ceil(N / p) <= t.
//   bhj             BHJ Step (1): the x-th byte of i's data for j goes to bin (i + j + x) mod p.
//                   Guarantees (eq. (4), (5), §3.3 with n/p := r_i, h := c_j in bytes):
//                   bytes from i to k <= r_i / p + (p - 1) / 2, from k to j <= c_j / p + (p - 1) / 2.
//   random          Appendix A: the transport split, then each source's p bundles (all of its
//                   parts for one intermediary) are shuffled among the intermediaries whose
//                   bundles have the same size (the ceil group and the floor group), seeded.
//                   Guarantees: bytes from i to k <= ceil(r_i / p); stage 2 only in expectation.
//
// r_i, c_j, t are over network messages (src != dst); N = total network bytes. Local messages
// (src == dst) are not split: they stay local copies. A part whose intermediary is its own source
// or destination is not a network hop (stage_schedule sends it in one stage). Every variant
// guarantees: for every network message, its non-empty parts tile [0, a_ij) exactly, one per
// intermediary, sizes floor or ceil of a_ij / p, exactly a_ij mod p of them ceil.
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace commfit {

enum class TwoStageVariant { transport, transport_scan, transport_alt, bhj, random };

struct TwoStageVariantEntry {
  const char* name;
  TwoStageVariant variant;
  const char* description;
};
std::span<const TwoStageVariantEntry> two_stage_variants();
std::optional<TwoStageVariant> parse_two_stage_variant(const std::string& name);
const char* to_string(TwoStageVariant v);

// One part: bytes [offset, offset + bytes) of message src -> dst, routed via intermediary mid.
struct StagePart {
  Rank src = 0;
  Rank mid = 0;
  Rank dst = 0;
  Bytes offset = 0;
  Bytes bytes = 0;
  friend bool operator==(const StagePart&, const StagePart&) = default;
};

struct TwoStageSplit {
  Rank ranks = 0;
  std::vector<StagePart> parts;   // non-empty parts, in (src, dst, offset) order
};

// Number of non-empty parts two_stage_split makes: sum over network messages of min(a_ij, p).
// O(nnz); lets a caller refuse a split too large to hold before making it.
std::uint64_t two_stage_part_count(const CommMatrix& m);

TwoStageSplit two_stage_split(const CommMatrix& m, TwoStageVariant v, std::uint64_t seed);

}  // namespace commfit
