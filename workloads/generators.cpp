#include "workloads/generators.h"

#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace commfit {
namespace {

// Salts so that the pattern and the sizes of one generator draw independent streams.
constexpr std::uint64_t kSizeSalt = 0x5157a3e1c0ffee11ULL;

// Set of (i, j) pairs of an n x n pattern: a bitset while it stays small, else an
// open-addressing hash table (linear probing, load <= 3/4).
class PairSet {
 public:
  PairSet(Rank n, std::int64_t expected)
      : n_(static_cast<std::uint64_t>(n)), use_bits_(n_ * n_ <= (std::uint64_t{1} << 29)) {
    if (use_bits_) {   // <= 64 MiB of bits
      bits_.assign((n_ * n_ + 63) / 64, 0);
    } else {
      std::uint64_t cap = 16;
      while (3 * cap < 4 * static_cast<std::uint64_t>(expected)) cap <<= 1;
      slots_.assign(cap, 0);
      shift_ = 64 - std::countr_zero(cap);
    }
  }
  bool has(Rank i, Rank j) const {
    const std::uint64_t key = pair_key(i, j);
    if (use_bits_) return (bits_[key >> 6] >> (key & 63)) & 1;
    for (std::uint64_t s = slot_of(key);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == 0) return false;
      if (slots_[s] == key + 1) return true;
    }
  }
  void insert(Rank i, Rank j) {
    const std::uint64_t key = pair_key(i, j);
    if (use_bits_) {
      bits_[key >> 6] |= std::uint64_t{1} << (key & 63);
      return;
    }
    std::uint64_t s = slot_of(key);
    while (slots_[s] != 0 && slots_[s] != key + 1) s = (s + 1) & (slots_.size() - 1);
    slots_[s] = key + 1;
  }

 private:
  std::uint64_t pair_key(Rank i, Rank j) const {
    return static_cast<std::uint64_t>(i) * n_ + static_cast<std::uint64_t>(j);
  }
  std::uint64_t slot_of(std::uint64_t key) const { return (key * 0x9e3779b97f4a7c15ULL) >> shift_; }
  std::uint64_t n_;
  bool use_bits_;
  int shift_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint64_t> slots_;
};

// Completes `perm` (rows whose entry is -1 are unassigned) into a permutation whose every
// entry is allowed (j != i and (i, j) not in `used`), by breadth-first augmenting paths.
// The allowed graph is regular with degree >= 1 (see random_regular_pattern), so by König
// it has a perfect matching and an augmenting path exists for every unassigned row.
void augment_unassigned(std::vector<Rank>& perm, const PairSet& used) {
  const Rank n = static_cast<Rank>(perm.size());
  std::vector<Rank> owner(n, -1), parent(n, -1), queue;
  for (Rank i = 0; i < n; ++i)
    if (perm[i] >= 0) owner[perm[i]] = i;
  for (Rank root = 0; root < n; ++root) {
    if (perm[root] >= 0) continue;
    std::fill(parent.begin(), parent.end(), -1);  // parent[column] = row that reached it
    queue.assign(1, root);
    Rank free_col = -1;
    for (std::size_t q = 0; q < queue.size() && free_col < 0; ++q) {
      const Rank i = queue[q];
      for (Rank c = 0; c < n; ++c) {
        if (c == i || parent[c] >= 0 || used.has(i, c)) continue;
        parent[c] = i;
        if (owner[c] < 0) {
          free_col = c;
          break;
        }
        queue.push_back(owner[c]);
      }
    }
    commfit_assert(free_col >= 0, "gen_uniform", "no augmenting path in a regular graph");
    for (Rank c = free_col; c >= 0;) {  // flip the path back to the root
      const Rank i = parent[c];
      const Rank prev = perm[i];
      perm[i] = c;
      owner[c] = i;
      c = prev;
    }
  }
}

// A random d-regular bipartite pattern without self loops, 2d <= n - 1: the union of d
// random permutations. Layer k starts as a uniform random permutation (Fisher-Yates); each
// entry that is a self loop or repeats an earlier layer's pair is repaired by swapping it
// with a random other row where the swap makes both rows valid (at most d of the n - 1
// candidates of a row are forbidden, so a try succeeds with probability about 1/4 or
// better); entries still bad after 256 tries are completed by augmenting paths, which
// always succeed, so generation terminates on every input.
std::vector<std::vector<Rank>> random_regular_pattern(Rank n, int d, Rng& rng, PairSet& used) {
  std::vector<std::vector<Rank>> layers;
  std::vector<Rank> perm(n);
  std::vector<Rank> bad;
  auto is_bad = [&](Rank i, Rank j) { return j == i || used.has(i, j); };
  for (int k = 0; k < d; ++k) {
    for (Rank i = 0; i < n; ++i) perm[i] = i;
    rng.shuffle(perm.begin(), perm.end());
    bad.clear();
    for (Rank i = 0; i < n; ++i)
      if (is_bad(i, perm[i])) bad.push_back(i);
    bool unresolved = false;
    for (Rank i : bad) {
      if (!is_bad(i, perm[i])) continue;  // fixed by an earlier swap
      bool fixed = false;
      for (int attempt = 0; attempt < 256 && !fixed; ++attempt) {
        const Rank j = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(n)));
        if (j == i || is_bad(i, perm[j]) || is_bad(j, perm[i])) continue;
        std::swap(perm[i], perm[j]);
        fixed = true;
      }
      if (!fixed) unresolved = true;
    }
    if (unresolved) {
      for (Rank i = 0; i < n; ++i)
        if (is_bad(i, perm[i])) perm[i] = -1;
      augment_unassigned(perm, used);
    }
    for (Rank i = 0; i < n; ++i) used.insert(i, perm[i]);
    layers.push_back(perm);
  }
  return layers;
}

// Visits the columns of row i of an n x n pattern (diagonal included only when `self`) where
// a pair is present with probability `density`: geometric skipping, so a sparse row costs
// O(entries) rather than O(n) draws. (std::log: identical results need the same libm.)
template <class F>
void bernoulli_row(Rank n, Rank i, double density, bool self, Rng& rng, F&& visit) {
  if (density <= 0) return;
  const std::int64_t cols = self ? n : n - 1;
  auto column = [&](std::int64_t pos) { return static_cast<Rank>(!self && pos >= i ? pos + 1 : pos); };
  if (density >= 1) {
    for (std::int64_t pos = 0; pos < cols; ++pos) visit(column(pos));
    return;
  }
  const double log_q = std::log1p(-density);
  for (std::int64_t pos = -1;;) {
    const double u = 1.0 - rng.uniform();  // (0, 1]
    const double skip = std::floor(std::log(u) / log_q);
    if (skip >= static_cast<double>(cols)) return;
    pos += 1 + static_cast<std::int64_t>(skip);
    if (pos >= cols) return;
    visit(column(pos));
  }
}

Bytes uniform_size(Rng& rng, Bytes max_bytes) {
  commfit_assert(max_bytes >= 1, "generators", "max_bytes must be at least 1");
  return 1 + rng.below(max_bytes);
}

}  // namespace

CommMatrix gen_uniform(Rank n, int d, Bytes bytes, std::uint64_t seed) {
  commfit_assert(n >= 0 && d >= 0 && (d == 0 || d <= n - 1), "gen_uniform", "need 0 <= d <= n - 1");
  Rng rng(seed);
  std::vector<Message> msgs;
  msgs.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(d));
  // For 2d > n - 1 draw the complement (degree n - 1 - d) and emit every other off-diagonal
  // pair: the complement of a regular pattern in K_{n,n} minus the diagonal is regular.
  const bool complement = d > 0 && 2 * static_cast<std::int64_t>(d) > n - 1;
  const int drawn = complement ? n - 1 - d : d;
  PairSet used(n, static_cast<std::int64_t>(n) * drawn);
  const auto layers = random_regular_pattern(n, drawn, rng, used);
  if (complement) {
    for (Rank i = 0; i < n; ++i)
      for (Rank j = 0; j < n; ++j)
        if (j != i && !used.has(i, j)) msgs.push_back({i, j, bytes});
  } else {
    for (const auto& perm : layers)
      for (Rank i = 0; i < n; ++i) msgs.push_back({i, perm[i], bytes});
  }
  return make_matrix(n, std::move(msgs));
}

CommMatrix gen_nonuniform(Rank n, int d, Bytes unit, std::uint64_t seed) {
  CommMatrix pattern = gen_uniform(n, d, 1, seed);
  Rng rng(seed ^ kSizeSalt);
  std::vector<Message> msgs;
  msgs.reserve(static_cast<std::size_t>(pattern.nnz()));
  pattern.for_each([&](Rank i, Rank j, Bytes) {
    msgs.push_back({i, j, rng.below(static_cast<std::uint64_t>(n)) * unit});
  });
  return make_matrix(n, std::move(msgs));
}

CommMatrix gen_random_sparse(Rank n, double density, Bytes max_bytes, std::uint64_t seed,
                             bool self) {
  Rng rng(seed);
  std::vector<Message> msgs;
  for (Rank i = 0; i < n; ++i)
    bernoulli_row(n, i, density, self, rng, [&](Rank j) { msgs.push_back({i, j, 0}); });
  Rng sizes(seed ^ kSizeSalt);
  for (Message& x : msgs) x.bytes = uniform_size(sizes, max_bytes);
  return make_matrix(n, std::move(msgs));
}

CommMatrix gen_dense(Rank n, Bytes max_bytes, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Message> msgs;
  msgs.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (Rank i = 0; i < n; ++i)
    for (Rank j = 0; j < n; ++j) msgs.push_back({i, j, uniform_size(rng, max_bytes)});
  return make_matrix(n, std::move(msgs));
}

CommMatrix gen_hot_receiver(Rank n, Rank hot, Bytes max_bytes, double background,
                            std::uint64_t seed) {
  commfit_assert(hot >= 0 && hot < n, "gen_hot_receiver", "hot rank out of range");
  Rng rng(seed);
  Rng sizes(seed ^ kSizeSalt);
  std::vector<Message> msgs;
  for (Rank i = 0; i < n; ++i) {
    if (i != hot) msgs.push_back({i, hot, uniform_size(sizes, max_bytes)});
    bernoulli_row(n, i, background, false, rng, [&](Rank j) {
      if (j != hot) msgs.push_back({i, j, uniform_size(sizes, max_bytes)});
    });
  }
  return make_matrix(n, std::move(msgs));
}

CommMatrix gen_lognormal(Rank n, double density, double median, double sigma,
                         std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Message> msgs;
  for (Rank i = 0; i < n; ++i)
    bernoulli_row(n, i, density, false, rng, [&](Rank j) { msgs.push_back({i, j, 0}); });
  Rng sizes(seed ^ kSizeSalt);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const double cap = static_cast<double>(kMaxMessageBytes);
  for (Message& x : msgs) {
    // Box-Muller: z standard normal from two uniforms; size = median * e^(sigma z).
    const double u1 = 1.0 - sizes.uniform();  // (0, 1]
    const double u2 = sizes.uniform();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    const double b = std::round(median * std::exp(sigma * z));
    x.bytes = b < 1 ? 1 : b >= cap ? kMaxMessageBytes : static_cast<Bytes>(b);
  }
  return make_matrix(n, std::move(msgs));
}

}  // namespace commfit
