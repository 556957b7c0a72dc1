// Replay with no agreement (CountCheck::none, Executor::execute_sized): every strategy of the planner
// on three patterns, each plan loaded under several protocols, then called with counts other than
// its own: every size changed, a new peer, a removed peer, all three, and nothing at all. A whole,
// direct plan must replay each of them byte for byte as MPI_Alltoallv does (gaps included), with no
// collective of its own; a plan that forwards pieces must say it is not whole and direct, refuse
// execute_sized, and still replay its own counts under CountCheck::none.
// Usage: mpirun -np N test_exec_sized
#include "ir/error.h"
#include "planner/pipeline.h"
#include "planner/strategy_table.h"
#include "support.h"

#include <map>
#include <set>

using namespace commfit;
using namespace commfit::mpitest;

namespace {

// The strategies whose plans send every message whole and direct.
const std::set<std::string> kWhole = {"direct", "async", "bounded", "throttled"};

// Variants of m that keep MPI's rule (both ends see the same size): each is a function of the
// matrix alone, so every rank builds the same one.
std::vector<Pattern> variants(const CommMatrix& m) {
  const Rank p = m.ranks;
  std::vector<Message> base = messages_of(m), sizes, added = base, removed, all;
  for (const Message& x : base) {   // every size changed: some grow, some shrink, some to zero
    const std::uint64_t h = splitmix64((std::uint64_t(x.src) << 20) ^ std::uint64_t(x.dst));
    const Bytes b = h % 5 == 0 ? 0 : h % 2 ? x.bytes * 2 + 7 : x.bytes / 3;
    if (b > 0) sizes.push_back({x.src, x.dst, b});
  }
  for (Rank i = 0; i < p; ++i) {   // a new peer for every rank: the first it does not send to
    for (Rank k = 1; k < p; ++k) {
      const Rank j = (i + k) % p;
      if (m.at(i, j) == 0) {
        added.push_back({i, j, Bytes(300 + 11 * i + j)});
        break;
      }
    }
  }
  for (std::size_t k = 0; k < base.size(); ++k)   // every third message gone
    if (k % 3 != 1) removed.push_back(base[k]);
  std::map<std::pair<Rank, Rank>, Bytes> mixed;   // sizes changed, every fourth gone, a ring at distance 2
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (k % 4 != 2) mixed[{sizes[k].src, sizes[k].dst}] = sizes[k].bytes;
  for (Rank i = 0; i < p; ++i) mixed[{i, (i + 2) % p}] = Bytes(5000 + i);
  for (const auto& [pair, bytes] : mixed) all.push_back({pair.first, pair.second, bytes});
  return {{"same", m},
          {"sizes", make_matrix(p, sizes)},
          {"new-peer", make_matrix(p, added)},
          {"removed-peer", make_matrix(p, removed)},
          {"all-three", make_matrix(p, all)},
          {"empty", make_matrix(p, {})}};
}

// One call with matrix c's counts through `ex`, compared with MPI_Alltoallv; `sized`: through
// execute_sized (bytes, 64-bit) instead of execute.
void call(Checker& chk, exec::Executor& ex, const CommMatrix& c, const std::string& what, std::uint64_t iter, bool sized) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Buffers b = make_buffers(c, rank);
  fill_send(b, rank, iter);
  reference(b, MPI_COMM_WORLD);
  if (sized) {
    std::vector<std::int64_t> sb(b.sc.begin(), b.sc.end()), sd(b.sd.begin(), b.sd.end()), rb(b.rc.begin(), b.rc.end()),
        rd(b.rd.begin(), b.rd.end());
    ex.execute_sized(b.send.data(), sb.data(), sd.data(), b.recv.data(), rb.data(), rd.data());
  } else {
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
  }
  const std::string diff = compare(b, rank, iter);
  chk.check(diff.empty(), what + ": " + diff);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker chk(MPI_COMM_WORLD);
  std::vector<Pattern> bases;
  for (Pattern& pat : patterns(size, false))
    if (pat.name == "random-sparse" || pat.name == "hot-rank" || pat.name == "dense") bases.push_back(std::move(pat));
  std::vector<std::pair<std::string, exec::Options>> option_sets;
  for (const Config& cfg : configs())
    if (cfg.name == "post-all" || cfg.name == "handshake" || cfg.name == "cap2" || cfg.name == "persistent" ||
        cfg.name == "post-all+barrier" || cfg.name == "post-all-nopair") {
      exec::Options o = cfg.options;
      o.count_check = exec::CountCheck::none;
      option_sets.emplace_back(cfg.name, o);
    }
  int whole_plans = 0, other_plans = 0;
  std::uint64_t iter = 0;
  for (const Pattern& base : bases) {
    const std::vector<Pattern> calls = variants(base.matrix);
    for (const Strategy* s : strategy_table()) {
      PlanOptions o;
      o.strategy = s->entry.name;
      if (o.strategy == "auto") continue;   // one of the others
      if (o.strategy == "node") o.topology = Topology::parse("full+node2");
      if (s->needs_memory_limits) o.memory.assign(std::size_t(size), std::max<Bytes>(traffic_stats(base.matrix).t, 1));
      const std::string name = base.name + " / " + o.strategy;
      Plan plan;
      try {
        plan = make_plan(base.matrix, o);
      } catch (const UsageError& e) {
        if (rank == 0) std::printf("skipped %s: %s\n", name.c_str(), e.what());
        continue;
      }
      for (const auto& [oname, options] : option_sets) {
        exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, options, name);
        const std::string what = name + " / " + oname;
        if (kWhole.count(o.strategy))
          chk.check(ex.whole_direct(), what + ": not whole and direct, but its strategy sends every message whole and direct");
        if (!ex.whole_direct()) {
          ++other_plans;
          call(chk, ex, base.matrix, what + " / own counts", ++iter, false);
          bool refused = false;
          try {
            call(chk, ex, base.matrix, what + " / execute_sized", ++iter, true);
          } catch (const exec::Error& e) {
            refused = e.kind() == exec::Error::Kind::usage;
          }
          chk.check(refused, what + ": execute_sized of a plan that is not whole and direct was not refused");
          MPI_Barrier(MPI_COMM_WORLD);   // the refused call's reference alltoallv is done on every rank
          continue;
        }
        ++whole_plans;
        // Twice through the variants, the second time in the other order of entry points, so
        // that counts change between calls of the same executor in every direction.
        for (int round = 0; round < 2; ++round)
          for (const Pattern& c : calls)
            call(chk, ex, c.matrix, what + " / " + c.name + (round ? " / execute_sized" : ""), ++iter, round == 1);
      }
    }
  }
  chk.check(whole_plans > 0 && other_plans > 0, "no plan of one of the two kinds: " + std::to_string(whole_plans) + " whole, " +
                                                    std::to_string(other_plans) + " other");
  if (rank == 0) std::printf("%d whole and direct plan loads, %d others\n", whole_plans, other_plans);
  const int rc = chk.finish("test_exec_sized");
  MPI_Finalize();
  return rc;
}
