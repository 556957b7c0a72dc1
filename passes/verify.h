// verify: the oracle of docs/FORMAT.md §4. Checks a lowered plan against its matrix:
//  1. every byte of every message reaches dst's receive segment for src exactly once, nothing else arrives;
//  2. a rank only sends bytes it holds (its own, or staged bytes received in an earlier phase);
//  3. every send step has exactly one matching receive step (same phase, peers, piece);
//  4. contention: node rule (per phase, each rank sends to at most one rank and receives from at
//     most one rank; all pieces between one pair in one phase form one message) or link rule
//     (the node rule, and the routes of a phase's messages pairwise link-disjoint), as the plan claims;
//  5. memory: per phase, bytes received <= free bytes at its start (when the matrix has limits);
//  6. staging intervals of a rank do not overlap while live.
// Plus the format-level checks: counts, fingerprint, phase and rank ranges, step order.
#pragma once

#include "ir/plan.h"
#include "ir/schedule.h"

#include <functional>
#include <string>
#include <vector>

namespace commfit {

// node: one message per port per phase; bounded: at most `per_port`; link: node, and no two
// messages of a phase share a directed link.
enum class Contention { none, node, link, bounded };

struct VerifyRules {
  Contention contention = Contention::node;
  // Link rule: the directed links (any ids) a message from `a` to `b` occupies; empty = none
  // (e.g. ranks of one node). Required when contention == link.
  std::function<void(Rank a, Rank b, std::vector<std::int64_t>& links)> route;
  int per_port = 1;               // Contention::bounded: messages a rank may send (and receive) per phase
  bool memory = false;            // rule 5 with m.memory
  std::size_t max_problems = 10;  // stop collecting after this many
};

// Empty when the plan is valid; else one line per problem found, rule number first.
std::vector<std::string> verify(const Plan& plan, const CommMatrix& m, const VerifyRules& rules);

const char* to_string(Contention c);

}  // namespace commfit
