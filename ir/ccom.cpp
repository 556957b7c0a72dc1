#include "ir/ccom.h"

#include <algorithm>

namespace commfit {

std::string check_ccom(const CompressedMatrix& c, const CommMatrix& m) {
  if (c.ranks != m.ranks) return "rank count differs from the matrix";
  if (c.row_begin.size() != static_cast<std::size_t>(m.ranks) + 1 ||
      c.prt.size() != static_cast<std::size_t>(m.ranks))
    return "row table has the wrong size";
  std::vector<Rank> want, have;
  for (Rank i = 0; i < m.ranks; ++i) {
    want.clear();
    for (SparseCom::InnerIterator it(m.com, i); it; ++it)
      if (it.col() != i) want.push_back(static_cast<Rank>(it.col()));
    const std::int64_t n = c.row_size(i);
    if (c.prt[i] < 0 || c.prt[i] > n) return "row " + std::to_string(i) + ": fill pointer out of range";
    have.assign(c.row(i), c.row(i) + c.prt[i]);
    if (std::any_of(c.row(i) + c.prt[i], c.row(i) + n, [](Rank k) { return k != -1; }))
      return "row " + std::to_string(i) + ": active entry past the fill pointer";
    std::sort(have.begin(), have.end());
    if (have != want) return "row " + std::to_string(i) + ": destinations differ from the matrix";
  }
  return {};
}

}  // namespace commfit
