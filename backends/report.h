// `commfit report`: one self-contained HTML page about a plan (docs/REPORT.md). Inline SVG, CSS
// and a small inline script only: no network, no external fonts, deterministic bytes.
//
// What the page shows, and how it stays small for large p:
//   - the communication matrix (rebuilt from the rank files' sends, checked against the plan's
//     fingerprint) as a heatmap. At most kReportMaxCells x kReportMaxCells cells: when
//     p > kReportMaxCells, ranks are grouped into blocks of b = ceil(p / kReportMaxCells)
//     consecutive ranks and a cell holds the bytes the b x b block sends; zero cells are not drawn;
//   - the phases as a Gantt chart: one row per rank (blocks of ceil(p / kReportMaxRows) ranks
//     when p is larger), one column per phase (groups of ceil(phases / kReportMaxColumns)
//     consecutive phases when there are more), column width proportional to the cost model's
//     phase time; a bar's width is the busiest rank of its row's time in the column
//     (tau + bytes / bandwidth for each phase it sends in), its colour the largest message it sends;
//   - per-phase utilisation: bytes moved / (senders x largest message), and senders / p;
//   - link loads (bytes per link over the whole exchange, and each phase's busiest link) when
//     the plan was made for a topology, or one is given;
//   - the cost table: estimate, lower bound, and every candidate of --strategy auto (recorded in
//     the manifest's options.candidates).
#pragma once

#include "ir/cost_model.h"

#include "ir/plan.h"
#include "ir/schedule.h"
#include "ir/topology.h"

#include <filesystem>
#include <optional>
#include <string>

namespace commfit {

inline constexpr int kReportMaxCells = 64;      // heatmap cells per side
inline constexpr int kReportMaxRows = 64;       // Gantt rows
inline constexpr int kReportMaxColumns = 128;   // Gantt columns

struct ReportInput {
  std::string plan_name;                // shown in the title, and named in errors
  std::string manifest_file;            // where the manifest came from, for error messages
  std::optional<Topology> topology;     // overrides the plan's recorded topology
  // `report --machine FILE`: the figures to price the plan with in place of those it was made
  // with (the machine file's over the plan's own), and the file's name for the page.
  std::optional<CostOptions> cost;
  std::string machine;
};

// The page. Throws InputError when the plan's content contradicts itself in a way the readers do
// not check (a candidate table of the wrong shape, sends that do not give the fingerprint).
std::string report_html(const Plan& plan, const ReportInput& in);

}  // namespace commfit
