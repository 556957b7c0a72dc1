#include "passes/two_stage_split.h"

#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <numeric>

namespace commfit {
namespace {

constexpr TwoStageVariantEntry kVariants[] = {
    {"transport", TwoStageVariant::transport, "Transportation Fig. 8: remainders round-robin inside each source"},
    {"transport-scan", TwoStageVariant::transport_scan, "Transportation Fig. 9: round-robin continued across sources (prefix scan)"},
    {"transport-alt", TwoStageVariant::transport_alt, "Transportation §8 Fig. 11-12: round-robin across sources per destination"},
    {"bhj", TwoStageVariant::bhj, "Bader-Helman-JaJa §3: byte x of i's data for j to bin (i + j + x) mod p"},
    {"random", TwoStageVariant::random, "Transportation Appendix A: transport, bundles shuffled within size groups (seeded)"},
};

// Appends the non-empty parts of message src -> dst of `a` bytes, in offset order. The parts are
// cut in intermediary order k = 0 .. p-1; part k has floor(a / p) bytes plus one when k is among
// the a mod p intermediaries from `start` on (cyclically). `mid_of` relabels k (random variant).
template <class MidOf>
void cut_message(Rank src, Rank dst, Bytes a, Rank p, Rank start, MidOf&& mid_of, std::vector<StagePart>& out) {
  const auto up = static_cast<Bytes>(p);
  const Bytes base = a / up;
  const Bytes extra = a % up;
  Bytes offset = 0;
  auto push = [&](Rank k, Bytes bytes) {
    out.push_back({src, mid_of(k), dst, offset, bytes});
    offset += bytes;
  };
  if (base > 0) {
    for (Rank k = 0; k < p; ++k) {
      const Bytes dist = (static_cast<Bytes>(k) + up - static_cast<Bytes>(start)) % up;
      push(k, base + (dist < extra ? 1 : 0));
    }
    return;
  }
  // Fewer bytes than intermediaries: only the run start .. start + extra - 1 (mod p) gets a byte.
  const Bytes end = static_cast<Bytes>(start) + extra;
  if (end > up)
    for (Bytes k = 0; k < end - up; ++k) push(static_cast<Rank>(k), 1);
  for (Bytes k = static_cast<Bytes>(start); k < std::min(end, up); ++k) push(static_cast<Rank>(k), 1);
}

Rank add_mod(Rank a, Bytes b, Rank p) {
  return static_cast<Rank>((static_cast<Bytes>(a) + b % static_cast<Bytes>(p)) % static_cast<Bytes>(p));
}

}  // namespace

std::span<const TwoStageVariantEntry> two_stage_variants() { return kVariants; }

std::optional<TwoStageVariant> parse_two_stage_variant(const std::string& name) {
  for (const TwoStageVariantEntry& e : kVariants)
    if (name == e.name) return e.variant;
  return std::nullopt;
}

const char* to_string(TwoStageVariant v) {
  for (const TwoStageVariantEntry& e : kVariants)
    if (e.variant == v) return e.name;
  return "?";
}

std::uint64_t two_stage_part_count(const CommMatrix& m) {
  std::uint64_t n = 0;
  m.for_each([&](Rank i, Rank j, Bytes a) {
    if (i != j) n += std::min<Bytes>(a, static_cast<Bytes>(m.ranks));
  });
  return n;
}

TwoStageSplit two_stage_split(const CommMatrix& m, TwoStageVariant v, std::uint64_t seed) {
  const Rank p = m.ranks;
  TwoStageSplit out;
  out.ranks = p;
  out.parts.reserve(two_stage_part_count(m));
  if (p <= 1) return out;
  const auto identity = [](Rank k) { return k; };

  switch (v) {
    case TwoStageVariant::transport:
    case TwoStageVariant::transport_scan: {
      // Fig. 8: one round-robin pointer per source, advanced by each message's a mod p.
      // Fig. 9: the pointer of source i starts at (r_0 + ... + r_{i-1}) mod p.
      Rank next_start = 0;   // where source i+1 starts (scan variant)
      Rank ptr = 0;
      Rank row = -1;
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i != row) {
          ptr = v == TwoStageVariant::transport_scan ? next_start : 0;
          row = i;
        }
        if (i == j) return;
        cut_message(i, j, a, p, ptr, identity, out.parts);
        ptr = add_mod(ptr, a, p);
        next_start = ptr;
      });
      break;
    }
    case TwoStageVariant::transport_alt: {
      // Fig. 12: for destination j, source i starts at the scan (sum over i' < i of a_i'j) mod p;
      // the additional step offsets destination j by (c_0 + ... + c_{j-1}) mod p, so that all
      // remainders form one round-robin over (destination, source).
      std::vector<Rank> col_ptr(static_cast<std::size_t>(p), 0);
      std::vector<Bytes> col_mod(static_cast<std::size_t>(p), 0);
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i != j) col_mod[j] = (col_mod[j] + a) % static_cast<Bytes>(p);
      });
      Rank acc = 0;
      for (Rank j = 0; j < p; ++j) {
        col_ptr[j] = acc;
        acc = add_mod(acc, col_mod[j], p);
      }
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i == j) return;
        cut_message(i, j, a, p, col_ptr[j], identity, out.parts);
        col_ptr[j] = add_mod(col_ptr[j], a, p);
      });
      break;
    }
    case TwoStageVariant::bhj: {
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i == j) return;
        const Rank start = static_cast<Rank>((static_cast<std::int64_t>(i) + j) % p);
        cut_message(i, j, a, p, start, identity, out.parts);
      });
      break;
    }
    case TwoStageVariant::random: {
      // Transport's deal gives intermediary k of source i the bundle floor(r_i / p) + [k < r_i mod p]
      // (remainders dealt from k = 0): the ceil group is k < r_i mod p, the floor group the rest.
      // A seeded permutation inside each group keeps every bundle size, so the stage-1 bound holds.
      Rng rng(seed);
      std::vector<Rank> perm(static_cast<std::size_t>(p));
      std::vector<Bytes> row_mod(static_cast<std::size_t>(p), 0);
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i != j) row_mod[i] = (row_mod[i] + a) % static_cast<Bytes>(p);
      });
      Rank ptr = 0;
      Rank row = -1;
      m.for_each([&](Rank i, Rank j, Bytes a) {
        if (i == j) return;
        if (i != row) {
          row = i;
          ptr = 0;
          std::iota(perm.begin(), perm.end(), Rank{0});
          const auto split = perm.begin() + static_cast<std::ptrdiff_t>(row_mod[i]);
          rng.shuffle(perm.begin(), split);
          rng.shuffle(split, perm.end());
        }
        cut_message(i, j, a, p, ptr, [&](Rank k) { return perm[k]; }, out.parts);
        ptr = add_mod(ptr, a, p);
      });
      break;
    }
  }
  commfit_assert(out.parts.size() == two_stage_part_count(m), "two-stage-split", "part count differs from two_stage_part_count");
  return out;
}

}  // namespace commfit
