// Replays hand-made plans (tests/mpi/handmade_plans.h) under every protocol and option set, on
// every pattern, and requires receive buffers byte-identical to MPI_Alltoallv on the same send
// buffers. Also: the element-size and MPI_Datatype variants, and the baselines (AC, Alltoallv).
// Usage: mpirun -np N test_exec_replay [--large]   (--large: the 8 MiB patterns instead)
#include "handmade_plans.h"
#include "support.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace commfit;
using namespace commfit::mpitest;

namespace {

// What a caller does between start and finish: arithmetic, and an exchange of its own on another
// communicator (a duplicate of `comm`).
void work_between(MPI_Comm comm) {
  static MPI_Comm other = MPI_COMM_NULL;
  if (other == MPI_COMM_NULL) MPI_Comm_dup(comm, &other);
  double acc = 0;
  for (int i = 1; i < 20000; ++i) acc += 1.0 / i;
  double sum = 0;
  MPI_Allreduce(&acc, &sum, 1, MPI_DOUBLE, MPI_SUM, other);
  int rank = 0, size = 0;
  MPI_Comm_rank(other, &rank);
  MPI_Comm_size(other, &size);
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size, 7, other, MPI_STATUS_IGNORE);
}

// `brief` (the 8 MiB patterns): two calls with new data each, nothing more; the other buffers and
// the split calls are the same code paths, run on the small patterns.
void replay(Checker& chk, const Plan& plan, const Pattern& pat, const Config& cfg, MPI_Comm comm, bool brief = false) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string what = pat.name + " / " + plan.manifest.strategy + " / " + cfg.name;
  exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], comm, cfg.options, what);
  Buffers b = make_buffers(pat.matrix, rank);
  const std::uint64_t calls = brief ? 2 : 3;
  for (std::uint64_t iter = 0; iter < calls; ++iter) {   // reuse: new data every call
    fill_send(b, rank, iter);
    reference(b, comm);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    const std::string diff = compare(b, rank, iter);
    chk.check(diff.empty(), what + " iteration " + std::to_string(iter) + ": " + diff);
  }
  if (brief) {
    chk.check(ex.stats().executes == calls, what + ": stats().executes");
    return;
  }
  // Other buffers, then the first ones again: persistent requests are bound to a call's buffers
  // and must be made again for each change.
  Buffers other = make_buffers(pat.matrix, rank);
  std::uint64_t iter = 3;
  for (Buffers* x : {&other, &b}) {
    fill_send(*x, rank, iter);
    reference(*x, comm);
    ex.execute(x->send.data(), x->sc.data(), x->sd.data(), x->recv.data(), x->rc.data(), x->rd.data());
    const std::string diff = compare(*x, rank, iter);
    chk.check(diff.empty(), what + " iteration " + std::to_string(iter) + " (other buffers): " + diff);
    ++iter;
  }
  // Split calls: start, work meanwhile (arithmetic and a plain MPI exchange on another
  // communicator), finish; byte-identical to MPI_Alltoallv, through both signatures.
  for (int typed = 0; typed < 2; ++typed, ++iter) {
    fill_send(b, rank, iter);
    reference(b, comm);
    if (typed) ex.start(b.send.data(), b.sc.data(), b.sd.data(), MPI_BYTE, b.recv.data(), b.rc.data(), b.rd.data(), MPI_BYTE);
    else ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    chk.check(ex.pending(), what + ": pending() after start");
    work_between(comm);
    ex.finish();
    chk.check(!ex.pending(), what + ": pending() after finish");
    const std::string diff = compare(b, rank, iter);
    chk.check(diff.empty(), what + " iteration " + std::to_string(iter) + " (start/finish): " + diff);
  }
  chk.check(ex.stats().executes == 7, what + ": stats().executes");
}

// Counts in elements: elem_size and MPI_Datatype variants.
void typed(Checker& chk, MPI_Comm comm, Rank p) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<Message> msgs;
  for (const Message& x : messages_of(random_matrix(p, 0.5, 300, 21, true)))
    msgs.push_back({x.src, x.dst, x.bytes * 8});
  const CommMatrix m = make_matrix(p, msgs);
  const Plan plan = two_hop_plan(m);
  for (Bytes unit : {Bytes{4}, Bytes{8}}) {
    exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], comm, {}, "typed");
    Buffers b = make_buffers(m, rank, unit);
    fill_send(b, rank, unit, unit);
    reference(b, comm, unit);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data(),
               static_cast<std::size_t>(unit));
    std::string diff = compare(b, rank, unit, unit);
    chk.check(diff.empty(), "elem_size " + std::to_string(unit) + ": " + diff);

    MPI_Datatype t = unit == 4 ? MPI_INT : MPI_DOUBLE;
    std::fill(b.recv.begin(), b.recv.end(), 0xEE);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), t, b.recv.data(), b.rc.data(), b.rd.data(), t);
    diff = compare(b, rank, unit, unit);
    chk.check(diff.empty(), "MPI_Datatype of " + std::to_string(unit) + " bytes: " + diff);
  }
}

// A call with wrong counts on one rank fails on every rank, leaves that rank's buffers alone, and
// the executor works again on the next call with the right counts.
void failed_call_recovers(Checker& chk, MPI_Comm comm, Rank p) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const CommMatrix m = random_matrix(p, 0.7, 3000, 41, true);
  for (const Config& cfg : configs()) {
    if (cfg.options.count_check == exec::CountCheck::first_call) continue;   // that one aborts
    exec::Executor ex = exec::Executor::from_schedule(two_hop_plan(m).ranks[rank], comm, cfg.options, "recover");
    Buffers b = make_buffers(m, rank);
    fill_send(b, rank, 3);
    const Rank bad = p - 1;
    std::vector<int> rc = b.rc;
    if (rank == bad) rc[0] += 1;
    std::string what = "no error";
    int first = -2;
    try {
      ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), rc.data(), b.rd.data());
    } catch (const exec::Error& e) {
      what = e.what();
      first = e.first_rank();
    }
    chk.check(first == bad && what.find("recvcounts[0] is") != std::string::npos,
              cfg.name + ": failed call raised '" + what + "'");
    if (rank == bad)
      chk.check(std::all_of(b.recv.begin(), b.recv.end(), [](unsigned char x) { return x == 0xEE; }),
                cfg.name + ": the failing rank's receive buffer was written");
    fill_send(b, rank, 4);
    reference(b, comm);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    const std::string diff = compare(b, rank, 4);
    chk.check(diff.empty(), cfg.name + ": call after a failed one: " + diff);
  }
}

// Which exchanges become MPI_Sendrecv pairs: only a rank's whole phase of one send to and one
// receive from the same peer, under post-all without a cap. A one-phase plan (every exchange in
// phase 0) has none: its Sendrecvs would run one after another. The round robin pairs i with
// i + p/2 in phase p/2 - 1 (even p). Both replay byte-exactly under every option set.
void pairing(Checker& chk, MPI_Comm comm, Rank p) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<Message> msgs;
  for (Rank i = 0; i < p; ++i)
    for (Rank j = 0; j < p; ++j)
      if (i != j) msgs.push_back({i, j, Bytes(100 + 7 * i + 3 * j)});
  const CommMatrix m = make_matrix(p, msgs);
  Plan one = empty_plan(m, 1, "handmade-one-phase");
  m.for_each([&](Rank i, Rank j, Bytes b) { add_transfer(one, 0, i, j, i, j, 0, b); });
  finish(one);
  const Pattern pat{"all pairs, distinct sizes", m};
  for (const Config& cfg : configs()) {
    const bool pairs = cfg.options.pairwise && cfg.options.max_outstanding <= 0 &&
                       cfg.options.protocol == exec::Protocol::post_all && cfg.options.max_message >= Bytes(100 + 10 * p);
    for (const Plan& pl : {one, round_robin_plan(m)}) {
      const exec::Executor ex = exec::Executor::from_schedule(pl.ranks[rank], comm, cfg.options, "pairing");
      const bool round_robin = pl.manifest.strategy != one.manifest.strategy;
      const std::uint64_t want = round_robin && pairs && p % 2 == 0 ? 1 : 0;
      chk.check(ex.stats().pairs == want, pl.manifest.strategy + " / " + cfg.name + ": " +
                                             std::to_string(ex.stats().pairs) + " Sendrecv pairs, expected " +
                                             std::to_string(want));
      replay(chk, pl, pat, cfg, comm);
    }
  }
}

// Split calls under CountCheck::none (the plan's counts; a whole, direct plan's other counts run
// sized in start), and the misuses: execute, execute_sized or start while a call is pending, finish
// without start (Error usage on every rank that makes them), a count error raised by start on
// every rank with nothing left in flight.
void split_calls(Checker& chk, MPI_Comm comm, Rank p) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const CommMatrix m = random_matrix(p, 0.7, 3000, 43, true);
  exec::Options none;
  none.count_check = exec::CountCheck::none;
  for (const Plan& plan : {round_robin_plan(m), two_hop_plan(m)}) {
    exec::Executor ex = exec::Executor::from_schedule(plan.ranks[rank], comm, none, "split");
    Buffers b = make_buffers(m, rank);
    fill_send(b, rank, 11);
    reference(b, comm);
    ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    work_between(comm);
    ex.finish();
    const std::string diff = compare(b, rank, 11);
    chk.check(diff.empty(), plan.manifest.strategy + " / count_check none (start/finish): " + diff);
  }
  {   // other counts than the plan's: a whole, direct plan replays them sized
    std::vector<Message> msgs;
    for (Rank i = 0; i < p; ++i)
      for (Rank j = 0; j < p; ++j)
        if (i != j) msgs.push_back({i, j, Bytes(50 + i + j)});
    exec::Executor ex = exec::Executor::from_schedule(round_robin_plan(make_matrix(p, msgs)).ranks[rank], comm, none, "split sized");
    Buffers b = make_buffers(m, rank);
    fill_send(b, rank, 12);
    reference(b, comm);
    ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    work_between(comm);
    ex.finish();
    const std::string diff = compare(b, rank, 12);
    chk.check(diff.empty(), "count_check none, other counts (start/finish): " + diff);
  }
  exec::Executor ex = exec::Executor::from_schedule(two_hop_plan(m).ranks[rank], comm, {}, "split misuse");
  Buffers b = make_buffers(m, rank);
  auto usage = [&](const std::string& name, const std::string& expect, const std::function<void()>& f) {
    std::string what = "no error";
    bool is_usage = false;
    try {
      f();
    } catch (const exec::Error& e) {
      what = e.what();
      is_usage = e.kind() == exec::Error::Kind::usage;
    }
    chk.check(is_usage && what.find(expect) != std::string::npos, name + " raised '" + what + "'");
  };
  usage("finish without start", "finish was called without a pending split call", [&] { ex.finish(); });
  fill_send(b, rank, 13);
  reference(b, comm);
  ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
  const std::string pending = "while a split call is pending";
  usage("start while pending", pending, [&] { ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data()); });
  usage("execute while pending", pending, [&] { ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data()); });
  ex.finish();
  chk.check(compare(b, rank, 13).empty(), "the pending call survives the refused ones");
  usage("finish twice", "without a pending split call", [&] { ex.finish(); });
  // A count error in start: raised on every rank, nothing pending, the next call works.
  std::vector<int> rc = b.rc;
  if (rank == p - 1) rc[0] += 1;
  std::string what = "no error";
  try {
    ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), rc.data(), b.rd.data());
  } catch (const exec::Error& e) {
    what = e.what();
  }
  chk.check(what.find("recvcounts[0] is") != std::string::npos && !ex.pending(), "a failed start raised '" + what + "'");
  fill_send(b, rank, 14);
  reference(b, comm);
  ex.start(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
  ex.finish();
  chk.check(compare(b, rank, 14).empty(), "start/finish after a failed start");
}

// The AC baseline (with and without a cap) and the MPI_Alltoallv wrapper the benchmarks use.
void baselines(Checker& chk, const Pattern& pat, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  for (int cap : {0, 2, 5}) {
    exec::AllAtOnce ac(comm, cap);
    Buffers b = make_buffers(pat.matrix, rank);
    fill_send(b, rank, 7);
    reference(b, comm);
    ac.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    std::string diff = compare(b, rank, 7);
    chk.check(diff.empty(), pat.name + " / AC cap " + std::to_string(cap) + ": " + diff);
  }
  Buffers b = make_buffers(pat.matrix, rank);
  fill_send(b, rank, 8);
  reference(b, comm);
  exec::alltoallv_bytes(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data(), comm);
  chk.check(compare(b, rank, 8).empty(), pat.name + " / alltoallv_bytes");
}

// Faults one rank can find in its own schedule (check_rank_schedule, ir/plan.h), each made on
// one rank of a two-hop plan of all pairs: load fails on every rank, naming that rank and the fault.
void load_faults(Checker& chk, MPI_Comm comm, Rank p) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<Message> msgs;
  for (Rank i = 0; i < p; ++i)
    for (Rank j = 0; j < p; ++j) msgs.push_back({i, j, Bytes(500 + 7 * i + 3 * j)});
  const Plan plan = two_hop_plan(make_matrix(p, msgs));
  Rank bad = 0;   // a rank staging at least two pieces (every rank computes the same)
  while (bad + 1 < p && std::count_if(plan.ranks[bad].steps.begin(), plan.ranks[bad].steps.end(), [](const Step& s) {
           return s.op == Op::recv && s.buffer == Buffer::stage;
         }) < 2)
    ++bad;
  auto first = [](RankSchedule& rs, bool (*pick)(const Step&)) -> Step& {
    return *std::find_if(rs.steps.begin(), rs.steps.end(), pick);
  };
  auto staged_recv = [](const Step& s) { return s.op == Op::recv && s.buffer == Buffer::stage; };
  auto staged_send = [](const Step& s) { return s.op == Op::send && s.buffer == Buffer::stage; };
  auto buffer_recv = [](const Step& s) { return s.op == Op::recv && s.buffer == Buffer::recv; };
  const std::vector<std::pair<std::string, std::function<void(RankSchedule&)>>> faults = {
      {"steps are not in phase order", [](RankSchedule& rs) { std::swap(rs.steps.front(), rs.steps.back()); }},
      {"is not below the phase count", [](RankSchedule& rs) { rs.steps.back().phase = rs.phases; }},
      {"a step moves at least one byte", [&](RankSchedule& rs) { first(rs, buffer_recv).bytes = 0; }},
      {"only the message's dst receives into its receive buffer", [&](RankSchedule& rs) {
         Step& s = first(rs, staged_recv);
         s.buffer = Buffer::recv;
         s.stage_offset = kNoStage;
       }},
      {"lies outside the rank's", [](RankSchedule& rs) { rs.staging_bytes -= 1; }},
      {"are never received", [&](RankSchedule& rs) { first(rs, buffer_recv).bytes -= 1; }},
      {"which it does not hold from an earlier phase", [&](RankSchedule& rs) {
         Step& s = first(rs, staged_send);   // forwarded in the phase it arrives
         s.phase -= 1;
         std::stable_sort(rs.steps.begin(), rs.steps.end(), step_less);
       }},
      {"overlaps a live staged piece", [&](RankSchedule& rs) {
         // Move the two-hop plan's second staged piece onto the first (both arrive in phase 1
         // and leave in phase 2).
         std::vector<Step*> in;
         for (Step& s : rs.steps)
           if (staged_recv(s)) in.push_back(&s);
         if (in.size() >= 2) in[1]->stage_offset = in[0]->stage_offset;
       }},
  };
  for (const auto& [expect, edit] : faults) {
    RankSchedule rs = plan.ranks[rank];
    if (rank == bad) edit(rs);
    std::string what = "no error";
    int first_rank = -2;
    try {
      exec::Executor::from_schedule(rs, comm, {}, "fault");
    } catch (const exec::Error& e) {
      what = e.what();
      first_rank = e.first_rank();
    }
    chk.check(first_rank == bad && what.find(expect) != std::string::npos,
              "load of a schedule with the fault '" + expect + "' raised '" + what + "'");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool large = argc > 1 && std::strcmp(argv[1], "--large") == 0;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker chk(MPI_COMM_WORLD);
  for (const Pattern& pat : patterns(size, large)) {
    for (const Plan& plan : {round_robin_plan(pat.matrix), two_hop_plan(pat.matrix)})
      for (const Config& cfg : configs(large ? 1000 : 1)) replay(chk, plan, pat, cfg, MPI_COMM_WORLD, large);
    baselines(chk, pat, MPI_COMM_WORLD);
  }
  typed(chk, MPI_COMM_WORLD, size);
  if (!large) pairing(chk, MPI_COMM_WORLD, size);
  failed_call_recovers(chk, MPI_COMM_WORLD, size);
  if (!large) split_calls(chk, MPI_COMM_WORLD, size);
  if (!large) load_faults(chk, MPI_COMM_WORLD, size);
  const int status = chk.finish(large ? "test_exec_replay --large" : "test_exec_replay");
  MPI_Finalize();
  return status;
}
