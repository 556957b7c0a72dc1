// Halo exchange of a structured-grid stencil on a process grid: the regular pattern of the
// finite-difference codes that irregular exchanges are usually compared with (the 2D example of
// examples/stencil2d_16.json, generalised). Deterministic, no randomness.
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>
#include <vector>

namespace commfit {

// grid = {px, py} or {px, py, pz} ranks (rank = x + px * (y + py * z)); points = 5 or 9 in 2D,
// 7 or 27 in 3D. Each rank owns a block of cells_per_side^d cells and sends, with a halo one cell
// wide, to each of its stencil neighbours the cells that neighbour reads: a face (offset in one
// axis) is cells_per_side^(d-1) cells, an edge (two axes, 9- and 27-point only)
// cells_per_side^(d-2), a corner (three axes, 27-point) one cell; each cell value_bytes bytes.
// 5- and 7-point stencils reach face neighbours only; 9- and 27-point reach every rank whose
// coordinates differ by at most one in each axis. Without `periodic` neighbours off the grid are
// absent; with it coordinates wrap, so on an axis of 1 or 2 ranks two offsets can reach the same
// rank (the bytes add up) or the rank itself (a local copy). Needs every axis >= 1,
// cells_per_side >= 1, value_bytes >= 1.
CommMatrix gen_stencil(const std::vector<Rank>& grid, int points, bool periodic, std::int64_t cells_per_side,
                       Bytes value_bytes);

}  // namespace commfit
