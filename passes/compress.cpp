#include "passes/compress.h"

#include "ir/error.h"
#include "ir/random.h"

namespace commfit {

CompressedMatrix compress(const CommMatrix& m, std::uint64_t seed) {
  CompressedMatrix c;
  c.ranks = m.ranks;
  c.row_begin.assign(static_cast<std::size_t>(m.ranks) + 1, 0);
  c.prt.assign(static_cast<std::size_t>(m.ranks), 0);
  // Row sizes: network destinations only (src == dst is a local copy, never scheduled).
  for (Rank i = 0; i < m.ranks; ++i) {
    std::int64_t size = 0;
    for (SparseCom::InnerIterator it(m.com, i); it; ++it) size += it.col() != i;
    c.prt[i] = size;
    c.row_begin[i + 1] = c.row_begin[i] + size;
  }
  c.dest.resize(static_cast<std::size_t>(c.row_begin.back()));
  // Rows are shuffled in rank order from one stream, so the result depends on the seed only.
  Rng rng(seed);
  for (Rank i = 0; i < m.ranks; ++i) {
    Rank* row = c.row(i);
    std::int64_t k = 0;
    for (SparseCom::InnerIterator it(m.com, i); it; ++it)
      if (it.col() != i) row[k++] = static_cast<Rank>(it.col());
    commfit_assert(k == c.prt[i], "compress", "row size changed");
    rng.shuffle(row, row + k);
  }
  return c;
}

}  // namespace commfit
