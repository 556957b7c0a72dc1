// commfit report PLAN [-o FILE.html] [--topology SPEC] [--machine FILE]: one self-contained HTML page about a plan
// (backends/report.h, docs/REPORT.md): the matrix as a heatmap, the phases as a Gantt chart,
// per-phase utilisation, link loads, the cost table. The plan is read by the strict readers; a bad
// plan exits 2 with one line and writes nothing. The page is written atomically. --machine prices
// the plan on a machine file's figures (planner/machine_file.h) in place of those it was made with.
#include "backends/atomic_output.h"
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "backends/report.h"
#include "ir/error.h"
#include "planner/commands.h"
#include "planner/machine_file.h"

#include <cstdio>
#include <memory>

namespace commfit {
namespace {

struct ReportCommand {
  std::string plan;
  std::string output;
  std::string topology;
  std::string machine;
  bool quiet = false;
};

int run_report(const ReportCommand& c) {
  const bool binary = is_plan_binary(c.plan);
  const Plan plan = binary ? read_plan_binary(c.plan) : read_plan_dir(c.plan);
  ReportInput in;
  in.plan_name = std::filesystem::path(c.plan).lexically_normal().filename().string();
  if (in.plan_name.empty()) in.plan_name = std::filesystem::path(c.plan).lexically_normal().parent_path().filename().string();
  in.manifest_file = binary ? c.plan : (std::filesystem::path(c.plan) / "manifest.json").string();
  if (!c.topology.empty()) in.topology = Topology::parse(c.topology);
  if (!c.machine.empty()) {
    // The plan's own figures, the machine file's over them. The plan records its overhead as
    // resolved; a file that sets tau and not the overhead gets the default's tau / 4 of its tau.
    const MachineFile file = read_machine_file(c.machine);
    const PlanContract& made = plan.manifest.contract;
    PlanOptions o;
    if (made.tau_s > 0) o.cost.tau_s = made.tau_s;
    if (made.bandwidth_Bps > 0) o.cost.bandwidth_Bps = made.bandwidth_Bps;
    o.cost.network = made.network;
    if (file.tau_s && !file.overhead_s) o.cost.network.overhead_s = -1;
    apply_machine_file(file, o, {});
    in.cost = o.cost;
    in.machine = c.machine;
  }
  const std::string html = report_html(plan, in);
  const std::string out = c.output.empty() ? std::filesystem::path(in.plan_name).stem().string() + ".html" : c.output;
  write_file_atomic(html, out);
  if (!c.quiet) std::printf("commfit: wrote %s (%zu bytes)\n", out.c_str(), html.size());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<ReportCommand>();
  CLI::App* sub = app.add_subcommand("report", "Write a self-contained HTML page about a plan: heatmap, Gantt chart, utilisation, link loads, costs");
  sub->add_option("PLAN", c->plan, "Plan directory or binary plan file (.cfp)")->required();
  sub->add_option("-o,--output", c->output, "HTML file to write (default: <plan stem>.html)");
  sub->add_option("--topology", c->topology, "Machine for the link loads (default: the plan's own): full, hypercube:D, mesh:AxB, torus:AxBxC, fattree:..., dragonfly:...");
  sub->add_option("--machine", c->machine,
                  "Machine file (commfit-calibrate's): price the plan on its figures in place of those it was made with");
  sub->add_flag("-q,--quiet", c->quiet, "Print nothing on success");
  sub->callback([c, &run] { run = [c] { return run_report(*c); }; });
}

}  // namespace commfit
