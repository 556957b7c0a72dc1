// Schedule: the global view of a communication plan, as the passes build it.
// A phase is a step of the schedule; a transfer moves one piece (a byte range of one original
// message src -> dst) from rank `from` to rank `to` in one phase. In a direct schedule
// from == src and to == dst; two-stage and memory schedules forward pieces through
// intermediaries (to != dst, then later from != src).
#pragma once

#include "ir/comm_matrix.h"
#include "ir/types.h"

#include <cstdint>
#include <vector>

namespace commfit {

struct Piece {
  Rank src = 0;        // original sender of the message
  Rank dst = 0;        // original receiver of the message
  Bytes offset = 0;    // first byte of the piece within the message
  Bytes bytes = 0;     // length of the piece (> 0)
  friend bool operator==(const Piece&, const Piece&) = default;
  friend auto operator<=>(const Piece&, const Piece&) = default;
};

struct Transfer {
  Phase phase = 0;
  Rank from = 0;       // rank that sends in this phase
  Rank to = 0;         // rank that receives in this phase
  Piece piece;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

struct Schedule {
  Rank ranks = 0;
  Phase phases = 0;                  // every transfer has phase < phases
  std::vector<Transfer> transfers;   // network transfers, sorted by phase (then as the pass left them)
  std::vector<Piece> copies;         // local copies (src == dst), done in phase 0
};

// Sorts transfers by (phase, from, to, src, dst, offset): the canonical order every pass
// returns, so that equal schedules compare equal and plans are byte-identical.
void canonicalize(Schedule& s);

// One whole-message local copy per src == dst entry of m, in rank order.
std::vector<Piece> local_copies(const CommMatrix& m);

// Largest piece of each phase (0 for an empty phase); size == s.phases.
std::vector<Bytes> phase_max_piece(const Schedule& s);

// Drops the phases no transfer uses, numbering the rest 0, 1, ... in their order.
void drop_empty_phases(Schedule& s);

}  // namespace commfit
