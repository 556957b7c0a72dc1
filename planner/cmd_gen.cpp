// commfit gen KIND [options]: seeded test matrices (workloads/generators.h names each source).
//   uniform     Ranka-Wang §7.1: every rank sends and receives exactly --degree messages of --bytes
//   nonuniform  Ranka-Wang §7.2 set 1: the same pattern, (random() mod n) x --unit bytes
//   random      each ordered pair with probability --density, sizes uniform in [1, --max-bytes]
//   dense       every pair, sizes uniform in [1, --max-bytes]
//   hot         everyone sends to --hot, plus a --density background
//   lognormal   pairs with probability --density, lognormal sizes (--median, --sigma)
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "workloads/generators.h"

#include <cstdio>
#include <fstream>
#include <memory>

namespace commfit {
namespace {

struct GenCommand {
  std::string kind;
  std::string output;
  Rank ranks = 64;
  int degree = 8;
  Bytes bytes = 1024;
  Bytes unit = 256;
  double density = 0.1;
  Bytes max_bytes = 1 << 20;
  Rank hot = 0;
  double median = 4096;
  double sigma = 1.5;
  bool self = false;
  std::uint64_t seed = 1;
};

CommMatrix generate(const GenCommand& c) {
  if (c.ranks < 1) throw UsageError("--ranks must be at least 1");
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw UsageError(what);
  };
  if (c.kind == "uniform" || c.kind == "nonuniform") {
    need(c.degree >= 0 && c.degree <= c.ranks - 1, "--degree must be in 0 .. ranks - 1");
    return c.kind == "uniform" ? gen_uniform(c.ranks, c.degree, c.bytes, c.seed) : gen_nonuniform(c.ranks, c.degree, c.unit, c.seed);
  }
  need(c.density >= 0 && c.density <= 1, "--density must be in [0, 1]");
  need(c.max_bytes >= 1, "--max-bytes must be at least 1");
  if (c.kind == "random") return gen_random_sparse(c.ranks, c.density, c.max_bytes, c.seed, c.self);
  if (c.kind == "dense") return gen_dense(c.ranks, c.max_bytes, c.seed);
  if (c.kind == "hot") {
    need(c.hot >= 0 && c.hot < c.ranks, "--hot must be a rank");
    return gen_hot_receiver(c.ranks, c.hot, c.max_bytes, c.density, c.seed);
  }
  if (c.kind == "lognormal") {
    need(c.median >= 1 && c.sigma >= 0, "--median must be >= 1 and --sigma >= 0");
    return gen_lognormal(c.ranks, c.density, c.median, c.sigma, c.seed);
  }
  throw UsageError("unknown generator \"" + c.kind + "\" (choose from: uniform, nonuniform, random, dense, hot, lognormal)");
}

int run_gen(const GenCommand& c) {
  CommMatrix m = generate(c);
  m.name = c.kind + "_" + std::to_string(c.ranks);
  m.description = "commfit gen " + c.kind + " --ranks " + std::to_string(c.ranks) + " --seed " + std::to_string(c.seed);
  const std::string text = matrix_json(m);
  if (c.output.empty() || c.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  const std::string tmp = c.output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw UsageError("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, c.output);
  return 0;
}

}  // namespace

void add_gen_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<GenCommand>();
  CLI::App* sub = app.add_subcommand("gen", "Generate a seeded test matrix (the papers' sets and skewed patterns)");
  sub->add_option("KIND", c->kind, "uniform, nonuniform, random, dense, hot, lognormal")->required();
  sub->add_option("-o,--output", c->output, "Matrix file to write (default: standard output)");
  sub->add_option("--ranks,-n", c->ranks, "Number of ranks")->capture_default_str();
  sub->add_option("--degree,-d", c->degree, "uniform/nonuniform: messages each rank sends and receives")->capture_default_str();
  sub->add_option("--bytes", c->bytes, "uniform: message size")->capture_default_str();
  sub->add_option("--unit", c->unit, "nonuniform: bytes per unit (msg_unit)")->capture_default_str();
  sub->add_option("--density", c->density, "random/hot/lognormal: probability of each pair")->capture_default_str();
  sub->add_option("--max-bytes", c->max_bytes, "random/dense/hot: largest size")->capture_default_str();
  sub->add_option("--hot", c->hot, "hot: the receiving rank")->capture_default_str();
  sub->add_option("--median", c->median, "lognormal: median size in bytes")->capture_default_str();
  sub->add_option("--sigma", c->sigma, "lognormal: sigma of log size")->capture_default_str();
  sub->add_flag("--self", c->self, "random: include local messages");
  sub->add_option("--seed", c->seed, "Seed")->capture_default_str();
  sub->callback([c, &run] { run = [c] { return run_gen(*c); }; });
}

}  // namespace commfit
