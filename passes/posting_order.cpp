#include "passes/posting_order.h"

#include "ir/error.h"
#include "passes/decompose_optimal.h"

namespace commfit {

PostingOrder coloured_posting_order(const CommMatrix& m) { return posting_order_of(decompose_optimal(m)); }

PostingOrder posting_order_of(const Schedule& coloured) {
  // decompose_optimal's phases are the colours, its transfers sorted by (colour, sender): each
  // sender's peers come out in colour order.
  PostingOrder out;
  out.colours = static_cast<std::int32_t>(coloured.phases);
  out.peers.resize(static_cast<std::size_t>(coloured.ranks));
  for (const Transfer& t : coloured.transfers) {
    commfit_assert(t.piece.offset == 0 && t.from == t.piece.src && t.to == t.piece.dst, "posting_order",
                   "the colouring split or forwarded a message");
    out.peers[static_cast<std::size_t>(t.from)].push_back(t.to);
  }
  return out;
}

}  // namespace commfit
