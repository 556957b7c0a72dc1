#include "passes/ranka_wang_detail.h"

#include "ir/error.h"

#include <algorithm>

namespace commfit::detail {

std::span<const Link> LinkClaims::compute_route(std::int64_t msg, Rank a, Rank b) {
  const auto k = static_cast<std::size_t>(msg);
  if (k >= first_.size()) {
    first_.resize(k + 1, -1);
    length_.resize(k + 1, 0);
  }
  topo_.route(a, b, scratch_);
  first_[k] = static_cast<std::int64_t>(links_.size());
  length_[k] = static_cast<std::uint32_t>(scratch_.size());
  links_.insert(links_.end(), scratch_.begin(), scratch_.end());
  return {links_.data() + first_[k], length_[k]};
}

RsState::RsState(const CompressedMatrix& ccom, const CommMatrix& m, Order order) : n_(m.ranks), order_(order) {
  commfit_assert(ccom.ranks == m.ranks, "ranka_wang", "CCOM and matrix differ in rank count");
  row_first_.assign(static_cast<std::size_t>(n_) + 1, 0);
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    msg_src_.push_back(i);
    msg_dst_.push_back(j);
    remaining_.push_back(b);
    ++row_first_[i + 1];
  });
  for (Rank i = 0; i < n_; ++i) row_first_[i + 1] += row_first_[i];
  const auto count = static_cast<std::int64_t>(msg_src_.size());
  sent_.assign(static_cast<std::size_t>(count), 0);
  pos_.assign(static_cast<std::size_t>(count), -1);
  slot_.assign(static_cast<std::size_t>(count), -1);
  row_begin_ = row_first_;
  prt_.assign(static_cast<std::size_t>(n_), 0);
  pending_in_.assign(static_cast<std::size_t>(n_), 0);
  for (Rank i = 0; i < n_; ++i) {
    commfit_assert(ccom.prt[i] == row_first_[i + 1] - row_first_[i], "ranka_wang",
                   "CCOM row " + std::to_string(i) + " is not the fresh row of the matrix");
    for (std::int64_t j = 0; j < ccom.prt[i]; ++j) {
      const std::int64_t msg = find(i, ccom.row(i)[j]);
      commfit_assert(msg >= 0 && pos_[msg] < 0, "ranka_wang", "CCOM entry without a message");
      place(i, j, msg);
    }
    prt_[i] = ccom.prt[i];
    if (order_ == Order::heap) {
      // Largest first (stable): a sorted array is a max-heap.
      std::int64_t* first = slot_.data() + row_begin_[i];
      std::stable_sort(first, first + prt_[i], [&](std::int64_t a, std::int64_t b) { return remaining_[a] > remaining_[b]; });
      for (std::int64_t j = 0; j < prt_[i]; ++j) pos_[first[j]] = j;
    }
    if (prt_[i] > 0) rows_.push_back(i);
  }
  for (std::int64_t msg = 0; msg < count; ++msg) ++pending_in_[msg_dst_[msg]];
  receivers_pending_ = std::count_if(pending_in_.begin(), pending_in_.end(), [](std::int64_t c) { return c > 0; });
  pending_messages_ = count;
  send_.assign(static_cast<std::size_t>(n_), -1);
  receive_.assign(static_cast<std::size_t>(n_), -1);
}

std::int64_t RsState::find(Rank i, Rank k) const {
  const auto first = msg_dst_.begin() + row_first_[i], last = msg_dst_.begin() + row_first_[i + 1];
  const auto it = std::lower_bound(first, last, k);
  return it != last && *it == k ? it - msg_dst_.begin() : -1;
}

void RsState::sift_up(Rank i, std::int64_t j) {
  std::int64_t* h = slot_.data() + row_begin_[i];
  while (j > 0) {
    const std::int64_t parent = (j - 1) / 2;
    if (remaining_[h[parent]] >= remaining_[h[j]]) break;
    std::swap(h[parent], h[j]);
    pos_[h[j]] = j;
    pos_[h[parent]] = parent;
    j = parent;
  }
}

void RsState::sift_down(Rank i, std::int64_t j) {
  std::int64_t* h = slot_.data() + row_begin_[i];
  const std::int64_t size = prt_[i];
  for (;;) {
    std::int64_t big = j;
    for (std::int64_t c : {2 * j + 1, 2 * j + 2})
      if (c < size && remaining_[h[c]] > remaining_[h[big]]) big = c;
    if (big == j) return;
    std::swap(h[big], h[j]);
    pos_[h[j]] = j;
    pos_[h[big]] = big;
    j = big;
  }
}

// Fig. 3: CCOM(i, j) = CCOM(i, prt(i)); CCOM(i, prt(i)) = -1; prt(i) = prt(i) - 1. In heap
// order the moved entry is sifted to its place.
void RsState::remove_at(Rank i, std::int64_t j) {
  std::int64_t* row = slot_.data() + row_begin_[i];
  pos_[row[j]] = -1;
  const std::int64_t last = --prt_[i];
  if (j != last) place(i, j, row[last]);
  row[last] = -1;
  if (order_ == Order::heap && j != last) {
    sift_down(i, j);
    sift_up(i, j);
  }
}

bool RsState::take(std::int64_t msg, bool paired) {
  send_[msg_src_[msg]] = msg_dst_[msg];
  receive_[msg_dst_[msg]] = msg_src_[msg];
  picks_.push_back({msg, paired});
  return true;
}

const std::vector<Pick>& RsState::iterate(Rank x, bool pairwise, LinkClaims* links, std::uint32_t iteration) {
  for (const Pick& p : picks_) send_[msg_src_[p.msg]] = receive_[msg_dst_[p.msg]] = -1;
  picks_.clear();
  if (rows_.empty()) return picks_;
  const std::size_t start = std::lower_bound(rows_.begin(), rows_.end(), x) - rows_.begin();
  // Receivers with unsent messages and no receive yet: when none is left, no later row can pick.
  std::int64_t free_receivers = receivers_pending_;

  if (pairwise) {   // Locate_Pair(x)
    for (std::size_t y = 0; y < rows_.size() && free_receivers > 1; ++y) {
      const Rank i = rows_[(start + y) % rows_.size()];
      if (send_[i] != -1 || receive_[i] != -1) continue;
      const std::int64_t* row = slot_.data() + row_begin_[i];
      for (std::int64_t j = 0; j < prt_[i]; ++j) {
        const std::int64_t msg = row[j];
        const Rank k = msg_dst_[msg];
        if (send_[k] != -1 || receive_[k] != -1) continue;
        // Check_Path(i, k) first: with the route kept it is the cheapest test that fails most
        // often (the tests are independent, so their order changes nothing that is picked).
        if (links && !links->check_path(links->route(msg, i, k), iteration)) continue;
        const std::int64_t back = find(k, i);   // PAIRS(k, i)
        if (back < 0 || pos_[back] < 0) continue;
        if (links) {
          const std::span<const Link> from = links->route(back, k, i);   // links_ may grow: `there` after it
          const std::span<const Link> there = links->route(msg, i, k);
          if (!links->check_path(from, iteration)) continue;
          const bool overlap = std::any_of(there.begin(), there.end(), [&](Link l) {
            return std::find(from.begin(), from.end(), l) != from.end();
          });
          if (overlap) continue;
          links->mark_path(there, iteration);
          links->mark_path(from, iteration);
        }
        take(msg, true);
        take(back, true);
        remove_at(k, pos_[back]);
        remove_at(i, j);
        free_receivers -= 2;
        break;
      }
    }
  }

  for (std::size_t y = 0; y < rows_.size() && free_receivers > 0; ++y) {
    const Rank i = rows_[(start + y) % rows_.size()];   // rows (x + y) mod n with entries
    if (send_[i] != -1) continue;
    const std::int64_t* row = slot_.data() + row_begin_[i];
    for (std::int64_t j = 0; j < prt_[i]; ++j) {          // first entry whose receiver (and path) is free
      const std::int64_t msg = row[j];
      const Rank k = msg_dst_[msg];
      if (receive_[k] != -1) continue;
      if (links) {
        const std::span<const Link> route = links->route(msg, i, k);
        if (!links->check_path(route, iteration)) continue;
        links->mark_path(route, iteration);
      }
      take(msg, false);
      remove_at(i, j);
      --free_receivers;
      break;
    }
  }
  commfit_assert(!picks_.empty(), "ranka_wang", "an iteration picked no message");
  return picks_;
}

void RsState::complete(std::int64_t msg) {
  commfit_assert(remaining_[msg] == 0, "ranka_wang", "completing a message with bytes left");
  --pending_messages_;
  if (--pending_in_[msg_dst_[msg]] == 0) --receivers_pending_;
}

void RsState::reinsert(std::int64_t msg) {
  commfit_assert(order_ == Order::heap && remaining_[msg] > 0 && pos_[msg] < 0, "ranka_wang", "bad reinsert");
  const Rank i = msg_src_[msg];
  const std::int64_t j = prt_[i]++;
  place(i, j, msg);
  sift_up(i, j);
}

void RsState::end_iteration() {
  std::erase_if(rows_, [&](Rank i) { return prt_[i] == 0; });
}

}  // namespace commfit::detail
