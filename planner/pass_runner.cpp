#include "planner/pass_runner.h"

namespace commfit {

std::string format_schedule(const Schedule& s) {
  std::string out = std::to_string(s.ranks) + " ranks, " + std::to_string(s.phases) + " phases, " + std::to_string(s.transfers.size()) +
                    " transfers, " + std::to_string(s.copies.size()) + " local copies\n";
  Phase phase = 0;
  bool first = true;
  for (const Transfer& t : s.transfers) {
    if (first || t.phase != phase) out += "phase " + std::to_string(t.phase) + ":\n";
    first = false;
    phase = t.phase;
    out += "  " + std::to_string(t.from) + " -> " + std::to_string(t.to) + "  piece " + std::to_string(t.piece.src) + "->" +
           std::to_string(t.piece.dst) + " [" + std::to_string(t.piece.offset) + ", " + std::to_string(t.piece.offset + t.piece.bytes) + ")\n";
  }
  return out;
}

}  // namespace commfit
