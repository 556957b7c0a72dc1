// Internals of decompose_optimal and quantised_split (not a pass): the colour tables of a
// bipartite (multi)graph edge colouring and the alternating-path (Kempe) step of König's theorem.
// Vertices are numbered senders 0 .. p-1, receivers p .. 2p-1. A table maps (vertex, colour) to
// the neighbour joined to it by an edge of that colour (kNone when the colour is free there).
#pragma once

#include "ir/error.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif
#include <vector>

namespace commfit::detail {

using Vertex = std::int32_t;
using Colour = std::int32_t;
inline constexpr Vertex kNone = -1;

// A table entry. Tables of Vertex hold the neighbour alone. Tables of Linked also carry the
// caller's id of the edge, for multigraphs whose parallel edges must keep their identity through
// flips (the pieces of one message differ in offset and size).
struct Linked {
  Vertex nb = kNone;
  std::int32_t edge = -1;
};
inline Vertex neighbour(Vertex w) { return w; }
inline Vertex neighbour(const Linked& e) { return e.nb; }
template <class Entry>
Entry make_entry(Vertex nb, std::int32_t edge);
template <>
inline Vertex make_entry<Vertex>(Vertex nb, std::int32_t) { return nb; }
template <>
inline Linked make_entry<Linked>(Vertex nb, std::int32_t edge) { return {nb, edge}; }

// Per vertex x, a bitmap of the colours [0, width(x)) in use at x, plus a hint (no free colour
// in the words before it). The dense tables track every colour (width h: 2ph bits, 1/32 of the
// table). The hashed tables track [0, deg(x)): while x still has an uncoloured edge at most
// deg(x) - 1 colours are in use at x, so its smallest free colour is < deg(x); 2m bits in all.
class FreeColours {
 public:
  explicit FreeColours(const std::vector<std::int32_t>& width)
      : width_(width), begin_(width.size() + 1, 0), hint_(width.size(), 0) {
    for (std::size_t x = 0; x < width.size(); ++x)
      begin_[x + 1] = begin_[x] + (width[x] + 63) / 64;
    words_.assign(static_cast<std::size_t>(begin_.back()), 0);
    // Bits past width(x) in the last word are marked used, so they never look free.
    for (std::size_t x = 0; x < width.size(); ++x)
      if (width[x] % 64) words_[begin_[x + 1] - 1] = ~std::uint64_t{0} << (width[x] % 64);
  }

  // True when c < width(x): then is_free is exact; otherwise only the table knows.
  bool tracks(Vertex x, Colour c) const { return c < width_[x]; }
  bool is_free(Vertex x, Colour c) const {
    return !((words_[begin_[x] + c / 64] >> (c % 64)) & 1);
  }

  void mark(Vertex x, Colour c, bool used) {
    if (!tracks(x, c)) return;
    const std::int64_t w = c / 64;
    std::uint64_t& word = words_[begin_[x] + w];
    const std::uint64_t bit = std::uint64_t{1} << (c % 64);
    if (used) {
      word |= bit;
    } else {
      word &= ~bit;
      if (w < hint_[x]) hint_[x] = static_cast<std::int32_t>(w);
    }
  }

  // The (up to) k smallest colours free at x among those it tracks, into out; returns how many.
  int free_colours(Vertex x, Colour* out, int k) {
    const std::int64_t n = words(x);
    const std::uint64_t* w = words_.data() + begin_[x];
    int found = 0;
    for (std::int64_t i = hint_[x]; i < n && found < k; ++i) {
      if (found == 0 && w[i] != ~std::uint64_t{0}) hint_[x] = static_cast<std::int32_t>(i);
      for (std::uint64_t free = ~w[i]; free != 0 && found < k; free &= free - 1)
        out[found++] = static_cast<Colour>(i * 64 + std::countr_zero(free));
    }
    commfit_assert(found > 0, "edge_colouring", "no free colour within the tracked range");
    return found;
  }

  // Smallest colour free at both x and y among the colours both track, or kNone.
  Colour first_common_free(Vertex x, Vertex y) const {
    const std::int64_t n = std::min(words(x), words(y));
    const std::uint64_t* wx = words_.data() + begin_[x];
    const std::uint64_t* wy = words_.data() + begin_[y];
    for (std::int64_t k = std::max(hint_[x], hint_[y]); k < n; ++k) {
      const std::uint64_t used = wx[k] | wy[k];
      if (used != ~std::uint64_t{0}) return static_cast<Colour>(k * 64 + std::countr_one(used));
    }
    return kNone;
  }

 private:
  std::int64_t words(Vertex x) const { return begin_[x + 1] - begin_[x]; }
  std::vector<std::int32_t> width_;
  std::vector<std::int64_t> begin_;    // word offset of each vertex's bitmap
  std::vector<std::uint64_t> words_;
  std::vector<std::int32_t> hint_;
};

// Dense table, colour-major: one row of 2p entries per colour. Used when 2p * h is O(m). An
// a/b-alternating path only ever reads rows a and b, so a path walk stays within 2 x 2p
// entries (L2-resident up to p ~ 65536) instead of jumping between random vertex rows. The
// table asks for transparent huge pages where the OS has them (the colouring writes land on
// random rows).
template <class E>
class DenseTableOf {
 public:
  using Entry = E;
  DenseTableOf(std::int64_t vertices, Colour h) : vertices_(static_cast<std::size_t>(vertices)), h_(h) {
    const std::size_t n = static_cast<std::size_t>(vertices) * static_cast<std::size_t>(h);
    constexpr std::size_t kHuge = std::size_t{1} << 21;
    const std::size_t bytes = (n * sizeof(Entry) + kHuge - 1) / kHuge * kHuge;
    t_.reset(static_cast<Entry*>(std::aligned_alloc(kHuge, bytes ? bytes : kHuge)));
    commfit_assert(t_ != nullptr, "edge_colouring", "out of memory for the colour table");
#ifdef MADV_HUGEPAGE
    madvise(t_.get(), bytes, MADV_HUGEPAGE);
#endif
    std::fill_n(t_.get(), n, make_entry<Entry>(kNone, -1));
  }
  Entry get(Vertex x, Colour c) const { return t_[index(x, c)]; }
  void put(Vertex x, Colour c, Entry w) { t_[index(x, c)] = w; }
  // Calls f(colour, entry) for the coloured edges of x, by colour.
  template <class F>
  void for_each(Vertex x, F&& f) const {
    for (Colour c = 0; c < h_; ++c)
      if (const Entry w = get(x, c); neighbour(w) != kNone) f(c, w);
  }

 private:
  struct Free {
    void operator()(Entry* p) const { std::free(p); }
  };
  std::size_t index(Vertex x, Colour c) const {
    return static_cast<std::size_t>(c) * vertices_ + static_cast<std::size_t>(x);
  }
  std::size_t vertices_;
  Colour h_;
  std::unique_ptr<Entry[], Free> t_;
};
using DenseTable = DenseTableOf<Vertex>;

// Compact table: per vertex an open-addressing hash map colour -> neighbour with linear probing,
// capacity the power of two >= 2 deg(x), deletion by backward shift (no tombstones). O(m) memory
// whatever h is (a hot receiver makes h ~ p while most vertices have a handful of edges).
class HashedTable {
 public:
  using Entry = Vertex;
  explicit HashedTable(const std::vector<std::int32_t>& degree)
      : begin_(degree.size() + 1, 0), shift_(degree.size(), 0) {
    for (std::size_t x = 0; x < degree.size(); ++x) {
      const std::uint64_t cap = degree[x] ? std::bit_ceil(2 * static_cast<std::uint64_t>(degree[x])) : 0;
      begin_[x + 1] = begin_[x] + static_cast<std::int64_t>(cap);
      shift_[x] = cap ? static_cast<std::uint8_t>(32 - std::countr_zero(cap)) : 0;
    }
    slots_.assign(static_cast<std::size_t>(begin_.back()), Slot{});
  }

  Vertex get(Vertex x, Colour c) const {
    const Slot* s = slots_.data() + begin_[x];
    const std::uint32_t mask = capacity(x) - 1;
    for (std::uint32_t i = home(x, c);; i = (i + 1) & mask) {
      if (s[i].colour == c) return s[i].nb;
      if (s[i].colour == kNone) return kNone;
    }
  }

  void put(Vertex x, Colour c, Vertex w) {
    Slot* s = slots_.data() + begin_[x];
    const std::uint32_t mask = capacity(x) - 1;
    std::uint32_t i = home(x, c);
    while (s[i].colour != kNone && s[i].colour != c) i = (i + 1) & mask;
    if (w != kNone) {
      s[i] = {c, w};
      return;
    }
    if (s[i].colour == kNone) return;   // already free
    // Backward-shift deletion: pull later entries of the probe run into the hole.
    for (std::uint32_t j = (i + 1) & mask; s[j].colour != kNone; j = (j + 1) & mask) {
      const std::uint32_t k = home(x, s[j].colour);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (!stays) {
        s[i] = s[j];
        i = j;
      }
    }
    s[i] = Slot{};
  }

  // Calls f(colour, neighbour) for the coloured edges of x, in slot order.
  template <class F>
  void for_each(Vertex x, F&& f) const {
    for (std::int64_t k = begin_[x]; k < begin_[x + 1]; ++k)
      if (slots_[k].colour != kNone) f(slots_[k].colour, slots_[k].nb);
  }

 private:
  struct Slot {
    Colour colour = kNone;
    Vertex nb = kNone;
  };
  std::uint32_t capacity(Vertex x) const {
    return static_cast<std::uint32_t>(begin_[x + 1] - begin_[x]);
  }
  std::uint32_t home(Vertex x, Colour c) const {
    return (static_cast<std::uint32_t>(c) * 0x9e3779b1u) >> shift_[x];
  }
  std::vector<std::int64_t> begin_;
  std::vector<std::uint8_t> shift_;
  std::vector<Slot> slots_;
};

// König's colouring step on a table. colour(u, v) gives the uncoloured edge u -> v a colour
// < h without disturbing the properness of the coloured edges, provided u and v have degree
// <= h. The smallest colour free at both ends is taken when the bitmaps show one. Otherwise,
// for a free at u and b free at v (neither free at the other end), the a/b-alternating path
// from v starting with a, and the one from u starting with b, lie in different components and
// neither returns to its start; flipping the first frees a at v, flipping the second frees b
// at u. With the few smallest free colours A at u and B at v, the 2 |A| |B| candidate paths
// are walked in lockstep and the first to end is flipped: O(shortest path) steps, and the
// walks' memory loads are independent, so they overlap (long paths appear on tight, regular
// inputs).
// Walk::textbook flips instead the path from v with a, b the smallest colours free at u and v
// (then a is free at both): the quantised split's plans were made with it, and a different flip
// leaves a different colouring for the edges after it.
// `edge` is the caller's id of the edge, kept in tables of Linked entries.
template <class Table>
class KempeColouring {
 public:
  using Entry = typename Table::Entry;
  static constexpr int kCandidates = 4;   // free colours tried at each end
  enum class Walk { shortest, textbook };

  KempeColouring(Table& table, FreeColours& free, Walk walk = Walk::shortest) : t_(table), free_(free), walk_(walk) {}

  Colour colour(Vertex u, Vertex v, std::int32_t edge = -1) {
    edge_ = edge;
    const Colour c = free_.first_common_free(u, v);
    if (c != kNone) return assign(u, v, c);
    Colour as[kCandidates], bs[kCandidates];
    const int na = free_.free_colours(u, as, kCandidates);
    for (int i = 0; i < na; ++i)
      if (is_free(v, as[i])) return assign(u, v, as[i]);
    const int nb = free_.free_colours(v, bs, kCandidates);
    for (int j = 0; j < nb; ++j)
      if (is_free(u, bs[j])) return assign(u, v, bs[j]);
    if (walk_ == Walk::textbook) {
      flip(v, as[0], as[0], bs[0]);
      return assign(u, v, as[0]);
    }
    struct Walk {
      Vertex start;
      Colour a, b;     // the colour pair; the walk leaves start with a (start = v) or b (start = u)
      Vertex x;        // current end of the walk
      Colour next;     // colour of the edge to follow from x
    };
    Walk walks[2 * kCandidates * kCandidates];
    int n = 0;
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j) {
        walks[n++] = {v, as[i], bs[j], v, as[i]};
        walks[n++] = {u, as[i], bs[j], u, bs[j]};
      }
    for (;;) {
      for (int k = 0; k < n; ++k) {
        Walk& w = walks[k];
        const Vertex nx = neighbour(t_.get(w.x, w.next));
        if (nx == kNone) {
          const bool from_v = w.start == v;
          flip(w.start, from_v ? w.a : w.b, w.a, w.b);
          return assign(u, v, from_v ? w.a : w.b);
        }
        w.x = nx;
        w.next = w.next == w.a ? w.b : w.a;
      }
    }
  }

 private:
  bool is_free(Vertex x, Colour c) const {
    return free_.tracks(x, c) ? free_.is_free(x, c) : neighbour(t_.get(x, c)) == kNone;
  }
  Colour assign(Vertex u, Vertex v, Colour c) {
    set(u, c, make_entry<Entry>(v, edge_));
    set(v, c, make_entry<Entry>(u, edge_));
    return c;
  }
  void set(Vertex x, Colour c, Entry w) {
    t_.put(x, c, w);
    free_.mark(x, c, neighbour(w) != kNone);
  }
  // Swaps colours a and b on the alternating path that leaves `start` with colour `first`.
  void flip(Vertex start, Colour first, Colour a, Colour b) {
    Vertex x = start;
    Colour c = first;
    for (;;) {
      const Vertex next = neighbour(t_.get(x, c));
      const Entry wa = t_.get(x, a), wb = t_.get(x, b);
      // Free before taking: x never holds more edges than its degree, not even for a moment
      // (a hashed table sized for deg(x) could otherwise be full).
      if (neighbour(wa) == kNone) {
        set(x, b, make_entry<Entry>(kNone, -1));
        set(x, a, wb);
      } else {
        set(x, a, wb);
        set(x, b, wa);
      }
      if (next == kNone) return;
      x = next;
      c = c == a ? b : a;
    }
  }

  Table& t_;
  FreeColours& free_;
  Walk walk_;
  std::int32_t edge_ = -1;   // of the edge being coloured
};

}  // namespace commfit::detail
