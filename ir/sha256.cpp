#include "ir/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define COMMFIT_SHA_NI 1
#endif

namespace commfit {

namespace {

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
// 64 primes.
constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<std::uint32_t, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#ifdef COMMFIT_SHA_NI
// The same compression with the x86 SHA extensions (Intel, "New Instructions Supporting the
// Secure Hash Algorithm on Intel Architecture Processors", 2013), where the processor has them:
// the fingerprint of a 10^6-message matrix hashes 20 MB of text, in every lower and verify.
// The state is kept as (A, B, E, F) and (C, D, G, H); four rounds per step, two per sha256rnds2.
bool have_sha_ni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 29)) != 0;   // CPUID.(EAX=7, ECX=0):EBX.SHA[bit 29]
}

__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(std::uint32_t* state, const std::uint8_t* block) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);   // C D A B
  __m128i state1 = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);   // E F G H
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);    // A B E F
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);         // C D G H
  const __m128i abef = state0, cdgh = state1;
  __m128i w[4];   // w[i % 4]: the schedule words 4i .. 4i + 3
  for (int i = 0; i < 16; ++i) {
    if (i < 4) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)), byte_swap);
    } else {   // §6.2.2 step 1: W_t = σ1(W_t-2) + W_t-7 + σ0(W_t-15) + W_t-16, four at a time
      __m128i x = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
      x = _mm_add_epi32(x, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
      w[i % 4] = _mm_sha256msg2_epu32(x, w[(i + 3) % 4]);
    }
    __m128i k = _mm_add_epi32(w[i % 4], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * i)));
    state1 = _mm_sha256rnds2_epu32(state1, state0, k);
    k = _mm_shuffle_epi32(k, 0x0E);
    state0 = _mm_sha256rnds2_epu32(state0, state1, k);
  }
  state0 = _mm_add_epi32(state0, abef);
  state1 = _mm_add_epi32(state1, cdgh);
  tmp = _mm_shuffle_epi32(state0, 0x1B);       // F E B A
  state1 = _mm_shuffle_epi32(state1, 0xB1);    // D C H G
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);   // D C B A
  state1 = _mm_alignr_epi8(state1, tmp, 8);      // H G F E
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), state1);
}

const bool kShaNi = have_sha_ni();
#endif
bool portable_only = false;   // sha256_portable_only (tests)

}  // namespace

bool sha256_portable_only(bool on) {
  portable_only = on;
#ifdef COMMFIT_SHA_NI
  return kShaNi;
#else
  return false;
#endif
}

Sha256::Sha256() : state_(kInitial) {}

// §6.2.2: message schedule W, then 64 rounds over the working variables a..h.
void Sha256::compress(const std::uint8_t* block) {
#ifdef COMMFIT_SHA_NI
  if (kShaNi && !portable_only) return compress_sha_ni(state_.data(), block);
#endif
  std::uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = std::uint32_t{block[4 * t]} << 24 | std::uint32_t{block[4 * t + 1]} << 16 |
           std::uint32_t{block[4 * t + 2]} << 8 | std::uint32_t{block[4 * t + 3]};
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  std::uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t n = bytes.size();
  length_ += n;
  if (buffered_ > 0) {  // top up the partial block first
    const std::size_t take = std::min(n, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    n -= take;
    if (buffered_ < buffer_.size()) return;
    compress(buffer_.data());
    buffered_ = 0;
  }
  for (; n >= 64; p += 64, n -= 64) compress(p);
  std::memcpy(buffer_.data(), p, n);
  buffered_ = n;
}

// §5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the length in bits as 64-bit big-endian.
std::array<std::uint8_t, 32> Sha256::digest() {
  const std::uint64_t bits = length_ * 8;
  static const std::uint8_t kPad[64] = {0x80};
  const std::size_t pad = buffered_ < 56 ? 56 - buffered_ : 120 - buffered_;
  update(std::string_view(reinterpret_cast<const char*>(kPad), pad));
  char len[8];
  for (int k = 0; k < 8; ++k) len[k] = static_cast<char>(bits >> (56 - 8 * k));
  update(std::string_view(len, 8));
  std::array<std::uint8_t, 32> out;
  for (int k = 0; k < 8; ++k)
    for (int b = 0; b < 4; ++b) out[4 * k + b] = static_cast<std::uint8_t>(state_[k] >> (24 - 8 * b));
  return out;
}

std::string to_hex(const std::array<std::uint8_t, 32>& digest) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint8_t byte : digest) {
    out.push_back(hex[byte >> 4]);
    out.push_back(hex[byte & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return to_hex(h.digest());
}

}  // namespace commfit
