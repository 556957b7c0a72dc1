// The plan as a stream (planner/pipeline.h, passes/lower.h, backends/plan_dir.h): make_plan hands
// a sink every rank schedule in rank order and then the manifest, the same plan the Plan form
// keeps; a rank lowered alone is the rank of the whole lowering, in any order; a directory writer
// abandoned before finish() leaves nothing behind, and its threads write the same files.
#include "backends/plan_dir.h"
#include "ir/random.h"
#include "passes/lower.h"
#include "passes/verify.h"
#include "planner/pipeline.h"
#include "workloads/generators.h"
#include "support/run_command.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

using namespace commfit;
namespace fs = std::filesystem;

namespace {

// Records what a sink is given, and in which order.
class Recording : public PlanSink {
 public:
  void rank(RankSchedule&& rs) override {
    CHECK_FALSE(finished);
    ranks.push_back(std::move(rs));
  }
  void finish(const Manifest& m) override {
    CHECK_FALSE(finished);
    finished = true;
    manifest = m;
  }
  std::vector<RankSchedule> ranks;
  Manifest manifest;
  bool finished = false;
};

bool same(const RankSchedule& a, const RankSchedule& b) {
  return a.rank == b.rank && a.ranks == b.ranks && a.phases == b.phases && a.matrix_fingerprint == b.matrix_fingerprint &&
         a.staging_bytes == b.staging_bytes && a.max_outstanding == b.max_outstanding && a.sends == b.sends && a.recvs == b.recvs &&
         a.steps == b.steps;
}

std::string file_text(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("make_plan streams every rank in order, then the manifest: the plan the Plan form keeps") {
  struct Case {
    const char* strategy;
    const char* topology;
    bool memory;
  };
  for (const Case c : {Case{"direct", "full", false}, Case{"async", "full", false}, Case{"bounded", "full", false}, Case{"two-stage", "full", false},
                       Case{"memory", "full", true}, Case{"node", "full+node2", false}, Case{"direct", "torus:4x4", false}}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(c.strategy);
      CAPTURE(seed);
      CommMatrix m = gen_random_sparse(16, 0.3, 5000, seed, seed == 2);
      PlanOptions o;
      o.strategy = c.strategy;
      o.topology = Topology::parse(c.topology);
      if (c.memory) m.memory.assign(16, 1u << 20);
      const Plan kept = make_plan(m, o);
      Recording sink;
      const Manifest mf = make_plan(m, o, sink);
      REQUIRE(sink.finished);
      REQUIRE(sink.ranks.size() == kept.ranks.size());
      for (std::size_t r = 0; r < kept.ranks.size(); ++r) {
        CHECK(sink.ranks[r].rank == static_cast<Rank>(r));
        CHECK(same(sink.ranks[r], kept.ranks[r]));
      }
      CHECK(manifest_json(mf) == manifest_json(kept.manifest));
      CHECK(manifest_json(sink.manifest) == manifest_json(kept.manifest));
      CHECK(mf.plan_hash == plan_hash(kept.ranks));
    }
  }
}

TEST_CASE("a rank lowered alone is that rank of the whole lowering, whatever order the ranks come in") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const CommMatrix m = gen_random_sparse(24, 0.25, 4096, seed, true);
    PlanOptions o;
    o.strategy = seed % 2 ? "two-stage" : "direct";   // forwarding plans stage pieces: the staging area is the rank's own
    const Plan whole = make_plan(m, o);
    Schedule s;   // the plan's schedule again: its sends are the transfers, its copies the copies
    s.ranks = m.ranks;
    s.phases = whole.manifest.phases;
    for (const RankSchedule& rs : whole.ranks)
      for (const Step& st : rs.steps) {
        if (st.op == Op::send) s.transfers.push_back({st.phase, rs.rank, st.peer, {st.src, st.dst, st.offset, st.bytes}});
        if (st.op == Op::copy) s.copies.push_back({st.src, st.dst, st.offset, st.bytes});
      }
    canonicalize(s);
    const Plan lowered = lower(s, m);
    const MatrixColumns columns = matrix_columns(m);
    Lowering lowering(s, m, columns, matrix_fingerprint(m));
    std::vector<Rank> order(static_cast<std::size_t>(m.ranks));
    std::iota(order.begin(), order.end(), 0);
    Rng rng(seed);
    for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[static_cast<std::size_t>(rng.below(k))]);
    RankSchedule rs;
    for (Rank r : order) {
      lowering.rank(r, rs);
      CHECK(same(rs, lowered.ranks[static_cast<std::size_t>(r)]));
      // The plan's own lowering, except for the request window make_plan adds.
      RankSchedule expected = whole.ranks[static_cast<std::size_t>(r)];
      expected.max_outstanding = 0;
      CHECK(same(rs, expected));
    }
  }
}

TEST_CASE("a plan directory writer abandoned before finish leaves nothing; its threads write the same files") {
  const CommMatrix m = gen_random_sparse(300, 0.02, 2048, 5);
  const Plan plan = make_plan(m, {});
  const fs::path dir = test::fresh_path("abandoned");
  {
    PlanDirWriter writer(dir, plan.manifest.ranks, 4);
    for (std::size_t r = 0; r < plan.ranks.size() / 2; ++r) writer.add(RankSchedule(plan.ranks[r]));
  }   // an exception between add() and finish() in make_plan ends like this
  CHECK_FALSE(fs::exists(dir));
  for (const fs::directory_entry& e : fs::directory_iterator(dir.parent_path()))
    CHECK(e.path().filename().string().find(dir.filename().string() + ".tmp") == std::string::npos);

  const fs::path one = test::fresh_path("one"), four = test::fresh_path("four");
  write_plan_dir(plan, one, 1);
  write_plan_dir(plan, four, 4);   // 300 ranks: four threads of 64 or more ranks each
  std::size_t files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(one)) {
    ++files;
    CHECK(file_text(e.path()) == file_text(four / e.path().filename()));
  }
  CHECK(files == plan.ranks.size() + 1);
  CHECK(verify(read_plan_dir(four), m, {}).empty());
  fs::remove_all(one);
  fs::remove_all(four);
}
