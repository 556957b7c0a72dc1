// lower: Schedule -> Plan (per-rank steps of docs/FORMAT.md §3).
// Each transfer becomes a send step on `from` and a recv step on `to`; the buffer of a step is
// `send` when the rank is the piece's src, `recv` when it is the piece's dst, else `stage`.
// Staged pieces get staging offsets from a first-fit allocator, live from the phase they arrive
// in to the phase their last byte is forwarded; staging_bytes is each rank's high-water mark.
// Needs: a schedule in which every forwarded byte was received earlier. Guarantees: steps in
// step_less order, sends/recvs = the rank's row and column of COM. The manifest is left to the
// caller except ranks, phases, fingerprint and staging_bytes_max.
//
// A rank's schedule depends only on the transfers that touch it (its staging area is its own), so
// lowering goes rank by rank: `Lowering` indexes the transfers by sender and by receiver (8 bytes
// a transfer) and gives any rank's schedule on demand, and the pipeline streams the ranks into the
// verifier and the writer without holding the whole plan (planner/pipeline.h). `lower` is the
// same, every rank kept.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/plan.h"
#include "ir/schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace commfit {

class Lowering {
 public:
  // `s`, `m` and `columns` (matrix_columns(m)) must outlive the Lowering; `fingerprint` is
  // matrix_fingerprint(m), computed once by the caller.
  Lowering(const Schedule& s, const CommMatrix& m, const MatrixColumns& columns, std::string fingerprint);

  Rank ranks() const { return m_.ranks; }
  // Local copies run in phase 0: a plan of copies only still has that one phase.
  Phase phases() const { return phases_; }
  const std::string& fingerprint() const { return fingerprint_; }

  // Rank r's schedule into `out`, whose lists keep their capacity from one rank to the next.
  void rank(Rank r, RankSchedule& out);

 private:
  const Schedule& s_;
  const CommMatrix& m_;
  const MatrixColumns& columns_;
  std::string fingerprint_;
  Phase phases_ = 0;
  // Transfer numbers by sender and by receiver, each rank's in the schedule's order; copies by rank.
  std::vector<std::uint32_t> from_start_, from_, to_start_, to_, copy_start_, copy_;
  // When the transfers are not sorted by phase: the number of each one's run of one phase.
  std::vector<std::uint32_t> run_;
  std::size_t first_later_ = 0;   // the first transfer of a phase > 0 (the copies go before it)
  std::vector<Transfer> sends_, recvs_;   // rank()'s scratch: the rank's transfers
};

Plan lower(const Schedule& s, const CommMatrix& m);

}  // namespace commfit
