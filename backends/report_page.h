// The page of `commfit report` (backends/report.h): what backends/report.cpp computes from a plan,
// and the HTML/SVG drawn from it (backends/report_page.cpp).
#pragma once

#include "ir/comm_matrix.h"
#include "ir/cost_model.h"
#include "ir/plan.h"
#include "ir/schedule.h"
#include "ir/topology.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commfit {

struct ReportCandidate {
  std::string name;
  std::string skipped;     // why it does not apply (then the numbers are unset)
  Phase phases = 0;
  Bytes max_message = 0;
  double estimate_s = 0;
  bool chosen = false;
};

struct ReportSend {        // what one rank sends in one phase
  Rank rank = 0;
  Phase phase = 0;
  Bytes bytes = 0;
  Bytes max_message = 0;
  std::int64_t messages = 0;
};

struct ReportMessage {     // one network message: all pieces from -> to in one phase
  Phase phase = 0;
  Rank from = 0, to = 0;
  Bytes bytes = 0;
};

struct ReportData {
  std::string plan_name;
  const Manifest* manifest = nullptr;
  Rank p = 0;
  Phase phases = 0;
  CommMatrix matrix;
  TrafficStats stats;
  std::vector<ReportCandidate> candidates;
  // What the page prices the plan with: the figures it was made with and its recorded estimate and
  // lower bound, or a machine file's (`machine`) and the plan re-priced on them.
  CostOptions cost;
  double estimate_s = 0, lower_bound_s = 0;
  ExchangeBound bound;            // on the figures the estimate used (ir/cost_model.h)
  bool relays = false;            // the plan forwards through intermediaries: lower_bound_s is bound.relay_s
  std::string machine;
  std::optional<Topology> topology;
  std::vector<ReportSend> sends;          // in (rank, phase) order
  std::vector<ReportMessage> messages;    // in (from, phase, to) order
  std::vector<Bytes> phase_bytes, phase_max_message, phase_max_link;
  std::vector<Bytes> phase_max_sent;   // the most bytes one rank sends in the phase (all its messages)
  std::vector<std::int64_t> phase_senders, phase_pieces;
  std::vector<double> phase_seconds;      // the cost model's time of each phase
  std::vector<Bytes> link_loads;          // bytes per link over the exchange (with a topology)
  // Links shared inside a phase (with a topology): per phase, the most messages one link carries;
  // and the link and phase where the most messages meet.
  std::vector<std::int64_t> phase_link_sharing;
  Link most_shared_link{-1};
  std::int64_t most_shared_count = 0;
  Phase most_shared_phase = 0;
};

std::string render_report(const ReportData& d);

// The cost model the page's times use (ReportData::cost): the report prices nothing itself
// (ir/cost_model.h does).
CostOptions report_cost(const ReportData& d);

}  // namespace commfit
