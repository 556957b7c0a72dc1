// What a plan promises and what it was priced with: the rules the verifier holds it to, how the
// executor runs it, the machine its estimate assumed, and how `--strategy auto` chose it. One
// struct with one JSON reading and writing (the manifest's "options" object, docs/FORMAT.md §3):
// the plan writers fill it, and verify, compare, the report and in-job planning read its fields.
// What else a strategy records about how it shaped the plan (its algorithm, seed, chunk...) is
// free-form provenance beside it (Manifest::options), read by people, not by code.
#pragma once

#include "ir/network_options.h"
#include "ir/types.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commfit {

// The verifier's contention rules (passes/verify.h). node: one message per port per phase;
// bounded: at most `per_port`; link: node, and no two messages of a phase share a directed link;
// none: any number.
enum class Contention { none, node, link, bounded };
const char* to_string(Contention c);
std::optional<Contention> parse_contention(std::string_view name);

// How the executor runs the plan, and so how the cost model prices it.
enum class Timing {
  synchronous,   // phase after phase: sum of tau + mu * largest message per phase
  async,         // everything posted at once (AC): the busiest rank's port
};

// One row of what `--strategy auto` compared: a candidate it skipped (and why), or the plan it
// made and its prices.
struct CandidateRecord {
  std::string name;
  std::string skipped;   // not empty: skipped, and the fields below are unset
  Phase phases = 0;
  Bytes max_message = 0;
  double estimate_s = 0;
  bool simulated = true;   // false: estimate_s is the analytic one
  std::optional<double> loose_s{};
};

struct PlanContract {
  // `--strategy auto`: the candidate kept ("" when one strategy was asked for) and every row.
  std::string chosen;
  std::vector<CandidateRecord> candidates;

  // The verifier's rules. per_port: messages a rank sends (and receives) per phase under the
  // bounded rule. memory: the free bytes per rank a memory-constrained plan was made within.
  Contention contention = Contention::node;
  int per_port = 1;
  std::optional<std::vector<Bytes>> memory;
  // The machine's shape (Topology::spec()); "" when none was given (a full network, one rank per
  // node). The link rule needs one.
  std::string topology;
  Timing timing = Timing::synchronous;

  // The machine the estimate assumed: the machine file its figures came from ("" none), tau and
  // bandwidth (0: not recorded), the network model with its overhead as resolved
  // (sim_overhead_s), and the intra-node figures when `intra` (several ranks per node).
  std::string machine;
  double tau_s = 0;
  double bandwidth_Bps = 0;
  NetworkOptions network;
  bool intra = false;
  // false: the estimate is the analytic one (the plan was beyond the simulation's work limit).
  bool simulated = true;
};

// auto's rows as the manifest and `compare --json` write them.
nlohmann::ordered_json candidates_json(const std::vector<CandidateRecord>& rows);

// The manifest's "options" object: the contract's fields and the strategy's `provenance` (an
// object), in one fixed order, so that the same plan is written the same, byte for byte.
nlohmann::ordered_json contract_json(const PlanContract& c, const nlohmann::ordered_json& provenance);

// Reads the contract from a manifest's "options" object; what is not the contract's goes to
// `provenance` in its order. A field of the wrong type or out of range is an InputError naming
// `file` and /options/KEY. Fields a plan does not record keep their defaults (plans written
// before a field existed).
PlanContract read_contract(const nlohmann::ordered_json& options, const std::string& file, nlohmann::ordered_json& provenance);

}  // namespace commfit
