// The iteration shared by the Ranka-Wang random-scheduling passes (decompose_rs_nlp: RS_N,
// RS_NP, RS_NL, RS_NLP, Figs. 3-4; heap_split: RS_NLH, RS_NLPH, §6). Internal to those passes.
//
// One iteration (one phase) of Fig. 4: send = receive = -1; x = random row; Locate_Pair(x) when
// pairwise; then rows x, x+1, ... (mod n): a row that does not send yet takes the first active
// entry k of its CCOM row whose receiver is free and, with link checking, whose route is free
// (Check_Path); Mark_Path claims the route. Picked entries leave their row: in CCOM order the
// last active entry fills the hole (Fig. 3); in heap order the heap is restored (§6).
//
// Locate_Pair and PAIRS are only outlined in §5 (the details are in the report [17], which we do
// not have). Ours: PAIRS(i, k) is the position of destination k in row i, or -1 once taken;
// scanning rows from x, a row i with neither a send nor a receive yet takes the first entry k in
// its row order such that k is idle too, PAIRS(k, i) != -1, and (with link checking) both routes
// i -> k and k -> i are free. Both entries leave their rows; both routes are claimed.
#pragma once

#include "ir/ccom.h"
#include "ir/random.h"
#include "ir/topology.h"

#include <cstdint>
#include <algorithm>
#include <span>
#include <vector>

namespace commfit::detail {

// Fig. 4's PATHS: the iteration that last claimed each directed link.
class LinkClaims {
 public:
  explicit LinkClaims(const Topology& t) : topo_(t), stamp_(static_cast<std::size_t>(t.link_count()), 0) {}
  // The route a -> b of message `msg` (ids as RsState's), computed on first use and kept: a row's
  // entries are checked again every iteration until they go.
  std::span<const Link> route(std::int64_t msg, Rank a, Rank b) {
    const auto k = static_cast<std::size_t>(msg);
    if (k < first_.size() && first_[k] >= 0) return {links_.data() + first_[k], length_[k]};
    return compute_route(msg, a, b);
  }
  // Check_Path: true when none of the route's links is claimed in `iteration`.
  bool check_path(std::span<const Link> route, std::uint32_t iteration) const {
    return std::none_of(route.begin(), route.end(), [&](Link l) { return stamp_[l.index()] == iteration; });
  }
  // Mark_Path: claims a route checked in this iteration.
  void mark_path(std::span<const Link> route, std::uint32_t iteration) {
    for (Link l : route) stamp_[l.index()] = iteration;
  }

 private:
  std::span<const Link> compute_route(std::int64_t msg, Rank a, Rank b);

  const Topology& topo_;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::int64_t> first_;   // per message: its route's offset in links_, -1 until computed
  std::vector<std::uint32_t> length_;
  std::vector<Link> links_, scratch_;
};

struct Pick {
  std::int64_t msg;   // message id (see RsState)
  bool paired;        // placed by Locate_Pair
};

class RsState {
 public:
  enum class Order { ccom, heap };

  // Messages are the network entries of m (src != dst) in (src, dst) order. Rows start in the
  // CCOM's order; with Order::heap each row is then sorted by size, largest first (stable, so
  // equal sizes keep the CCOM's random order), which is a max-heap.
  RsState(const CompressedMatrix& ccom, const CommMatrix& m, Order order);

  bool done() const { return pending_messages_ == 0; }

  // One iteration: picks at most one entry per sender and per receiver, removes the picked
  // entries from their rows and returns them. `links` is null without link checking.
  const std::vector<Pick>& iterate(Rank x, bool pairwise, LinkClaims* links, std::uint32_t iteration);

  // After an iteration: a picked message either completes or goes back to its row's heap with
  // `remaining` bytes (heap order only). Then end_iteration().
  void complete(std::int64_t msg);
  void reinsert(std::int64_t msg);
  void end_iteration();

  Rank src(std::int64_t msg) const { return msg_src_[msg]; }
  Rank dst(std::int64_t msg) const { return msg_dst_[msg]; }
  Bytes remaining(std::int64_t msg) const { return remaining_[msg]; }
  Bytes sent(std::int64_t msg) const { return sent_[msg]; }
  void send_bytes(std::int64_t msg, Bytes b) { sent_[msg] += b; remaining_[msg] -= b; }

 private:
  std::int64_t find(Rank i, Rank k) const;   // message id of i -> k, or -1
  void remove_at(Rank i, std::int64_t j);
  void sift_up(Rank i, std::int64_t j);
  void sift_down(Rank i, std::int64_t j);
  void place(Rank i, std::int64_t j, std::int64_t msg) { slot_[row_begin_[i] + j] = msg; pos_[msg] = j; }
  bool take(std::int64_t msg, bool paired);

  Rank n_;
  Order order_;
  std::vector<std::int64_t> row_first_;   // messages of row i: [row_first_[i], row_first_[i+1]), by dst
  std::vector<Rank> msg_src_, msg_dst_;
  std::vector<Bytes> remaining_, sent_;
  std::vector<std::int64_t> row_begin_, prt_, slot_, pos_;   // active entries (CCOM / heap) and PAIRS
  std::vector<Rank> rows_;                // rows with active entries, ascending
  std::vector<std::int64_t> pending_in_;  // unfinished messages per receiver
  std::int64_t receivers_pending_ = 0, pending_messages_ = 0;
  std::vector<Rank> send_, receive_;      // this iteration's send/receive (-1 = free)
  std::vector<Pick> picks_;
};

// Salt of the start-row stream (compress() seeds its Rng with the same seed; the salt keeps the
// two streams independent). Changing it changes every random-scheduling plan.
inline constexpr std::uint64_t kRsStartRowSalt = 0x7a3c5e91d2b4f608ULL;

}  // namespace commfit::detail
