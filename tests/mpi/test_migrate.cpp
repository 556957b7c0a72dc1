// The migration interface (backends/exec/migrate.hpp) replays memory plans (strategy memory, both
// methods; the relaxation's own pre, main and post phases, no fallback) byte-exactly, and the
// memory a rank really holds stays within its limit: the application keeps its outgoing data and
// what it has received in per-piece blocks, allocated when the executor asks for receive space and
// freed when it is told a piece was sent; at every callback and phase end, application-held bytes
// + staging in use <= original data + free memory.
// Usage: mpirun -np N test_migrate
#include "backends/exec/migrate.hpp"
#include "backends/plan_dir.h"
#include "planner/pipeline.h"
#include "support.h"
#include "workloads/generators.h"

#include <filesystem>
#include <map>
#include <memory>

using namespace commfit;
using namespace commfit::mpitest;

namespace {

// Free memory: `frac` of the bytes moved, spread evenly, plus what each rank must gain.
std::vector<Bytes> tight_memory(const CommMatrix& m, double frac) {
  const TrafficStats st = traffic_stats(m);
  std::vector<Bytes> mem(static_cast<std::size_t>(m.ranks));
  for (Rank j = 0; j < m.ranks; ++j) {
    const Bytes share = static_cast<Bytes>(frac * double(st.total_bytes) / m.ranks);
    mem[j] = std::max<Bytes>(share, st.c[j] > st.r[j] ? st.c[j] - st.r[j] : 0);
  }
  return mem;
}

// The application's side of one rank: its data in blocks, and the bytes it holds.
class App {
 public:
  App(const CommMatrix& m, Rank rank, std::uint64_t iter) : rank_(rank), iter_(iter) {
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (i != rank) return;
      auto& buf = out_[j];
      buf.resize(b);
      for (Bytes k = 0; k < b; ++k) buf[k] = pattern_byte(i, j, k, iter);
      sent_left_[j] = b;
      held_ += b;
      if (j == rank) self_ = b;
    });
    m.for_each([&](Rank i, Rank j, Bytes b) {
      if (j == rank) expect_[i] = b;
    });
  }
  const void* send_data(const exec::MigratePiece& p) {
    auto it = out_.find(p.dst);
    if (p.src != rank_ || it == out_.end() || it->second.size() < p.offset + p.bytes)
      throw std::runtime_error("send_data for a piece this rank does not hold");
    return it->second.data() + p.offset;
  }
  void* receive_space(const exec::MigratePiece& p) {
    if (p.dst != rank_) throw std::runtime_error("receive_space for a piece of another rank");
    if (p.src == rank_) return out_[rank_].data() + p.offset;   // the self message, in place
    auto& block = in_[{p.src, p.offset}];
    if (!block.empty()) throw std::runtime_error("a piece asked for twice");
    block.resize(p.bytes);
    held_ += p.bytes;
    return block.data();
  }
  void sent(const exec::MigratePiece& p) {
    if (p.src == p.dst) return;   // copied in place: nothing to free
    held_ -= p.bytes;
    if ((sent_left_[p.dst] -= p.bytes) == 0) std::vector<unsigned char>().swap(out_[p.dst]);   // really freed
  }
  Bytes held() const { return held_; }
  // Every byte of every incoming message arrived, intact; the self message is unchanged.
  std::string check() const {
    std::map<Rank, Bytes> got;
    for (const auto& [key, block] : in_) {
      const auto [src, offset] = key;
      for (Bytes k = 0; k < block.size(); ++k)
        if (block[k] != pattern_byte(src, rank_, offset + k, iter_))
          return "byte " + std::to_string(offset + k) + " of " + std::to_string(src) + " -> " + std::to_string(rank_) + " differs";
      got[src] += block.size();
    }
    for (const auto& [src, b] : expect_) {
      if (src == rank_) continue;
      if (got[src] != b) return "received " + std::to_string(got[src]) + " of " + std::to_string(b) + " bytes from " + std::to_string(src);
    }
    if (self_) {
      const auto& buf = out_.at(rank_);
      for (Bytes k = 0; k < self_; ++k)
        if (buf[k] != pattern_byte(rank_, rank_, k, iter_)) return "the self message changed";
    }
    return {};
  }

 private:
  Rank rank_;
  std::uint64_t iter_;
  std::map<Rank, std::vector<unsigned char>> out_;
  std::map<Rank, Bytes> sent_left_, expect_;
  std::map<std::pair<Rank, Bytes>, std::vector<unsigned char>> in_;
  Bytes held_ = 0, self_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker chk(MPI_COMM_WORLD);
  const std::filesystem::path dir = shared_scratch("commfit-migrate");
  const Rank p = size;

  std::vector<Pattern> pats;
  pats.push_back({"random-sparse", gen_random_sparse(p, 0.5, 20000, 3, true)});
  pats.push_back({"lognormal", gen_lognormal(p, 0.6, 4000, 1.5, 4)});
  pats.push_back({"hot-receiver", gen_hot_receiver(p, 1, 30000, 0.3, 5)});
  {   // Figure 3 on ranks 0 and 1, the others spare (rank 2 with room to park).
    CommMatrix f = make_matrix(p, {{0, 1, 100000}, {1, 0, 100000}});
    f.memory.assign(static_cast<std::size_t>(p), 0);
    f.memory[0] = f.memory[1] = 1000;
    f.memory[2] = 100000;
    pats.push_back({"figure3", f});
  }
  int plans = 0;
  std::uint64_t iter = 0;
  for (const Pattern& pat : pats) {
    for (double frac : {0.05, 0.25}) {
      if (pat.name == "figure3" && frac != 0.05) continue;
      for (const char* method : {"parking", "relaxation"}) {
        PlanOptions o;
        o.strategy = "memory";
        o.method = method;
        o.memory = pat.matrix.memory.empty() ? tight_memory(pat.matrix, frac) : pat.matrix.memory;
        const std::string name = pat.name + " free " + std::to_string(int(frac * 100)) + "% " + method;
        const Plan plan = make_plan(pat.matrix, o);
        ++plans;
        // The relaxation itself is replayed here, not the parking fallback (these volumes are far
        // above the unit: its rounding premise holds).
        chk.check(std::string(method) != "relaxation" || !plan.manifest.options.contains("fallback"),
                  name + ": the relaxation fell back to parking");
        const TrafficStats st = traffic_stats(pat.matrix);
        // Both from memory and through a plan directory.
        for (int from_file = 0; from_file < 2; ++from_file) {
          std::unique_ptr<exec::Migration> mig;
          if (from_file) {
            if (rank == 0) write_plan_dir(plan, dir / "m.plan");
            MPI_Barrier(MPI_COMM_WORLD);
            mig = std::make_unique<exec::Migration>(exec::Migration::load((dir / "m.plan").string(), MPI_COMM_WORLD));
          } else {
            mig = std::make_unique<exec::Migration>(exec::Migration::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, {}, name));
          }
          App app(pat.matrix, rank, ++iter);
          const Bytes limit = app.held() + o.memory[rank];
          Bytes peak = 0;
          auto sample = [&] { peak = std::max(peak, app.held() + mig->staging_in_use()); };
          exec::MigrateCallbacks cb;
          cb.send_data = [&](const exec::MigratePiece& x) { return app.send_data(x); };
          cb.receive_space = [&](const exec::MigratePiece& x) {
            void* a = app.receive_space(x);
            sample();
            return a;
          };
          cb.sent = [&](const exec::MigratePiece& x) { app.sent(x); };
          cb.phase_end = [&](std::uint32_t) { sample(); };
          sample();
          mig->run(cb);
          const std::string what = name + (from_file ? " (plan directory)" : "");
          const std::string bad = app.check();
          chk.check(bad.empty(), what + ": " + bad);
          chk.check(peak <= limit, what + ": peak " + std::to_string(peak) + " bytes held, limit " + std::to_string(limit));
          chk.check(app.held() == st.c[rank] + pat.matrix.at(rank, rank),
                    what + ": after the run the application holds " + std::to_string(app.held()) + " bytes");
          chk.check(mig->staging_in_use() == 0, what + ": staging still in use after the run");
          chk.check(mig->stats().staging_peak <= mig->stats().staging_bytes, what + ": staging peak beyond the plan's area");
          if (rank == 0 && !from_file)
            std::printf("%-40s %3u phases (lower bound %llu), parked %llu B, rank 0 peak %llu of %llu B\n", name.c_str(),
                        plan.manifest.phases, (unsigned long long)plan.manifest.options["lower_bound_phases"].get<std::uint64_t>(),
                        (unsigned long long)plan.manifest.options["parked_bytes"].get<std::uint64_t>(),
                        (unsigned long long)peak, (unsigned long long)limit);
        }
      }
    }
  }
  chk.check(plans == 14, "expected 14 plans, made " + std::to_string(plans));
  // A callback that fails on one rank fails the run on every rank, with its message.
  {
    PlanOptions o;
    o.strategy = "memory";
    o.memory = tight_memory(pats[0].matrix, 0.1);
    const Plan plan = make_plan(pats[0].matrix, o);
    auto mig = exec::Migration::from_schedule(plan.ranks[rank], MPI_COMM_WORLD, {}, "fault");
    App app(pats[0].matrix, rank, 999);
    exec::MigrateCallbacks cb;
    cb.send_data = [&](const exec::MigratePiece& x) { return app.send_data(x); };
    cb.receive_space = [&](const exec::MigratePiece& x) -> void* { return rank == 1 ? nullptr : app.receive_space(x); };
    cb.sent = [&](const exec::MigratePiece& x) { app.sent(x); };
    std::string msg;
    try {
      mig.run(cb);
    } catch (const exec::Error& e) {
      msg = e.what();
    }
    chk.check(msg.find("rank 1: phase") == 0 && msg.find("no address") != std::string::npos,
              "a null receive space on rank 1 must fail everywhere, got: " + msg);
  }
  if (rank == 0) std::filesystem::remove_all(dir);
  const int status = chk.finish("test_migrate");
  MPI_Finalize();
  return status;
}
