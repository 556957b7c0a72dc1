// commfit show PLAN [--rank R] [--json]: the plan in human-readable form, phase by phase, or as
// JSON (schemas/show.schema.json).
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/cost_model.h"
#include "ir/error.h"
#include "planner/commands.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

namespace commfit {
namespace {

struct ShowCommand {
  std::string plan;
  std::optional<Rank> rank;
  bool json = false;
};

std::string piece(const Step& s) {
  return std::to_string(s.src) + "->" + std::to_string(s.dst) + " [" + std::to_string(s.offset) + ", " +
         std::to_string(s.offset + s.bytes) + ")";
}

// Every network transfer once (from its send step), in (phase, sender) order.
struct Row { Phase phase; Rank from; Step step; };
std::vector<Row> transfers(const Plan& plan) {
  std::vector<Row> rows;
  for (const RankSchedule& r : plan.ranks)
    for (const Step& s : r.steps)
      if (s.op == Op::send) rows.push_back({s.phase, r.rank, s});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return std::tie(a.phase, a.from) < std::tie(b.phase, b.from); });
  return rows;
}

// A message is every piece one rank sends another in the phase (phase_max_message's sense,
// computed from the phase's rows: nothing is allocated per phase of the file's count).
Bytes largest_message(const Row* first, const Row* last) {
  std::map<std::pair<Rank, Rank>, Bytes> message;
  Bytes largest = 0;
  for (const Row* x = first; x != last; ++x) largest = std::max(largest, message[{x->from, x->step.peer}] += x->step.bytes);
  return largest;
}

std::size_t local_copies(const Plan& plan) {
  std::size_t copies = 0;
  for (const RankSchedule& r : plan.ranks)
    copies += static_cast<std::size_t>(std::count_if(r.steps.begin(), r.steps.end(), [](const Step& s) { return s.op == Op::copy; }));
  return copies;
}

// schemas/show.schema.json: the manifest and, with --rank, that rank's schedule as the plan
// directory's files hold them; otherwise the phases that have transfers, each with its transfers.
int print_json(const ShowCommand& c, const Plan& plan) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["format"] = "commfit-show";
  j["version"] = 1;
  j["plan"] = c.plan;
  j["manifest"] = ordered_json::parse(manifest_json(plan.manifest));
  if (c.rank) {
    j["rank"] = ordered_json::parse(rank_schedule_json(plan.ranks[*c.rank]));
  } else {
    const std::vector<Row> rows = transfers(plan);
    ordered_json phases = ordered_json::array();
    for (std::size_t k = 0; k < rows.size();) {
      std::size_t n = 0;
      while (k + n < rows.size() && rows[k + n].phase == rows[k].phase) ++n;
      ordered_json list = ordered_json::array();
      for (std::size_t x = k; x < k + n; ++x) {
        const Step& s = rows[x].step;
        list.push_back({{"from", rows[x].from}, {"to", s.peer}, {"src", s.src}, {"dst", s.dst}, {"offset", s.offset}, {"bytes", s.bytes},
                        {"forwarded", s.buffer == Buffer::stage}, {"to_staging", s.peer != s.dst}});
      }
      phases.push_back({{"phase", rows[k].phase}, {"pieces", n}, {"largest_message", largest_message(&rows[k], &rows[k] + n)},
                        {"transfers", std::move(list)}});
      k += n;
    }
    j["phases"] = std::move(phases);
    j["local_copies"] = local_copies(plan);
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

int run_show(const ShowCommand& c) {
  // Either form of a plan: a directory or the single binary file.
  const Plan plan = is_plan_binary(c.plan) ? read_plan_binary(c.plan) : read_plan_dir(c.plan);
  const Manifest& m = plan.manifest;
  // Checked before anything is printed: an error leaves standard output empty.
  if (c.rank && (*c.rank < 0 || *c.rank >= m.ranks))
    throw UsageError("--rank " + std::to_string(*c.rank) + " is out of range (the plan has " + std::to_string(m.ranks) + " ranks)");
  if (c.json) return print_json(c, plan);
  std::printf("plan %s: %d ranks, %u phases, strategy %s %s\n", c.plan.c_str(), m.ranks, m.phases, m.strategy.c_str(), contract_json(m.contract, m.options).dump().c_str());
  std::printf("matrix %s\n", m.matrix_fingerprint.c_str());
  std::printf("cost: estimate %.4g s, lower bound %.4g s (tau %.3g s, bandwidth %.3g B/s), staging max %llu B\n", m.cost.estimate_s,
              m.cost.lower_bound_s, m.cost.tau_s, m.cost.bandwidth_Bps, static_cast<unsigned long long>(m.staging_bytes_max));
  if (c.rank) {
    const RankSchedule& r = plan.ranks[*c.rank];
    std::printf("rank %d: %zu steps, staging %llu B", r.rank, r.steps.size(), static_cast<unsigned long long>(r.staging_bytes));
    if (r.max_outstanding > 0) std::printf(", request window %u", r.max_outstanding);
    if (!r.send_order.empty()) {
      std::printf(", sends posted to");
      for (Rank peer : r.send_order) std::printf(" %d", peer);
    }
    std::printf("\n");
    for (const Step& s : r.steps) {
      std::printf("  phase %-5u %-4s %s %-6d %-28s %12llu B  %s", s.phase, to_string(s.op),
                  s.op == Op::send ? "to  " : s.op == Op::recv ? "from" : "    ", s.peer, piece(s).c_str(),
                  static_cast<unsigned long long>(s.bytes), to_string(s.buffer));
      if (s.buffer == Buffer::stage) std::printf(" @%llu", static_cast<unsigned long long>(s.stage_offset));
      std::printf("\n");
    }
    return 0;
  }
  // All ranks: every network transfer once (from its send step), phase by phase.
  const std::vector<Row> rows = transfers(plan);
  std::size_t k = 0;
  for (Phase ph = 0; ph < m.phases; ++ph) {
    std::size_t n = 0;
    while (k + n < rows.size() && rows[k + n].phase == ph) ++n;
    if (n == 0) {   // a run of phases without transfers is one line, however long
      const Phase last = k < rows.size() ? rows[k].phase - 1 : m.phases - 1;
      if (last > ph) {
        std::printf("phases %u-%u: no pieces\n", ph, last);
        ph = last;
        continue;
      }
    }
    std::printf("phase %u: %zu pieces, largest message %llu B\n", ph, n,
                static_cast<unsigned long long>(largest_message(rows.data() + k, rows.data() + k + n)));
    for (; n > 0; --n, ++k) {
      const Row& row = rows[k];
      const bool forwarded = row.step.buffer == Buffer::stage;
      const bool staged = row.step.peer != row.step.dst;
      std::printf("  %6d -> %-6d %-28s %12llu B%s%s\n", row.from, row.step.peer, piece(row.step).c_str(),
                  static_cast<unsigned long long>(row.step.bytes), forwarded ? "  (forwarded)" : "", staged ? "  (to staging)" : "");
    }
  }
  if (const std::size_t copies = local_copies(plan)) std::printf("local copies: %zu\n", copies);
  return 0;
}

}  // namespace

void add_show_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<ShowCommand>();
  CLI::App* sub = app.add_subcommand("show", "Print a plan phase by phase (or one rank's steps)");
  sub->add_option("PLAN", c->plan, "Plan directory or binary plan file (.cfp)")->required();
  sub->add_option("--rank", c->rank, "Show only this rank's steps");
  sub->add_flag("--json", c->json, "Print the plan as JSON (schemas/show.schema.json)");
  sub->callback([c, &run] { run = [c] { return run_show(*c); }; });
}

}  // namespace commfit
