#include "passes/park.h"

#include "ir/error.h"
#include "passes/memory_bound.h"

#include <algorithm>
#include <deque>

namespace commfit {
namespace {

struct Msg {
  Rank src = 0, dst = 0;
  Bytes size = 0;
  Bytes next = 0;   // first byte still at src (bytes before it were delivered or parked)
  Bytes left() const { return size - next; }
};

struct Parked {
  Rank holder = 0;
  Piece piece;      // the bytes still held (the front is forwarded first)
};

Bytes excess_of(Bytes want, Bytes have) { return want > have ? want - have : 0; }

class Parker {
 public:
  Parker(const CommMatrix& m, const ParkOptions& o) : m_(m), o_(o), p_(m.ranks) {
    const auto n = static_cast<std::size_t>(p_);
    in_msgs_.resize(n);
    out_msgs_.resize(n);
    parked_.resize(n);
    in_left_.assign(n, 0);
    own_left_.assign(n, 0);
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i == j) return;
      in_msgs_[j].push_back(msgs_.size());
      out_msgs_[i].push_back(msgs_.size());
      msgs_.push_back({i, j, b, 0});
      in_left_[j] += b;
      own_left_[i] += b;
      total_ += b;
    });
    // Free bytes beyond T are never needed: clamping keeps every sum below 2^64.
    free_.resize(n);
    for (std::size_t r = 0; r < n; ++r) free_[r] = std::min(m.memory[r], total_);
    recv_.assign(n, 0);
    sent_.assign(n, 0);
    lack_.assign(n, 0);
    excess_.assign(n, 0);
  }

  Schedule run(ParkStats* stats) {
    Schedule s;
    s.ranks = p_;
    s.copies = local_copies(m_);
    Bytes left = total_;
    Phase phase = 0;
    while (left > 0) {
      if (phase >= o_.max_phases)
        throw UsageError("strategy memory: the greedy schedule needs more than " + std::to_string(o_.max_phases) +
                         " phases (" + std::to_string(left) + " bytes still to move): give the ranks more free memory");
      const Bytes moved = one_phase(phase, s.transfers);
      if (moved == 0) {
        throw UsageError(
            "strategy memory: no byte can move in phase " + std::to_string(phase) + " (" + std::to_string(left) +
            " bytes still to move): every rank that is still owed data has no free memory" +
            (o_.parking ? std::string(" and no data can be parked")
                        : std::string(", and without parking they wait on each other forever")));
      }
      left -= delivered_;
      ++phase;
    }
    s.phases = phase;
    if (s.phases == 0 && !s.copies.empty()) s.phases = 1;
    canonicalize(s);
    if (stats) stats->parked_bytes = parked_bytes_;
    return s;
  }

 private:
  // One phase; returns the bytes received in it (delivered + parked).
  Bytes one_phase(Phase phase, std::vector<Transfer>& out) {
    const auto n = static_cast<std::size_t>(p_);
    std::fill(recv_.begin(), recv_.end(), 0);
    std::fill(sent_.begin(), sent_.end(), 0);
    delivered_ = 0;
    for (std::size_t r = 0; r < n; ++r) lack_[r] = excess_of(in_left_[r], free_[r]);

    // Rule 1: receive min(free, owed) from senders in the documented order.
    for (Rank d = 0; d < p_; ++d) {
      if (in_left_[d] == 0 || free_[d] == 0) continue;
      Bytes budget = std::min(free_[d], in_left_[d]);
      auto& in = in_msgs_[d];
      std::erase_if(in, [&](std::size_t k) { return msgs_[k].left() == 0; });
      order_.assign(in.begin(), in.end());
      std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
        const Msg &x = msgs_[a], &y = msgs_[b];
        const bool nx = lack_[x.src] > 0, ny = lack_[y.src] > 0;
        if (nx != ny) return nx;
        if (nx && lack_[x.src] != lack_[y.src]) return lack_[x.src] > lack_[y.src];
        if (!nx && x.left() != y.left()) return x.left() > y.left();
        return x.src < y.src;
      });
      auto direct = [&](std::size_t k) {
        Msg& x = msgs_[k];
        const Bytes b = std::min(budget, x.left());
        out.push_back({phase, x.src, d, {x.src, d, x.next, b}});
        x.next += b;
        own_left_[x.src] -= b;
        sent_[x.src] += b;
        budget -= b;
      };
      std::size_t k = 0;
      // a. Senders that lack memory: all of theirs if it fits, else the same share of each one's
      //    message (floor), the rounding remainder in lack order.
      std::size_t needy = 0;
      Bytes needy_left = 0;
      while (needy < order_.size() && lack_[msgs_[order_[needy]].src] > 0) needy_left += msgs_[order_[needy++]].left();
      if (needy_left > budget) {
        const Bytes share_of = budget;
        for (std::size_t x = 0; x < needy; ++x) {
          Msg& mx = msgs_[order_[x]];
          const auto share =
              static_cast<Bytes>((static_cast<unsigned __int128>(mx.left()) * share_of) / needy_left);
          if (share == 0) continue;
          out.push_back({phase, mx.src, d, {mx.src, d, mx.next, share}});
          mx.next += share;
          own_left_[mx.src] -= share;
          sent_[mx.src] += share;
          budget -= share;
        }
      }
      for (; k < needy && budget > 0; ++k) direct(order_[k]);
      auto& parked = parked_[d];
      while (budget > 0 && !parked.empty()) {
        Parked& h = parked.front();
        const Bytes b = std::min(budget, h.piece.bytes);
        out.push_back({phase, h.holder, d, {h.piece.src, d, h.piece.offset, b}});
        sent_[h.holder] += b;
        budget -= b;
        h.piece.offset += b;
        h.piece.bytes -= b;
        if (h.piece.bytes == 0) parked.pop_front();
      }
      for (; k < order_.size() && budget > 0; ++k) direct(order_[k]);
      const Bytes got = std::min(free_[d], in_left_[d]) - budget;
      commfit_assert(budget == 0, "park", "a rank received less than it could");
      recv_[d] += got;
      in_left_[d] -= got;
      delivered_ += got;
    }

    // Rule 2: park where a transfer cannot complete in the next phase.
    Bytes parked_now = 0;
    if (o_.parking) parked_now = park(phase, out);

    Bytes moved = 0;
    for (std::size_t r = 0; r < n; ++r) {
      commfit_assert(recv_[r] <= free_[r], "park", "rank " + std::to_string(r) + " receives more than it has free");
      free_[r] = free_[r] - recv_[r] + sent_[r];
      moved += recv_[r];
    }
    commfit_assert(moved == delivered_ + parked_now, "park", "bytes received do not add up");
    return moved;
  }

  Bytes park(Phase phase, std::vector<Transfer>& out) {
    const auto n = static_cast<std::size_t>(p_);
    // Parking space: free memory of ranks owed nothing more (rule 1 filled everyone else).
    spaces_.clear();
    for (Rank k = 0; k < p_; ++k) {
      const Bytes room = free_[k] - recv_[k];
      if (room == 0) continue;
      commfit_assert(in_left_[k] == 0, "park", "a rank with free memory is still owed data");
      spaces_.push_back({k, room});
    }
    if (spaces_.empty()) return 0;
    std::stable_sort(spaces_.begin(), spaces_.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    Bytes space = 0;
    for (const auto& sp : spaces_) space += sp.second;

    // What cannot complete next phase, per destination, and what each sender lacks.
    senders_.clear();
    for (std::size_t r = 0; r < n; ++r) {
      const Bytes next_free = free_[r] - recv_[r] + sent_[r];
      excess_[r] = excess_of(in_left_[r], next_free);
      lack_[r] = own_left_[r] > 0 ? excess_of(in_left_[r], next_free) : 0;
      if (lack_[r] > 0) senders_.push_back(static_cast<Rank>(r));
    }
    std::stable_sort(senders_.begin(), senders_.end(), [&](Rank a, Rank b) { return lack_[a] > lack_[b]; });

    Bytes parked = 0;
    std::size_t at = 0;   // current parking space
    for (Rank s : senders_) {
      for (std::size_t k : out_msgs_[s]) {
        if (space == 0 || lack_[s] == 0) break;
        Msg& x = msgs_[k];
        Bytes amount = std::min({x.left(), excess_[x.dst], lack_[s], space});
        if (amount == 0) continue;
        excess_[x.dst] -= amount;
        lack_[s] -= amount;
        space -= amount;
        parked += amount;
        while (amount > 0) {
          auto& [holder, room] = spaces_[at];
          const Bytes b = std::min(amount, room);
          const Piece piece{s, x.dst, x.next, b};
          out.push_back({phase, s, holder, piece});
          parked_[x.dst].push_back({holder, piece});
          recv_[holder] += b;
          sent_[s] += b;
          own_left_[s] -= b;
          x.next += b;
          room -= b;
          amount -= b;
          if (room == 0) ++at;
        }
      }
      if (space == 0) break;
    }
    parked_bytes_ += parked;
    return parked;
  }

  const CommMatrix& m_;
  const ParkOptions& o_;
  Rank p_;
  Bytes total_ = 0;
  std::vector<Msg> msgs_;
  std::vector<std::vector<std::size_t>> in_msgs_, out_msgs_;
  std::vector<std::deque<Parked>> parked_;
  std::vector<Bytes> free_, in_left_, own_left_, recv_, sent_, lack_, excess_;
  std::vector<std::size_t> order_;
  std::vector<std::pair<Rank, Bytes>> spaces_;
  std::vector<Rank> senders_;
  Bytes delivered_ = 0;
  Bytes parked_bytes_ = 0;
};

}  // namespace

Schedule park(const CommMatrix& m, const ParkOptions& o, ParkStats* stats) {
  if (const std::string why = memory_feasibility(m); !why.empty()) throw UsageError("strategy memory: " + why);
  return Parker(m, o).run(stats);
}

}  // namespace commfit
