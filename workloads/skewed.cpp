#include "workloads/skewed.h"

#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace commfit {
namespace {

// Draws ranks 0 .. K-1 with P(r) proportional to 1 / (r + 1)^s (inverse CDF by binary search).
// std::pow: identical results need the same libm, as for the generators' std::log.
class Zipf {
 public:
  Zipf(std::int64_t k, double s) : cdf_(static_cast<std::size_t>(k)) {
    double sum = 0;
    for (std::int64_t r = 0; r < k; ++r) cdf_[r] = sum += std::pow(static_cast<double>(r + 1), -s);
  }
  std::int64_t draw(Rng& rng) const {
    const double u = rng.uniform() * cdf_.back();
    const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
    return std::min<std::int64_t>(it - cdf_.begin(), static_cast<std::int64_t>(cdf_.size()) - 1);
  }

 private:
  std::vector<double> cdf_;
};

// Per-sender row accumulator: counts per destination, emitted as messages in destination order.
class RowCounts {
 public:
  explicit RowCounts(Rank p) : count_(static_cast<std::size_t>(p), 0) {}
  void add(Rank dst, Bytes b) {
    if (count_[dst] == 0) touched_.push_back(dst);
    count_[dst] += b;
  }
  void flush(Rank src, std::vector<Message>& out) {
    std::sort(touched_.begin(), touched_.end());
    for (Rank d : touched_) {
      out.push_back({src, d, count_[d]});
      count_[d] = 0;
    }
    touched_.clear();
  }

 private:
  std::vector<Bytes> count_;
  std::vector<Rank> touched_;
};

// `b` bytes spread over `targets` as evenly as possible (the first b mod m get one more).
void spread(Bytes b, const std::vector<Rank>& targets, RowCounts& row) {
  if (targets.empty() || b == 0) return;
  const Bytes m = targets.size();
  for (std::size_t k = 0; k < targets.size(); ++k) row.add(targets[k], b / m + (k < b % m ? 1 : 0));
}

}  // namespace

CommMatrix gen_bader_h_relation(Rank p, std::int64_t keys_per_rank, int h_factor, Bytes key_bytes) {
  commfit_assert(p >= 1 && keys_per_rank >= 1 && h_factor >= 1 && key_bytes >= 1, "gen_bader_h_relation", "bad arguments");
  const std::int64_t n = static_cast<std::int64_t>(p) * keys_per_rank;
  const std::int64_t h = static_cast<std::int64_t>(h_factor) * keys_per_rank;
  std::vector<std::int64_t> v(static_cast<std::size_t>(p), 0);
  if (h_factor == 1 || p == 1) {
    std::fill(v.begin(), v.end(), keys_per_rank);
  } else {
    // v_i = floor(h (2n - h - h i) / (2n - h)) for h i < 2n, i != p - 1 (exact in 128 bits).
    std::int64_t sum = 0;
    for (Rank i = 0; i < p - 1; ++i) {
      if (static_cast<__int128>(h) * i >= 2 * static_cast<__int128>(n)) break;
      const __int128 num = static_cast<__int128>(h) * (2 * n - h - static_cast<__int128>(h) * i);
      v[i] = num <= 0 ? 0 : static_cast<std::int64_t>(num / (2 * n - h));
      sum += v[i];
    }
    for (Rank i = p - 2; i >= 0 && sum > n; --i) {  // only when 2n/h is not an integer
      const std::int64_t cut = std::min(v[i], sum - n);
      v[i] -= cut;
      sum -= cut;
    }
    v[p - 1] = n - sum;
  }
  // COM(i, j) = keys g in [first_j, first_j + v_j) with g mod p == i.
  auto held_below = [&](std::int64_t x, Rank i) { return (x + p - 1 - i) / p; };  // g < x, g = i mod p
  std::vector<Message> msgs;
  std::int64_t first = 0;
  std::vector<std::vector<Message>> rows(static_cast<std::size_t>(p));
  for (Rank j = 0; j < p; ++j) {
    const std::int64_t last = first + v[j];
    if (v[j] > 0)
      for (Rank i = 0; i < p; ++i) {
        const std::int64_t k = held_below(last, i) - held_below(first, i);
        if (k > 0) rows[i].push_back({i, j, static_cast<Bytes>(k) * key_bytes});
      }
    first = last;
  }
  for (auto& r : rows) msgs.insert(msgs.end(), r.begin(), r.end());
  return make_matrix(p, std::move(msgs));
}

CommMatrix gen_sample_sort_skewed(Rank p, std::int64_t keys_per_rank, Bytes record_bytes, double zipf_s,
                                  int oversample, std::uint64_t seed) {
  commfit_assert(p >= 1 && keys_per_rank >= 1 && record_bytes >= 1 && oversample >= 1, "gen_sample_sort_skewed",
                 "bad arguments");
  constexpr std::int64_t kValues = std::int64_t{1} << 20;
  const Zipf zipf(kValues, zipf_s);
  Rng rng(seed);
  // Popularity rank r has key value r * (odd constant) mod 2^20: a bijection that scatters them.
  auto value_of = [](std::int64_t r) { return static_cast<std::uint32_t>((static_cast<std::uint64_t>(r) * 0x9E3779B1u) & (kValues - 1)); };
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(p) * static_cast<std::size_t>(keys_per_rank));
  for (auto& k : keys) k = value_of(zipf.draw(rng));

  std::vector<std::uint32_t> sample;
  sample.reserve(static_cast<std::size_t>(p) * static_cast<std::size_t>(oversample));
  for (Rank i = 0; i < p; ++i)
    for (int s = 0; s < oversample; ++s)
      sample.push_back(keys[static_cast<std::size_t>(i) * keys_per_rank + rng.below(static_cast<std::uint64_t>(keys_per_rank))]);
  std::sort(sample.begin(), sample.end());
  std::vector<std::uint32_t> splitters;
  for (Rank b = 1; b < p; ++b) splitters.push_back(sample[static_cast<std::size_t>(b) * oversample]);

  std::vector<Message> msgs;
  RowCounts row(p);
  for (Rank i = 0; i < p; ++i) {
    for (std::int64_t x = 0; x < keys_per_rank; ++x) {
      const std::uint32_t key = keys[static_cast<std::size_t>(i) * keys_per_rank + x];
      const auto b = static_cast<Rank>(std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin());
      row.add(b, record_bytes);
    }
    row.flush(i, msgs);
  }
  return make_matrix(p, std::move(msgs));
}

CommMatrix gen_moe_dispatch(Rank p, int experts_per_rank, std::int64_t tokens_per_rank, int top_k, double zipf_s,
                            Bytes token_bytes, std::uint64_t seed) {
  const std::int64_t experts = static_cast<std::int64_t>(p) * experts_per_rank;
  commfit_assert(p >= 1 && experts_per_rank >= 1 && tokens_per_rank >= 0 && top_k >= 1 && top_k <= experts && token_bytes >= 1,
                 "gen_moe_dispatch", "bad arguments");
  const Zipf zipf(experts, zipf_s);
  Rng rng(seed);
  std::vector<std::int64_t> expert_of_rank(static_cast<std::size_t>(experts));   // popularity rank -> expert
  std::iota(expert_of_rank.begin(), expert_of_rank.end(), std::int64_t{0});
  rng.shuffle(expert_of_rank.begin(), expert_of_rank.end());

  std::vector<Message> msgs;
  RowCounts row(p);
  std::vector<std::int64_t> chosen;
  std::vector<Rank> dests;
  for (Rank i = 0; i < p; ++i) {
    for (std::int64_t t = 0; t < tokens_per_rank; ++t) {
      chosen.clear();
      while (static_cast<int>(chosen.size()) < top_k) {
        const std::int64_t e = expert_of_rank[zipf.draw(rng)];
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
      }
      dests.clear();
      for (std::int64_t e : chosen) dests.push_back(static_cast<Rank>(e / experts_per_rank));
      std::sort(dests.begin(), dests.end());
      dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
      for (Rank d : dests) row.add(d, token_bytes);
    }
    row.flush(i, msgs);
  }
  return make_matrix(p, std::move(msgs));
}

CommMatrix gen_hot_spots(Rank p, int fan_out, double l, Bytes traffic, std::uint64_t seed) {
  commfit_assert(p >= 2 && fan_out >= 1 && fan_out <= p - 1 && l > 0 && l <= 1, "gen_hot_spots", "bad arguments");
  Rng rng(seed);
  const int hot_count = std::min<int>(fan_out, static_cast<int>(std::ceil(l * fan_out - 1e-9)));
  std::vector<Rank> all(static_cast<std::size_t>(p));
  std::iota(all.begin(), all.end(), Rank{0});
  rng.shuffle(all.begin(), all.end());
  std::vector<Rank> hot(all.begin(), all.begin() + hot_count);
  std::sort(hot.begin(), hot.end());
  std::vector<char> is_hot(static_cast<std::size_t>(p), 0);
  for (Rank h : hot) is_hot[h] = 1;

  const auto hot_bytes = static_cast<Bytes>(std::llround((1.0 - l) * static_cast<double>(traffic)));
  std::vector<Message> msgs;
  RowCounts row(p);
  std::vector<Rank> hot_targets, cold_targets;
  std::vector<char> taken(static_cast<std::size_t>(p), 0);
  for (Rank i = 0; i < p; ++i) {
    hot_targets.clear();
    for (Rank h : hot)
      if (h != i) hot_targets.push_back(h);
    // Cold targets: distinct ranks, neither i nor hot, drawn by rejection (at most p - 1 - hot).
    const std::int64_t available = p - 1 - static_cast<std::int64_t>(hot.size()) + (is_hot[i] ? 1 : 0);
    const std::int64_t want = std::min<std::int64_t>(fan_out - static_cast<std::int64_t>(hot_targets.size()), available);
    cold_targets.clear();
    if (2 * want <= available) {
      while (static_cast<std::int64_t>(cold_targets.size()) < want) {
        const auto c = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(p)));
        if (c == i || is_hot[c] || taken[c]) continue;
        taken[c] = 1;
        cold_targets.push_back(c);
      }
      for (Rank c : cold_targets) taken[c] = 0;
    } else {
      std::vector<Rank> pool;
      for (Rank c = 0; c < p; ++c)
        if (c != i && !is_hot[c]) pool.push_back(c);
      rng.shuffle(pool.begin(), pool.end());
      cold_targets.assign(pool.begin(), pool.begin() + want);
    }
    std::sort(cold_targets.begin(), cold_targets.end());
    if (hot_targets.empty()) spread(traffic, cold_targets, row);
    else if (cold_targets.empty()) spread(traffic, hot_targets, row);
    else {
      spread(hot_bytes, hot_targets, row);
      spread(traffic - hot_bytes, cold_targets, row);
    }
    row.flush(i, msgs);
  }
  return make_matrix(p, std::move(msgs));
}

TransportKlSplit transport_kl_split(int k, double l, Bytes t) {
  TransportKlSplit s;
  if (k <= 1) {
    s.heavy_layers = k;
    s.heavy_bytes = t;
  } else {
    s.heavy_layers = static_cast<int>(std::clamp<long long>(std::llround(l * k), 1, k - 1));
    s.heavy_bytes = static_cast<Bytes>(std::llround((1.0 - l) * static_cast<double>(t)));
  }
  const Bytes light_bytes = t - s.heavy_bytes;
  s.every_message_nonempty = s.heavy_bytes >= static_cast<Bytes>(s.heavy_layers) &&
                             light_bytes >= static_cast<Bytes>(k - s.heavy_layers);
  return s;
}

CommMatrix gen_transport_kl(Rank p, int k, double l, Bytes t, std::uint64_t seed) {
  commfit_assert(p >= 2 && k >= 1 && k <= p - 1 && l > 0 && l < 1 && t <= kMaxMessageBytes, "gen_transport_kl",
                 "bad arguments");
  const TransportKlSplit split = transport_kl_split(k, l, t);
  Rng rng(seed);
  std::vector<Rank> label(static_cast<std::size_t>(p)), rank_of(static_cast<std::size_t>(p));
  std::iota(label.begin(), label.end(), Rank{0});
  rng.shuffle(label.begin(), label.end());   // pi
  for (Rank i = 0; i < p; ++i) rank_of[label[i]] = i;
  // k distinct shifts from 1 .. p-1: a partial Fisher-Yates shuffle.
  std::vector<Rank> shifts(static_cast<std::size_t>(p - 1));
  std::iota(shifts.begin(), shifts.end(), Rank{1});
  for (int a = 0; a < k; ++a)
    std::swap(shifts[a], shifts[a + rng.below(static_cast<std::uint64_t>(p - 1 - a))]);
  // Layer a's message size: heavy layers share H, light layers t - H.
  auto layer_bytes = [&](int a) {
    const bool heavy = a < split.heavy_layers;
    const Bytes share = heavy ? split.heavy_bytes : t - split.heavy_bytes;
    const auto layers = static_cast<Bytes>(heavy ? split.heavy_layers : k - split.heavy_layers);
    const auto index = static_cast<Bytes>(heavy ? a : a - split.heavy_layers);
    return share / layers + (index < share % layers ? 1 : 0);
  };
  std::vector<Message> msgs;
  msgs.reserve(static_cast<std::size_t>(p) * static_cast<std::size_t>(k));
  for (Rank i = 0; i < p; ++i)
    for (int a = 0; a < k; ++a)
      msgs.push_back({i, rank_of[(label[i] + shifts[a]) % p], layer_bytes(a)});
  return make_matrix(p, std::move(msgs));
}

}  // namespace commfit
