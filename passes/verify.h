// verify: the oracle of docs/FORMAT.md §4. Checks a lowered plan against its matrix:
//  1. every byte of every message reaches dst's receive segment for src exactly once, nothing else arrives;
//  2. a rank only sends bytes it holds (its own, or staged bytes received in an earlier phase);
//  3. every send step has exactly one matching receive step (same phase, peers, piece);
//  4. contention: node rule (per phase, each rank sends to at most one rank and receives from at
//     most one rank; all pieces between one pair in one phase form one message) or link rule
//     (the node rule, and the routes of a phase's messages pairwise link-disjoint), as the plan claims;
//  5. memory: per phase, bytes received <= free bytes at its start (when the matrix has limits);
//  6. staging intervals of a rank do not overlap while live; 7. declared figures: staging_bytes is what the
//     staged steps use (ir/plan.h), phases end at the last used one. Plus format checks (counts, ranges, order).
#pragma once

#include "ir/plan.h"
#include "ir/schedule.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace commfit {

struct VerifyRules {
  Contention contention = Contention::node;
  // Link rule: the directed links (any ids) a message from `a` to `b` occupies; empty = none
  // (e.g. ranks of one node). Required when contention == link.
  std::function<void(Rank a, Rank b, std::vector<Link>& links)> route;
  int per_port = 1;               // Contention::bounded: messages a rank may send (and receive) per phase
  bool memory = false;            // rule 5 with m.memory
  std::size_t max_problems = 10;  // stop collecting after this many
};

// The verifier, fed one rank schedule at a time: add() each in rank order, then finish(). The
// plan is never held: a rank's own rules (1, 2, 4 at its ports, 5, 6 and the format) are checked
// as it comes, and for rule 3 the verifier keeps, of each transfer, the half seen first (32
// bytes) until its other end comes; the link rule keeps one 12-byte entry per message. It reads
// only what it is given and the matrix, never what the passes built.
class PlanVerifier {
 public:
  // `manifest`: its ranks, phases and matrix_fingerprint are read now, its staging_bytes_max in
  // finish(); it must outlive the verifier. `columns` (matrix_columns(m)) and `fingerprint`
  // (matrix_fingerprint(m)) when the caller has them, else computed here; `columns` must
  // outlive the verifier.
  PlanVerifier(const Manifest& manifest, const CommMatrix& m, const VerifyRules& rules, const MatrixColumns* columns = nullptr,
               std::string fingerprint = {});
  ~PlanVerifier();
  PlanVerifier(const PlanVerifier&) = delete;
  PlanVerifier& operator=(const PlanVerifier&) = delete;

  // The next rank schedule: the k-th call gives rank k's.
  void add(const RankSchedule& rs);
  // Empty when the plan is valid; else one line per problem found, rule number first, at most
  // rules.max_problems.
  std::vector<std::string> finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole plan at once, through a PlanVerifier.
std::vector<std::string> verify(const Plan& plan, const CommMatrix& m, const VerifyRules& rules);


}  // namespace commfit
