#include "workloads/stencil.h"

#include "ir/error.h"

#include <array>
#include <map>

namespace commfit {

CommMatrix gen_stencil(const std::vector<Rank>& grid, int points, bool periodic, std::int64_t cells_per_side,
                       Bytes value_bytes) {
  const int d = static_cast<int>(grid.size());
  commfit_assert(d == 2 || d == 3, "gen_stencil", "grid must have 2 or 3 axes");
  commfit_assert(d == 2 ? points == 5 || points == 9 : points == 7 || points == 27, "gen_stencil",
                 "points must be 5 or 9 (2D), 7 or 27 (3D)");
  commfit_assert(cells_per_side >= 1 && value_bytes >= 1, "gen_stencil", "bad sizes");
  std::array<Rank, 3> dim{1, 1, 1};
  std::int64_t p = 1;
  for (int a = 0; a < d; ++a) {
    commfit_assert(grid[a] >= 1, "gen_stencil", "every axis needs at least one rank");
    dim[a] = grid[a];
    p *= grid[a];
  }
  commfit_assert(p <= std::int64_t{1} << 24, "gen_stencil", "too many ranks");
  const bool full = points == 9 || points == 27;
  // Bytes of a neighbour at an offset touching `axes` axes: cells_per_side^(d - axes) cells.
  auto piece = [&](int axes) {
    Bytes cells = 1;
    for (int k = 0; k < d - axes; ++k) cells *= static_cast<Bytes>(cells_per_side);
    return cells * value_bytes;
  };
  std::vector<Message> msgs;
  std::map<Rank, Bytes> row;   // destination -> bytes of one sender (offsets can coincide when periodic)
  for (Rank z = 0; z < dim[2]; ++z)
    for (Rank y = 0; y < dim[1]; ++y)
      for (Rank x = 0; x < dim[0]; ++x) {
        const Rank self = x + dim[0] * (y + dim[1] * z);
        row.clear();
        for (int oz = (d == 3 ? -1 : 0); oz <= (d == 3 ? 1 : 0); ++oz)
          for (int oy = -1; oy <= 1; ++oy)
            for (int ox = -1; ox <= 1; ++ox) {
              const int axes = (ox != 0) + (oy != 0) + (oz != 0);
              if (axes == 0 || (!full && axes > 1)) continue;
              std::array<Rank, 3> c{x + ox, y + oy, z + oz};
              bool inside = true;
              for (int a = 0; a < 3; ++a) {
                if (c[a] >= 0 && c[a] < dim[a]) continue;
                if (!periodic) inside = false;
                c[a] = (c[a] + dim[a]) % dim[a];
              }
              if (!inside) continue;
              row[c[0] + dim[0] * (c[1] + dim[1] * c[2])] += piece(axes);
            }
        for (const auto& [dst, b] : row) msgs.push_back({self, dst, b});
      }
  return make_matrix(static_cast<Rank>(p), std::move(msgs));
}

}  // namespace commfit
