// commfit gen KIND [options]: seeded test matrices; docs/WORKLOADS.md describes every kind, its
// source and its parameters (the headers in workloads/ say the same beside the code).
//   uniform      Ranka-Wang §7.1: every rank sends and receives exactly --degree messages of --bytes
//   nonuniform   Ranka-Wang §7.2 set 1: the same pattern, (random() mod n) x --unit bytes
//   random       each ordered pair with probability --density, sizes uniform in [1, --max-bytes]
//   dense        every pair, sizes uniform in [1, --max-bytes]
//   hot          everyone sends to --hot, plus a --density background
//   lognormal    pairs with probability --density, lognormal sizes (--median, --sigma)
//   transport    Transportation §9's (k, l) matrices: fan-out k, fraction l of the traffic to (1-l)k ranks
//   hot-spots    the same split with one shared set of hot receivers
//   bader        Bader-Helman-JaJa eq. (7): the h-relation of their §3.1 experiments
//   stencil      2D 5/9-point or 3D 7/27-point halo exchange on a --grid of ranks
//   sample-sort  the last all-to-all of a sample sort on Zipf-skewed keys
//   moe          mixture-of-experts token dispatch, Zipf expert popularity
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/commands.h"
#include "planner/units.h"
#include "workloads/generators.h"
#include "workloads/matrix_output.h"
#include "workloads/skewed.h"
#include "workloads/stencil.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

namespace commfit {
namespace {

constexpr const char* kKinds =
    "uniform, nonuniform, random, dense, hot, lognormal, transport, hot-spots, bader, stencil, sample-sort, moe";

struct GenCommand {
  std::string format;   // json, mtx; "": by the output name
  std::string kind;
  std::string output;
  Rank ranks = 64;
  bool ranks_given = false;
  bool quiet = false;
  int degree = 8;                   // default: 8, at most ranks - 1
  Bytes bytes = 1024;
  Bytes unit = 256;
  double density = 0.1;
  Bytes max_bytes = 1 << 20;
  Rank hot = 0;
  double median = 4096;
  double sigma = 1.5;
  bool self = false;
  int fan_out = 32;                 // transport, hot-spots: k
  double l = 1.0 / 32;              // transport, hot-spots: l
  Bytes traffic = 1 << 20;          // transport, hot-spots: t
  std::int64_t keys_per_rank = 4096;   // bader, sample-sort
  int h_factor = 8;                 // bader: h = factor * n / p
  Bytes key_bytes = 8;              // bader: bytes per key; sample-sort: bytes per record
  std::string grid = "8x8";         // stencil
  int points = 5;                   // stencil
  bool periodic = false;            // stencil
  std::int64_t cells = 64;          // stencil: cells per side of a rank's block
  Bytes value_bytes = 8;            // stencil
  double zipf = 1.1;                // sample-sort, moe
  int oversample = 16;              // sample-sort
  int experts_per_rank = 2;         // moe
  std::int64_t tokens_per_rank = 1024;   // moe
  int top_k = 2;                    // moe
  Bytes token_bytes = 4096;         // moe
  std::uint64_t seed = 1;
};

void need(bool ok, const std::string& what) {
  if (!ok) throw UsageError(what);
}

// "AxB" or "AxBxC" with every axis >= 1.
std::vector<Rank> parse_grid(const std::string& text) {
  std::vector<Rank> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    need(used == part.size() && !part.empty() && v >= 1 && v <= (1 << 24),
         "--grid must be AxB or AxBxC with every axis a positive integer, got \"" + text + "\"");
    out.push_back(static_cast<Rank>(v));
  }
  need(out.size() == 2 || out.size() == 3, "--grid must be AxB or AxBxC, got \"" + text + "\"");
  return out;
}

// Work and memory grow with these products; beyond them a run would take minutes or gigabytes.
constexpr double kMaxWork = 1 << 28;

CommMatrix generate(const GenCommand& c) {
  if (c.kind == "stencil") {
    const std::vector<Rank> grid = parse_grid(c.grid);
    double product = 1;
    for (Rank a : grid) product *= a;
    need(product <= static_cast<double>(kMaxRanks), "--grid has more than " + std::to_string(kMaxRanks) + " ranks");
    need(!c.ranks_given || product == c.ranks, "--ranks disagrees with --grid (give one of them)");
    need(grid.size() == 2 ? c.points == 5 || c.points == 9 : c.points == 7 || c.points == 27,
         "--points must be 5 or 9 on a 2D grid, 7 or 27 on a 3D grid");
    need(c.cells >= 1 && c.value_bytes >= 1, "--cells and --value-bytes must be at least 1");
    need(std::pow(static_cast<double>(c.cells), static_cast<double>(grid.size() - 1)) * static_cast<double>(c.value_bytes) * 27 <= 0x1p53,
         "--cells and --value-bytes give messages over 2^53 bytes");
    return gen_stencil(grid, c.points, c.periodic, c.cells, c.value_bytes);
  }
  need(c.ranks >= 1, "--ranks must be at least 1");
  need(static_cast<std::uint64_t>(c.ranks) <= kMaxRanks, "--ranks must be at most " + std::to_string(kMaxRanks));
  const double p = c.ranks;
  if (c.kind == "uniform" || c.kind == "nonuniform") {
    need(c.degree >= 0 && c.degree <= c.ranks - 1, "--degree must be in 0 .. ranks - 1");
    need(p * std::min(c.degree, c.ranks - 1 - c.degree) <= kMaxWork && (2 * c.degree <= c.ranks - 1 || p * p <= kMaxWork),
         "--ranks x --degree is too large");
    return c.kind == "uniform" ? gen_uniform(c.ranks, c.degree, c.bytes, c.seed) : gen_nonuniform(c.ranks, c.degree, c.unit, c.seed);
  }
  if (c.kind == "random" || c.kind == "dense" || c.kind == "hot" || c.kind == "lognormal") {
    need(c.density >= 0 && c.density <= 1, "--density must be in [0, 1]");
    need(c.max_bytes >= 1 && c.max_bytes <= kMaxMessageBytes, "--max-bytes must be in 1 .. 2^53");
    need(p * p * (c.kind == "dense" ? 1.0 : c.density) <= kMaxWork, "--ranks is too large for this density");
    if (c.kind == "random") return gen_random_sparse(c.ranks, c.density, c.max_bytes, c.seed, c.self);
    if (c.kind == "dense") return gen_dense(c.ranks, c.max_bytes, c.seed);
    if (c.kind == "hot") {
      need(c.hot >= 0 && c.hot < c.ranks, "--hot must be a rank");
      return gen_hot_receiver(c.ranks, c.hot, c.max_bytes, c.density, c.seed);
    }
    need(c.median >= 1 && c.sigma >= 0 && std::isfinite(c.median) && std::isfinite(c.sigma),
         "--median must be >= 1 and --sigma >= 0");
    return gen_lognormal(c.ranks, c.density, c.median, c.sigma, c.seed);
  }
  if (c.kind == "transport" || c.kind == "hot-spots") {
    need(c.ranks >= 2 && c.fan_out >= 1 && c.fan_out <= c.ranks - 1, "--fan-out (k) must be in 1 .. ranks - 1");
    need(c.l > 0 && c.l < 1, "--l must be in (0, 1)");
    need(c.traffic >= 1 && c.traffic <= kMaxMessageBytes, "--traffic must be in 1 .. 2^53");
    need(p * c.fan_out <= kMaxWork, "--ranks x --fan-out is too large");
    if (c.kind == "hot-spots") return gen_hot_spots(c.ranks, c.fan_out, c.l, c.traffic, c.seed);
    need(transport_kl_split(c.fan_out, c.l, c.traffic).every_message_nonempty,
         "--traffic is too small to give each of the k messages at least one byte");
    return gen_transport_kl(c.ranks, c.fan_out, c.l, c.traffic, c.seed);
  }
  if (c.kind == "bader") {
    need(c.keys_per_rank >= 1 && c.h_factor >= 1 && c.key_bytes >= 1, "--keys-per-rank, --h-factor and --key-bytes must be >= 1");
    need(c.h_factor <= c.ranks, "--h-factor must be at most --ranks (h <= n)");
    need(p * p <= kMaxWork && p * static_cast<double>(c.keys_per_rank) * static_cast<double>(c.key_bytes) <= 0x1p53,
         "--ranks or --keys-per-rank is too large");
    return gen_bader_h_relation(c.ranks, c.keys_per_rank, c.h_factor, c.key_bytes);
  }
  if (c.kind == "sample-sort") {
    need(c.keys_per_rank >= 1 && c.key_bytes >= 1 && c.oversample >= 1, "--keys-per-rank, --key-bytes and --oversample must be >= 1");
    need(c.zipf >= 0 && std::isfinite(c.zipf), "--zipf must be >= 0");
    need(p * static_cast<double>(c.keys_per_rank) <= kMaxWork && p * c.oversample <= kMaxWork &&
             static_cast<double>(c.keys_per_rank) * static_cast<double>(c.key_bytes) <= 0x1p53,
         "--ranks x --keys-per-rank is too large");
    return gen_sample_sort_skewed(c.ranks, c.keys_per_rank, c.key_bytes, c.zipf, c.oversample, c.seed);
  }
  if (c.kind == "moe") {
    need(c.experts_per_rank >= 1 && c.tokens_per_rank >= 0 && c.top_k >= 1 && c.token_bytes >= 1,
         "--experts-per-rank, --top-k and --token-bytes must be >= 1, --tokens-per-rank >= 0");
    need(c.top_k <= p * c.experts_per_rank, "--top-k must be at most ranks x --experts-per-rank");
    need(c.zipf >= 0 && std::isfinite(c.zipf), "--zipf must be >= 0");
    need(p * c.experts_per_rank <= kMaxWork && p * static_cast<double>(c.tokens_per_rank) * c.top_k <= kMaxWork &&
             static_cast<double>(c.tokens_per_rank) * static_cast<double>(c.token_bytes) <= 0x1p53,
         "--ranks x --tokens-per-rank x --top-k is too large");
    return gen_moe_dispatch(c.ranks, c.experts_per_rank, c.tokens_per_rank, c.top_k, c.zipf, c.token_bytes, c.seed);
  }
  throw UsageError("unknown generator \"" + c.kind + "\" (choose from: " + kKinds + ")");
}

// Shortest text that reads back as the same double.
std::string num(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// The options that decide the matrix of each kind, as a command line that regenerates it.
std::string kind_options(const GenCommand& c) {
  const auto n = [](auto v) { return std::to_string(v); };
  if (c.kind == "uniform") return " -d " + n(c.degree) + " --bytes " + n(c.bytes);
  if (c.kind == "nonuniform") return " -d " + n(c.degree) + " --unit " + n(c.unit);
  if (c.kind == "random") return " --density " + num(c.density) + " --max-bytes " + n(c.max_bytes) + (c.self ? " --self" : "");
  if (c.kind == "dense") return " --max-bytes " + n(c.max_bytes);
  if (c.kind == "hot") return " --hot " + n(c.hot) + " --density " + num(c.density) + " --max-bytes " + n(c.max_bytes);
  if (c.kind == "lognormal") return " --density " + num(c.density) + " --median " + num(c.median) + " --sigma " + num(c.sigma);
  if (c.kind == "transport" || c.kind == "hot-spots") return " -k " + n(c.fan_out) + " --l " + num(c.l) + " --traffic " + n(c.traffic);
  if (c.kind == "bader") return " --keys-per-rank " + n(c.keys_per_rank) + " --h-factor " + n(c.h_factor) + " --key-bytes " + n(c.key_bytes);
  if (c.kind == "stencil")
    return " --grid " + c.grid + " --points " + n(c.points) + (c.periodic ? " --periodic" : "") + " --cells " + n(c.cells) +
           " --value-bytes " + n(c.value_bytes);
  if (c.kind == "sample-sort")
    return " --keys-per-rank " + n(c.keys_per_rank) + " --key-bytes " + n(c.key_bytes) + " --zipf " + num(c.zipf) + " --oversample " +
           n(c.oversample);
  return " --experts-per-rank " + n(c.experts_per_rank) + " --tokens-per-rank " + n(c.tokens_per_rank) + " --top-k " + n(c.top_k) +
         " --zipf " + num(c.zipf) + " --token-bytes " + n(c.token_bytes);
}

// The options each kind reads, besides --ranks (not stencil), --seed, -o, --format and -q: any other given
// is refused, never ignored.
struct KindOptions {
  const char* kind;
  std::vector<std::string> options;
};
const std::vector<KindOptions>& kind_table() {
  static const std::vector<KindOptions> t = {
      {"uniform", {"degree", "bytes"}},
      {"nonuniform", {"degree", "unit"}},
      {"random", {"density", "max-bytes", "self"}},
      {"dense", {"max-bytes"}},
      {"hot", {"hot", "density", "max-bytes"}},
      {"lognormal", {"density", "median", "sigma"}},
      {"transport", {"fan-out", "l", "traffic"}},
      {"hot-spots", {"fan-out", "l", "traffic"}},
      {"bader", {"keys-per-rank", "h-factor", "key-bytes"}},
      {"stencil", {"grid", "points", "periodic", "cells", "value-bytes", "ranks"}},
      {"sample-sort", {"keys-per-rank", "key-bytes", "zipf", "oversample"}},
      {"moe", {"experts-per-rank", "tokens-per-rank", "top-k", "zipf", "token-bytes"}},
  };
  return t;
}

// Refuses a given option the kind does not read, naming the kinds that do.
void check_kind_options(const std::string& kind, const CLI::App& sub) {
  const auto& table = kind_table();
  const auto own = std::find_if(table.begin(), table.end(), [&](const KindOptions& k) { return k.kind == kind; });
  if (own == table.end()) return;   // generate() names the unknown kind
  for (const CLI::Option* o : sub.get_options()) {
    if (o->count() == 0 || o->get_lnames().empty()) continue;
    const std::string& name = o->get_lnames().front();
    if (name == "output" || name == "format" || name == "seed" || name == "quiet" || name == "help" || (name == "ranks" && kind != "stencil")) continue;
    if (std::find(own->options.begin(), own->options.end(), name) != own->options.end()) continue;
    std::string readers;
    for (const KindOptions& k : table)
      if (std::find(k.options.begin(), k.options.end(), name) != k.options.end()) readers += (readers.empty() ? "" : ", ") + std::string(k.kind);
    throw UsageError("--" + name + " does not apply to gen " + kind + (readers.empty() ? "" : " (it applies to: " + readers + ")"));
  }
}

int run_gen(const GenCommand& c) {
  CommMatrix m = generate(c);
  m.name = c.kind + "_" + std::to_string(m.ranks);
  m.description = "commfit gen " + c.kind + (c.kind == "stencil" ? "" : " -n " + std::to_string(m.ranks)) + kind_options(c) +
                  " --seed " + std::to_string(c.seed) + " (docs/WORKLOADS.md)";
  write_matrix_output(m, c.output, c.format);
  if (!c.quiet && !c.output.empty() && c.output != "-") {
    const TrafficStats s = traffic_stats(m);
    std::printf("%s: %lld ranks, %lld messages, h = %lld, t = %llu bytes -> %s\n", m.name.c_str(), static_cast<long long>(m.ranks),
                static_cast<long long>(s.messages), static_cast<long long>(s.h), static_cast<unsigned long long>(s.t), c.output.c_str());
  }
  return 0;
}

}  // namespace

void add_gen_command(CLI::App& app, Runner& run) {
  auto c = std::make_shared<GenCommand>();
  CLI::App* sub = app.add_subcommand("gen", "Generate a seeded test matrix (the papers' sets and skewed patterns)");
  sub->add_option("KIND", c->kind, kKinds)->required();
  sub->add_option("-o,--output", c->output, "Matrix file to write, - or none: standard output (Matrix Market when it ends in .mtx)");
  sub->add_option("--format", c->format, "Write json or mtx (Matrix Market) whatever the file's name")->check(CLI::IsMember({"json", "mtx"}));
  auto* ranks = sub->add_option("--ranks,-n", c->ranks, "Number of ranks (stencil: the product of --grid)")->capture_default_str();
  auto* degree = sub->add_option("--degree,-d", c->degree, "uniform/nonuniform: messages each rank sends and receives (default: 8, at most ranks - 1)");
  sub->add_option("--bytes", c->bytes, "uniform: message size")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--unit", c->unit, "nonuniform: bytes per unit (msg_unit)")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--density", c->density, "random/hot/lognormal: probability of each pair")->capture_default_str();
  sub->add_option("--max-bytes", c->max_bytes, "random/dense/hot: largest size")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--hot", c->hot, "hot: the receiving rank")->capture_default_str();
  sub->add_option("--median", c->median, "lognormal: median size in bytes")->transform(quantity_transform(Quantity::bytes))->capture_default_str();
  sub->add_option("--sigma", c->sigma, "lognormal: sigma of log size")->capture_default_str();
  sub->add_flag("--self", c->self, "random: include local messages");
  sub->add_option("--fan-out,-k", c->fan_out, "transport/hot-spots: k, ranks each rank sends to")->capture_default_str();
  sub->add_option("--l", c->l, "transport/hot-spots: l, the fraction of the traffic that goes to (1-l)k ranks")->capture_default_str();
  sub->add_option("--traffic", c->traffic, "transport/hot-spots: t, bytes each rank sends (and, transport, receives)")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--keys-per-rank", c->keys_per_rank, "bader/sample-sort: n/p, keys (records) each rank holds")->capture_default_str();
  sub->add_option("--h-factor", c->h_factor, "bader: h = factor x n/p (the paper's 1, 2, 4, 8)")->capture_default_str();
  sub->add_option("--key-bytes", c->key_bytes, "bader/sample-sort: bytes per key (record)")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--grid", c->grid, "stencil: process grid AxB (2D) or AxBxC (3D)")->capture_default_str();
  sub->add_option("--points", c->points, "stencil: 5 or 9 (2D), 7 or 27 (3D)")->capture_default_str();
  sub->add_flag("--periodic", c->periodic, "stencil: wrap around every axis");
  sub->add_option("--cells", c->cells, "stencil: cells per side of each rank's block")->capture_default_str();
  sub->add_option("--value-bytes", c->value_bytes, "stencil: bytes per cell")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--zipf", c->zipf, "sample-sort/moe: Zipf exponent of key / expert popularity")->capture_default_str();
  sub->add_option("--oversample", c->oversample, "sample-sort: sample keys per rank for the splitters")->capture_default_str();
  sub->add_option("--experts-per-rank", c->experts_per_rank, "moe: experts each rank holds")->capture_default_str();
  sub->add_option("--tokens-per-rank", c->tokens_per_rank, "moe: tokens each rank routes")->capture_default_str();
  sub->add_option("--top-k", c->top_k, "moe: experts each token goes to")->capture_default_str();
  sub->add_option("--token-bytes", c->token_bytes, "moe: bytes per token")->transform(quantity_transform(Quantity::bytes, true))->capture_default_str();
  sub->add_option("--seed", c->seed, "Seed")->capture_default_str();
  sub->add_flag("-q,--quiet", c->quiet, "No summary line");
  sub->callback([c, ranks, degree, sub, &run] {
    c->ranks_given = ranks->count() > 0;
    if (degree->count() == 0 && c->ranks >= 1) c->degree = static_cast<int>(std::min<Rank>(8, c->ranks - 1));
    run = [c, sub] {
      check_kind_options(c->kind, *sub);
      return run_gen(*c);
    };
  });
}

}  // namespace commfit
