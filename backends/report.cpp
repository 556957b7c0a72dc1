// `commfit report`: the analysis of a plan and the HTML page (backends/report.h). The charts are
// drawn in backends/report_page.cpp.
#include "backends/report.h"

#include "backends/report_page.h"
#include "ir/cost_model.h"
#include "ir/error.h"


#include <algorithm>
#include <cstdio>

namespace commfit {
namespace {

using nlohmann::ordered_json;

// The rows --strategy auto compared (the plan's contract), the chosen one marked.
std::vector<ReportCandidate> read_candidates(const Manifest& mf) {
  std::vector<ReportCandidate> out;
  for (const CandidateRecord& r : mf.contract.candidates)
    out.push_back({.name = r.name, .skipped = r.skipped, .phases = r.phases, .max_message = r.max_message, .estimate_s = r.estimate_s,
                   .chosen = !mf.contract.chosen.empty() && r.name == mf.contract.chosen});
  return out;
}

// The machine: --topology, else the plan's recorded options.topology, else none (full).
std::optional<Topology> report_topology(const Manifest& mf, const ReportInput& in) {
  if (in.topology) {
    in.topology->check_ranks(mf.ranks);
    return in.topology->kind() == Topology::Kind::full ? std::nullopt : in.topology;
  }
  if (mf.contract.topology.empty()) return std::nullopt;
  try {
    Topology t = Topology::parse(mf.contract.topology);
    t.check_ranks(mf.ranks);
    return t.kind() == Topology::Kind::full ? std::nullopt : std::optional<Topology>(t);
  } catch (const UsageError& e) {
    throw InputError(in.manifest_file, "/options/topology", e.what());
  }
}

ReportData analyse(const Plan& plan, const ReportInput& in) {
  ReportData d;
  const Manifest& mf = plan.manifest;
  d.plan_name = in.plan_name;
  d.manifest = &mf;
  d.p = mf.ranks;
  d.phases = mf.phases;
  d.candidates = read_candidates(mf);
  // Per-phase tables are O(phases): refuse phase counts no plan of these steps can need.
  std::size_t steps = 0;
  for (const RankSchedule& r : plan.ranks) steps += r.steps.size();
  if (d.phases > steps + 1024)
    throw InputError(in.manifest_file, "/phases", std::to_string(d.phases) + " phases for " + std::to_string(steps) + " steps: not a plan to draw");
  d.topology = report_topology(mf, in);

  // The matrix: row r is rank r's sends (self included); it must give the plan's fingerprint.
  std::vector<Message> messages;
  for (const RankSchedule& r : plan.ranks)
    for (const PeerBytes& s : r.sends) messages.push_back({r.rank, s.peer, s.bytes});
  d.matrix = make_matrix(d.p, std::move(messages));
  if (matrix_fingerprint(d.matrix) != mf.matrix_fingerprint)
    throw InputError(in.manifest_file, "/matrix_fingerprint", "the rank files' sends do not give this fingerprint: the plan was edited");
  d.stats = traffic_stats(d.matrix);
  if (in.cost) {
    // Re-priced on the machine file's figures, on the plan's machine (its node map included).
    const Topology topo = in.topology ? *in.topology : mf.contract.topology.empty() ? Topology() : Topology::parse(mf.contract.topology);
    d.cost = *in.cost;
    d.machine = in.machine;
    d.estimate_s = plan_estimate_s(plan, d.matrix, d.cost, topo);
    d.relays = plan_relays(plan, d.matrix);
    d.bound = exchange_bound(d.matrix, d.cost, topo);
    d.lower_bound_s = d.bound.of(d.relays);
  } else {
    d.cost.tau_s = mf.cost.tau_s;
    d.cost.bandwidth_Bps = mf.cost.bandwidth_Bps;
    d.cost.network = mf.contract.network;
    d.estimate_s = mf.cost.estimate_s;
    d.lower_bound_s = mf.cost.lower_bound_s;
    d.relays = plan_relays(plan, d.matrix);
    d.bound = exchange_bound(d.matrix, d.cost, d.topology ? *d.topology : Topology());
  }

  // Per phase and per (rank, phase): the network messages (all pieces to one peer in one phase).
  const std::size_t P = d.phases;
  d.phase_bytes.assign(P, 0);
  d.phase_senders.assign(P, 0);
  d.phase_pieces.assign(P, 0);
  for (const RankSchedule& r : plan.ranks) {
    const Step* prev = nullptr;
    for (const Step& s : r.steps) {
      if (s.op != Op::send) continue;
      ++d.phase_pieces[s.phase];
      d.phase_bytes[s.phase] += s.bytes;
      if (prev && prev->phase == s.phase && prev->peer == s.peer) {
        d.sends.back().bytes += s.bytes;
        d.messages.back().bytes += s.bytes;   // another piece of the same message
      } else {
        if (d.sends.empty() || d.sends.back().rank != r.rank || d.sends.back().phase != s.phase) {
          d.sends.push_back({r.rank, s.phase, 0, 0, 0});
          ++d.phase_senders[s.phase];
        }
        d.sends.back().bytes += s.bytes;
        ++d.sends.back().messages;
        d.messages.push_back({s.phase, r.rank, s.peer, s.bytes});
      }
      prev = &s;
    }
  }
  d.phase_max_sent.assign(P, 0);
  for (const ReportSend& s : d.sends) d.phase_max_sent[s.phase] = std::max(d.phase_max_sent[s.phase], s.bytes);
  // Each (rank, phase)'s largest message; both lists are in (rank, phase) order.
  for (std::size_t si = 0, k = 0; k < d.messages.size(); ++k) {
    const ReportMessage& msg = d.messages[k];
    while (!(d.sends[si].rank == msg.from && d.sends[si].phase == msg.phase)) ++si;
    d.sends[si].max_message = std::max(d.sends[si].max_message, msg.bytes);
  }

  if (d.topology) {
    d.link_loads = link_loads(d.matrix, *d.topology);
    std::vector<ReportMessage> by_phase = d.messages;
    std::stable_sort(by_phase.begin(), by_phase.end(), [](const ReportMessage& a, const ReportMessage& b) { return a.phase < b.phase; });
    std::vector<std::int64_t> count(d.link_loads.size(), 0);
    d.phase_link_sharing.assign(P, 0);
    std::vector<Link> touched, links;
    for (std::size_t k = 0; k < by_phase.size();) {
      const Phase ph = by_phase[k].phase;
      for (; k < by_phase.size() && by_phase[k].phase == ph; ++k) {
        d.topology->route(by_phase[k].from, by_phase[k].to, links);
        for (Link l : links) {
          std::int64_t& n = count[l.index()];
          if (n == 0) touched.push_back(l);
          d.phase_link_sharing[ph] = std::max(d.phase_link_sharing[ph], ++n);
          if (n > d.most_shared_count) d.most_shared_count = n, d.most_shared_link = l, d.most_shared_phase = ph;
        }
      }
      for (Link l : touched) count[l.index()] = 0;
      touched.clear();
    }
  }
  // The cost model's time of each phase (ir/cost_model.h): tau + max(largest message, busiest
  // link) / bandwidth; phases without network traffic take no time.
  SynchronousPhases phases = synchronous_phases(PlanTraffic(plan), report_cost(d), d.topology ? *d.topology : Topology());
  d.phase_max_message = std::move(phases.largest);
  d.phase_max_link = phases.busiest_link.empty() ? std::vector<Bytes>(P, 0) : std::move(phases.busiest_link);
  d.phase_seconds = std::move(phases.seconds);
  return d;
}

}  // namespace

std::string report_html(const Plan& plan, const ReportInput& in) {
  const ReportData d = analyse(plan, in);
  return render_report(d);
}

}  // namespace commfit
