// Seeded randomness for every pass. std::uniform_int_distribution differs between standard
// libraries, so plans would not be byte-identical across builds; this generator and its
// bounded draw are fully specified here (splitmix64 seeding, xoshiro256** stream,
// Lemire's multiply-shift with rejection), and the one 64-bit mixer every hash here is built on.
#pragma once

#include <cstdint>
#include <utility>

namespace commfit {

// splitmix64's finaliser: a bijection of 64-bit words in which each input bit flips about half the
// output bits. Hashes of counts and plans fold their words through it.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// splitmix64 of one value (the golden-ratio step, then mix64): a key's stateless hash.
constexpr std::uint64_t splitmix64(std::uint64_t x) { return mix64(x + 0x9e3779b97f4a7c15ULL); }

// A running hash `h` with the word `v` folded in (boost's combine, then mix64): the plan hash and
// the executor's per-peer step hashes.
constexpr std::uint64_t hash_fold(std::uint64_t h, std::uint64_t v) { return mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))); }

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0.
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Fisher-Yates shuffle of [first, last).
  template <class It>
  void shuffle(It first, It last) {
    const auto n = static_cast<std::uint64_t>(last - first);
    for (std::uint64_t i = n; i > 1; --i) {
      using std::swap;
      swap(first[i - 1], first[below(i)]);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) {   // the seeding sequence: splitmix64 of x, x + step, ...
    const std::uint64_t z = splitmix64(x);
    x += 0x9e3779b97f4a7c15ULL;
    return z;
  }
  std::uint64_t s_[4];
};

}  // namespace commfit
