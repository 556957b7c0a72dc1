// Seeded generators of skewed communication patterns: one rank's (or a few ranks') traffic
// dominates, the case the two-stage algorithms (Transportation §7-8, Bader-Helman-JaJa §3) are
// for. Each names its source. Same arguments, same matrix (all randomness is commfit::Rng).
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>

namespace commfit {

// Bader-Helman-JaJa §3.1, eq. (7): n = p * keys_per_rank keys, held cyclically (key g on rank
// g mod p); the first v_0 keys are labelled for rank 0, the next v_1 for rank 1, and so on, with
// v_i = floor(h (1 - h i / (2n - h))) for i < 2n/h, i != p-1, 0 beyond, and v_{p-1} the rest
// (h = h_factor * n / p; h_factor = 1 is the paper's transpose case, v_i = n / p). Rank 0 receives
// h keys; for h_factor = 8 about 3p/4 ranks receive nothing. Each key is `key_bytes` bytes (the
// paper's elements are two integers: 8). Deterministic. Where 2n/h is not an integer the
// floors can sum past n: the excess is taken off the highest labels, so every rank still holds
// exactly keys_per_rank keys. Needs p >= 1, keys_per_rank >= 1, h_factor >= 1.
CommMatrix gen_bader_h_relation(Rank p, std::int64_t keys_per_rank, int h_factor, Bytes key_bytes);

// The last step of a sample sort (Transportation §3 names it, BHJ §4) on skewed keys: every rank
// holds keys_per_rank records of record_bytes, keys drawn from a Zipf law of exponent zipf_s over
// 2^20 distinct values (value identities scrambled, so popular values lie anywhere in the key
// range). Splitters: p - 1 evenly spaced picks from a sample of `oversample` random keys per rank.
// Records of a key equal to splitters go to the bucket after the last equal splitter, so a popular
// key fills one bucket: the hot receiver of a skewed sample sort. COM(i, b) = record_bytes *
// (records of rank i in bucket b); i == b entries are local copies.
CommMatrix gen_sample_sort_skewed(Rank p, std::int64_t keys_per_rank, Bytes record_bytes, double zipf_s,
                                  int oversample, std::uint64_t seed);

// Mixture-of-experts token dispatch (top-k routing as in GShard / Switch Transformer): p ranks
// with experts_per_rank experts each; expert popularity is Zipf with exponent zipf_s, the
// popularity order a seeded permutation of the experts. Each of a rank's tokens_per_rank tokens
// picks top_k distinct experts (Zipf draws, repeats re-drawn) and is sent once to every rank
// holding one of them (token_bytes each). Tokens for the rank's own experts are local copies.
// Needs top_k <= p * experts_per_rank.
CommMatrix gen_moe_dispatch(Rank p, int experts_per_rank, std::int64_t tokens_per_rank, int top_k, double zipf_s,
                            Bytes token_bytes, std::uint64_t seed);

// Hot receivers at scale, after the generator of Transportation §9: every rank sends `traffic`
// bytes to fan_out other ranks; the fraction (1 - l) of it goes to the ceil(l * fan_out) hot
// ranks (the same seeded set for every sender, evenly), the fraction l to
// fan_out - ceil(l * fan_out) other ranks drawn per sender (evenly). l = 1/32, fan_out = 32 is the
// paper's best case for the two-stage algorithm ("1 out of 32 processors received 31/32 of the
// traffic"). A hot rank sends its hot share to the other hot ranks; when it is the only hot rank,
// all its traffic goes to fan_out cold ranks. Every rank sends exactly `traffic` bytes.
// Needs 1 <= fan_out <= p - 1, 0 < l <= 1.
CommMatrix gen_hot_spots(Rank p, int fan_out, double l, Bytes traffic, std::uint64_t seed);

// The (k, l) generator of Transportation §9 ("Performance Results"): every rank sends to k other
// ranks and "the sum of the messages being sent out and received at each processor was fixed at
// t"; "of the k processors receiving messages from a single processor, the fraction l t of the
// traffic reached (1 - l) k processors, while the remaining (1 - l) t traffic reached l k
// processors". Here the pattern is the union of k permutations without fixed points (ranks
// relabelled by a seeded permutation pi, layer a sends i -> pi^-1(pi(i) + s_a mod p) for k
// distinct seeded shifts s_a in 1 .. p-1), so every rank also receives exactly one message per
// layer. The first nh = round(l k) layers (clamped to 1 .. k-1 when k >= 2) are the heavy ones:
// together they carry H = round((1 - l) t) bytes of every row, the other k - nh layers carry
// t - H, each spread evenly over its layers (layer a gets its share / layers, the first
// share mod layers get one byte more). So every row sum and every column sum is exactly t and
// every fan-in and fan-out exactly k. k = 1 sends all t to one rank. The paper's best case for
// the two-stage algorithm is k = 32, l = 1/32, its worst k = 2, l = 1/2.
// Needs 1 <= k <= p - 1, 0 < l < 1, and t large enough that no message is empty
// (transport_kl_split says how the bytes are divided).
struct TransportKlSplit {
  int heavy_layers = 0;    // nh
  Bytes heavy_bytes = 0;   // H
  bool every_message_nonempty = false;
};
TransportKlSplit transport_kl_split(int k, double l, Bytes t);
CommMatrix gen_transport_kl(Rank p, int k, double l, Bytes t, std::uint64_t seed);

}  // namespace commfit
