// CompressedMatrix (CCOM) of Ranka-Wang §4.2: per row, the list of destinations still to be
// scheduled, randomly ordered, with the fill pointer prt. Rows are ragged (CSR) rather than the
// paper's dense n x d array, so one hot sender does not make the whole table n x p.
#pragma once

#include "ir/comm_matrix.h"

#include <cstdint>
#include <vector>

namespace commfit {

struct CompressedMatrix {
  Rank ranks = 0;
  std::vector<std::int64_t> row_begin;   // size ranks + 1: row i occupies [row_begin[i], row_begin[i+1])
  std::vector<Rank> dest;                // destinations; entries past the fill pointer are -1
  std::vector<std::int64_t> prt;         // number of active entries of row i (the paper's prt(i) + 1)

  std::int64_t row_size(Rank i) const { return row_begin[i + 1] - row_begin[i]; }
  Rank* row(Rank i) { return dest.data() + row_begin[i]; }
  const Rank* row(Rank i) const { return dest.data() + row_begin[i]; }
};

// Checks the CCOM invariants against its matrix: every network message (src != dst) appears
// exactly once among the active entries of its row, no hole before prt, -1 after it.
// Returns an empty string when valid, else the first problem.
std::string check_ccom(const CompressedMatrix& c, const CommMatrix& m);

}  // namespace commfit
