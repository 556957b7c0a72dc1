// commfit plan MATRIX [-o DIR] [...]: plan, verify, write atomically, print the summary.
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "planner/file_defaults.h"
#include "planner/machine_file.h"
#include "planner/limits.h"
#include "planner/network_options.h"
#include "planner/pipeline.h"
#include "planner/plan_option.h"
#include "planner/strategy_table.h"
#include "planner/units.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <optional>
#include <memory>

namespace commfit {
namespace {

// Above this many ranks the default output (no -o) is the binary form, NAME.cfp.
constexpr Rank kBinaryDefaultRanks = 4096;

struct PlanCommand {
  std::string matrix;
  std::optional<MatrixFormat> input_format;
  std::string output;
  PlanOptions plan;
  bool quiet = false;
  bool json = false;   // the summary as JSON on standard output
  bool time_passes = false;
  std::optional<Bytes> memory;
  std::string memory_file;
  std::string node_map;
  std::optional<std::uint64_t> max_memory;   // default: planner/limits.h default_memory_limit()
  std::optional<int> threads;                // default: planner/limits.h usable_cpus()
  std::shared_ptr<NetworkFlags> network;
  const CLI::App* app = nullptr;   // the subcommand: which options its command line gave
  // The options only some strategies read (the strategy table says which), as given.
  std::vector<std::pair<StrategyOption, CLI::Option*>> strategy_options;
};

// --memory-file: one free-byte count per rank, separated by white space; '#' starts a comment.
std::vector<Bytes> read_memory_file(const std::string& path) {
  const std::string text = read_text_file(path, std::size_t{1} << 30);
  std::vector<Bytes> out;
  std::size_t line = 1;
  for (std::size_t k = 0; k < text.size();) {
    const char ch = text[k];
    if (ch == '#') {
      while (k < text.size() && text[k] != '\n') ++k;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      line += ch == '\n';
      ++k;
    } else {
      std::size_t e = k;
      while (e < text.size() && !std::isspace(static_cast<unsigned char>(text[e])) && text[e] != '#') ++e;
      Bytes v = 0;
      auto [p, ec] = std::from_chars(text.data() + k, text.data() + e, v);
      if (ec != std::errc() || p != text.data() + e)
        throw InputError(path, "line " + std::to_string(line), "expected a non-negative integer byte count, got \"" + text.substr(k, e - k) + "\"");
      out.push_back(v);
      k = e;
    }
  }
  return out;
}

// Progress for long plans: at least this many messages (COMMFIT_PROGRESS_MESSAGES overrides it,
// for tests), stderr a terminal, and no --quiet. One line, rewritten in place, erased at the end.
constexpr std::int64_t kProgressMessages = 1000000;

class Progress {
 public:
  Progress(const PlanCommand& c, std::int64_t messages) {
    std::int64_t threshold = kProgressMessages;
    if (const char* env = std::getenv("COMMFIT_PROGRESS_MESSAGES")) threshold = std::strtoll(env, nullptr, 10);
    on_ = !c.quiet && messages >= threshold && ::isatty(STDERR_FILENO);
  }
  ~Progress() {
    if (shown_) std::fputs("\r\x1b[K", stderr);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  bool on() const { return on_; }
  void show(const std::string& what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r\x1b[Kcommfit: %6.1f s  %s", s, what.c_str());
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  bool on_ = false, shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The plan's writers as make_plan's sinks (planner/pipeline.h).
class DirSink : public PlanSink {
 public:
  DirSink(const std::string& dir, Rank ranks, unsigned threads) : writer_(dir, ranks, threads) {}
  void rank(RankSchedule&& rs) override { writer_.add(std::move(rs)); }
  void finish(const Manifest& m) override { writer_.finish(m); }

 private:
  PlanDirWriter writer_;
};

// The binary writer needs the plan's shape, which its first rank schedule tells.
class BinarySink : public PlanSink {
 public:
  explicit BinarySink(const std::string& file) : file_(file) {}
  void rank(RankSchedule&& rs) override {
    if (!writer_) writer_.emplace(file_, rs.ranks, rs.phases, rs.matrix_fingerprint);
    writer_->add(rs);
  }
  void finish(const Manifest& m) override {
    if (!writer_) writer_.emplace(file_, m.ranks, m.phases, m.matrix_fingerprint);
    writer_->finish(m);
  }

 private:
  std::string file_;
  std::optional<PlanBinaryWriter> writer_;
};

int run_plan(const PlanCommand& c) {
  std::vector<StrategyOption> given;
  for (const auto& [option, cli] : c.strategy_options)
    if (cli->count() > 0 && std::find(given.begin(), given.end(), option) == given.end()) given.push_back(option);
  check_given_options(c.plan.strategy, given);
  const unsigned threads = threads_or_default(c.threads);
  if (!c.plan.print_after.empty()) {
    const std::optional<Pass> p = find_pass(c.plan.print_after);
    if (!p || !pass_entry(*p).schedule) {
      std::string names;
      for (const PassEntry& e : pass_table())
        if (e.schedule) names += (names.empty() ? "" : ", ") + std::string(e.entry.name);
      throw UsageError("--print-after \"" + c.plan.print_after + "\" is not a pass that returns a schedule (choose from: " + names + ")");
    }
  }
  if (c.matrix == "-" && c.output.empty()) throw UsageError("the matrix comes from standard input: name the plan with -o");
  if (!c.output.empty()) check_plan_output(c.output);   // refuse a path we would not replace before reading or planning
  MatrixFile in = read_matrix(c.matrix, c.input_format);
  // The default output: a plan directory, or above kBinaryDefaultRanks the single binary file (a
  // directory of that many rank files is slow to write and to copy around).
  const bool binary_default = c.output.empty() && in.matrix.ranks > kBinaryDefaultRanks;
  const std::string out = c.output.empty() ? std::filesystem::path(c.matrix).stem().string() + (binary_default ? ".cfp" : ".plan") : c.output;
  if (c.output.empty()) check_plan_output(out);
  PlanOptions o = c.plan;
  o.threads = threads;
  if (c.memory && !c.memory_file.empty()) throw UsageError("give --memory or --memory-file, not both");
  if (c.memory) o.memory.assign(static_cast<std::size_t>(in.matrix.ranks), *c.memory);
  if (!c.memory_file.empty()) {
    o.memory = read_memory_file(c.memory_file);
    if (o.memory.size() != static_cast<std::size_t>(in.matrix.ranks))
      throw InputError(c.memory_file, "", "expected " + std::to_string(in.matrix.ranks) + " byte counts (one per rank), got " + std::to_string(o.memory.size()));
  }
  // The machine and the cost model: the command line's, else the matrix file's, else defaults.
  apply_file_defaults(in, c.matrix, command_line_machine(*c.app, c.node_map), o);
  apply_network_flags(*c.network, o);
  // Refuse up front, with the estimate, a plan that would not fit in memory (planner/limits.h).
  check_plan_memory(in.matrix, o, c.matrix, c.max_memory);
  PlanReport report;
  std::optional<Progress> progress(std::in_place, c, in.matrix.nnz());
  if (progress->on()) o.progress = [&progress](const std::string& pass) { progress->show("pass " + pass); };
  // -o NAME.cfp writes the single-file binary form; anything else a plan directory. Either is
  // written as the plan is made, rank by rank, and appears only once it is whole and verified.
  const bool binary = std::filesystem::path(out).extension() == ".cfp";
  std::unique_ptr<PlanSink> sink;
  if (binary) sink = std::make_unique<BinarySink>(out);
  else sink = std::make_unique<DirSink>(out, in.matrix.ranks, threads);
  const Manifest manifest = make_plan(in.matrix, o, *sink, &report);
  progress.reset();   // erase the progress line before the summary
  if (c.time_passes)
    for (const std::string& line : report.log) std::fprintf(stderr, "commfit: pass %s\n", line.c_str());
  if (c.json) {
    // schemas/plan-summary.schema.json: what was written and its manifest (plan-manifest.schema.json).
    nlohmann::ordered_json j;
    j["format"] = "commfit-plan-summary";
    j["version"] = 1;
    j["output"] = out;
    j["form"] = binary ? "binary" : "directory";
    j["messages"] = in.matrix.nnz();
    j["h"] = report.h;
    j["manifest"] = nlohmann::ordered_json::parse(manifest_json(manifest));
    std::puts(j.dump(1).c_str());
  } else if (!c.quiet) {
    if (!report.comparison.empty()) std::printf("commfit: --strategy auto chose %s from:\n%s", manifest.contract.chosen.c_str(), report.comparison.c_str());
    const CostSummary& cost = manifest.cost;
    std::string what;
    if (!manifest.contract.chosen.empty()) what += " chosen=" + manifest.contract.chosen;
    for (const char* key : {"algorithm", "variant", "method", "chunk"})
      if (auto it = manifest.options.find(key); it != manifest.options.end())
        what += std::string(" ") + key + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
    const std::string form = binary_default ? " (binary: the default above " + std::to_string(kBinaryDefaultRanks) + " ranks; -o NAME.plan writes a directory)" : "";
    std::printf("commfit: wrote %s%s: %d ranks, %lld messages, strategy %s%s\n", out.c_str(), form.c_str(), in.matrix.ranks,
                static_cast<long long>(in.matrix.nnz()), manifest.strategy.c_str(), what.c_str());
    std::printf("  phases %u (h = %lld), estimate %.4g s, bound %.4g s (%s), estimate/bound %.3f, staging %llu B\n",
                manifest.phases, static_cast<long long>(report.h), cost.estimate_s, cost.lower_bound_s, report.bound_term.c_str(),
                cost.lower_bound_s > 0 ? cost.estimate_s / cost.lower_bound_s : 1.0,
                static_cast<unsigned long long>(manifest.staging_bytes_max));
    std::printf("  %s\n", machine_line(o).c_str());
  }
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<PlanCommand>();
  CLI::App* sub = app.add_subcommand("plan", "Plan a communication matrix into a verified per-rank schedule");
  add_matrix_argument(sub, c->matrix, c->input_format, "Matrix file");
  sub->add_option("-o,--output", c->output, "Plan to write: a directory, or one binary file when the name ends in .cfp (default: <matrix stem>.plan, or <matrix stem>.cfp above 4096 ranks)");
  // The planning options (planner/plan_option.h); those only some strategies read are checked
  // against the strategy table once parsed.
  constexpr const char* kStrategyKeys[] = {"strategy", "algorithm", "chunk", "variant", "method", "concurrency", "max-outstanding", "steps"};
  c->app = sub;
  for (const auto& [key, cli] : add_plan_options(sub, c->plan, kStrategyKeys))
    if (const PlanOptionEntry* e = find_plan_option(key); e->strategy_option) c->strategy_options.emplace_back(*e->strategy_option, cli);
  c->strategy_options.emplace_back(
      StrategyOption::memory,
      sub->add_option("--memory", c->memory, "Free bytes of every rank before the exchange, or with a unit (8MiB, 1.5GB; overrides the matrix's \"memory\")")
          ->transform(quantity_transform(Quantity::bytes, true)));
  c->strategy_options.emplace_back(StrategyOption::memory, sub->add_option("--memory-file", c->memory_file, "File of free bytes per rank, one number per rank"));
  constexpr const char* kMachineKeys[] = {"topology"};
  add_plan_options(sub, c->plan, kMachineKeys);
  add_node_map_option(sub, c->node_map);
  constexpr const char* kModelKeys[] = {"seed", "tau", "bandwidth"};
  add_plan_options(sub, c->plan, kModelKeys);
  c->network = add_network_options(sub, c->plan);
  sub->add_option("--max-memory", c->max_memory, "Refuse plans whose estimated memory exceeds BYTES (default: physical memory, or the cgroup's or Slurm's limit when lower)")->transform(quantity_transform(Quantity::bytes, true));
  add_threads_option(sub, c->threads);
  sub->add_flag("--verify-each", c->plan.verify_each, "Run the verifier after every pass (always on in Debug builds)");
  sub->add_option("--print-after", c->plan.print_after, "Print the schedule a pass returns on stderr (a name from --list-passes)");
  sub->add_flag("--time-passes", c->time_passes, "Print each pass's time on stderr");
  sub->add_flag("-q,--quiet", c->quiet, "Print nothing on success");
  sub->add_flag("--json", c->json, "Print the summary as JSON (schemas/plan-summary.schema.json): what was written and its manifest");
  sub->callback([c, &run] { run = [c] { return run_plan(*c); }; });
}

}  // namespace commfit
