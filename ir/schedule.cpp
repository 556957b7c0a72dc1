#include "ir/schedule.h"

#include <algorithm>
#include <tuple>

namespace commfit {

void canonicalize(Schedule& s) {
  std::sort(s.transfers.begin(), s.transfers.end(), [](const Transfer& a, const Transfer& b) {
    return std::tie(a.phase, a.from, a.to, a.piece) < std::tie(b.phase, b.from, b.to, b.piece);
  });
  std::sort(s.copies.begin(), s.copies.end());
}

std::vector<Piece> local_copies(const CommMatrix& m) {
  std::vector<Piece> out;
  for (Rank i = 0; i < m.ranks; ++i)
    if (Bytes b = m.at(i, i)) out.push_back({i, i, 0, b});
  return out;
}

std::vector<Bytes> phase_max_piece(const Schedule& s) {
  std::vector<Bytes> out(s.phases, 0);
  for (const Transfer& t : s.transfers) out[t.phase] = std::max(out[t.phase], t.piece.bytes);
  return out;
}

void drop_empty_phases(Schedule& s) {
  std::vector<Phase> renumber(s.phases, 0);
  std::vector<char> used(s.phases, 0);
  for (const Transfer& t : s.transfers) used[t.phase] = 1;
  Phase next = 0;
  for (Phase k = 0; k < s.phases; ++k) renumber[k] = used[k] ? next++ : 0;
  for (Transfer& t : s.transfers) t.phase = renumber[t.phase];
  s.phases = next;
}

}  // namespace commfit
