// Pattern reuse (runtime/adapt.hpp): a plan's structure with new sizes, priced against re-planning.
#include "runtime/adapt.hpp"

#include "backends/exec/exec_support.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace commfit::runtime {

using exec::agree;
using exec::Error;
using exec::Executor;

namespace {

// Per phase, the largest network message this rank sends or receives in it; also its network
// message count (h) and bytes (t), each the larger of the two directions.
struct Shape {
  std::vector<double> phase_max;
  double h = 0, t = 0;
};

Shape shape(const RankSchedule& r) {
  Shape s;
  s.phase_max.assign(r.phases, 0);
  double sent = 0, received = 0, out = 0, in = 0;
  for (const Step& st : r.steps) {
    if (st.op == Op::copy) continue;
    s.phase_max[st.phase] = std::max(s.phase_max[st.phase], static_cast<double>(st.bytes));
    (st.op == Op::send ? sent : received) += static_cast<double>(st.bytes);
    (st.op == Op::send ? out : in) += 1;
  }
  s.h = std::max(out, in);
  s.t = std::max(sent, received);
  return s;
}

// The synchronous model's estimate / its lower bound.
double ratio(const double* phase_max, std::size_t phases, double h, double t, const CostOptions& c) {
  double estimate = 0;
  for (std::size_t k = 0; k < phases; ++k)
    if (phase_max[k] > 0) estimate += c.tau_s + phase_max[k] / c.bandwidth_Bps;
  const double lb = h * c.tau_s + t / c.bandwidth_Bps;
  return lb > 0 ? estimate / lb : 1.0;
}

}  // namespace

std::optional<RankSchedule> adapt_schedule(const RankSchedule& old, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                                           const std::string& fingerprint) {
  if (old.staging_bytes != 0) return std::nullopt;
  const Rank me = old.rank;
  // The new counts must have the plan's nonzero pattern, and the self message both ways.
  std::size_t nonzero_sends = 0, nonzero_recvs = 0;
  for (Rank j = 0; j < old.ranks; ++j) nonzero_sends += sendbytes[j] > 0, nonzero_recvs += recvbytes[j] > 0;
  if (nonzero_sends != old.sends.size() || nonzero_recvs != old.recvs.size() || sendbytes[me] != recvbytes[me]) return std::nullopt;
  RankSchedule r = old;
  r.matrix_fingerprint = fingerprint;
  for (PeerBytes& pb : r.sends) {
    if (sendbytes[pb.peer] <= 0) return std::nullopt;
    pb.bytes = static_cast<Bytes>(sendbytes[pb.peer]);
  }
  for (PeerBytes& pb : r.recvs) {
    if (recvbytes[pb.peer] <= 0) return std::nullopt;
    pb.bytes = static_cast<Bytes>(recvbytes[pb.peer]);
  }
  // Every step must be a whole message straight between its source and destination, at most one
  // per peer and direction: then its new size is the new count.
  std::vector<char> sent(static_cast<std::size_t>(old.ranks), 0), received(sent.size(), 0);
  std::vector<Bytes> old_send(sent.size(), 0), old_recv(sent.size(), 0);
  for (const PeerBytes& pb : old.sends) old_send[static_cast<std::size_t>(pb.peer)] = pb.bytes;
  for (const PeerBytes& pb : old.recvs) old_recv[static_cast<std::size_t>(pb.peer)] = pb.bytes;
  bool copied = false;
  for (Step& s : r.steps) {
    if (s.offset != 0 || s.buffer == Buffer::stage) return std::nullopt;
    switch (s.op) {
      case Op::send:
        if (s.src != me || s.dst != s.peer || sent[s.peer]++ || s.bytes != old_send[s.peer]) return std::nullopt;
        s.bytes = static_cast<Bytes>(sendbytes[s.peer]);
        break;
      case Op::recv:
        if (s.dst != me || s.src != s.peer || received[s.peer]++ || s.bytes != old_recv[s.peer]) return std::nullopt;
        s.bytes = static_cast<Bytes>(recvbytes[s.peer]);
        break;
      case Op::copy:
        if (s.src != me || s.dst != me || copied || s.bytes != old_send[me]) return std::nullopt;
        copied = true;
        s.bytes = static_cast<Bytes>(sendbytes[me]);
        break;
    }
  }
  // Every message of the counts must have its step (a plan covers its matrix; this checks it).
  for (const PeerBytes& pb : r.sends)
    if (pb.peer == me ? !copied : !sent[pb.peer]) return std::nullopt;
  for (const PeerBytes& pb : r.recvs)
    if (pb.peer != me && !received[pb.peer]) return std::nullopt;
  return r;
}

Executor adapt_or_plan(MPI_Comm comm, const RankSchedule& old, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                       const std::string& fingerprint, const InJobOptions& options, double slack, AdaptReport* report) {
  const double start = MPI_Wtime();
  // The counts must be one MPI_Alltoallv's (what each rank sends j is what j expects from it), or
  // the adapted schedules would disagree and load would blame the plan: one MPI_Alltoall of the
  // send counts, each rank comparing what it is sent with what it expects.
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<std::int64_t> sent_to_me(static_cast<std::size_t>(size));
  MPI_Alltoall(sendbytes, 1, MPI_INT64_T, sent_to_me.data(), 1, MPI_INT64_T, comm);
  std::string mismatch;
  for (int i = 0; i < size && mismatch.empty(); ++i)
    if (sent_to_me[static_cast<std::size_t>(i)] != recvbytes[i])
      mismatch = "rank " + std::to_string(i) + " sends " + std::to_string(sent_to_me[static_cast<std::size_t>(i)]) + " bytes to rank " +
                 std::to_string(rank) + ", which expects " + std::to_string(recvbytes[i]) + ": the counts are not one MPI_Alltoallv's";
  agree(comm, Error::Kind::counts, mismatch);
  std::optional<RankSchedule> adapted = adapt_schedule(old, sendbytes, recvbytes, fingerprint);
  // One MPI_MAX over [new phase maxima | old phase maxima | new h, t | old h, t | cannot adapt].
  const std::size_t P = old.phases;
  std::vector<double> mine(2 * P + 5, 0), all(mine.size(), 0);
  const Shape was = shape(old);
  std::copy(was.phase_max.begin(), was.phase_max.end(), mine.begin() + static_cast<std::ptrdiff_t>(P));
  mine[2 * P + 2] = was.h, mine[2 * P + 3] = was.t;
  if (adapted) {
    const Shape now = shape(*adapted);
    std::copy(now.phase_max.begin(), now.phase_max.end(), mine.begin());
    mine[2 * P] = now.h, mine[2 * P + 1] = now.t;
  } else {
    mine[2 * P + 4] = 1;
  }
  MPI_Allreduce(mine.data(), all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_MAX, comm);
  const CostOptions& c = options.plan.cost;
  AdaptReport r;
  r.old_ratio = ratio(all.data() + P, P, all[2 * P + 2], all[2 * P + 3], c);
  if (all[2 * P + 4] == 0) r.new_ratio = ratio(all.data(), P, all[2 * P], all[2 * P + 1], c);
  std::optional<Executor> ex;
  if (all[2 * P + 4] != 0) {
    r.why = "the plan's structure does not carry over (split or forwarded messages, or another sparsity pattern)";
  } else if (r.new_ratio > slack * r.old_ratio) {
    char why[160];
    std::snprintf(why, sizeof why, "adapted, estimate / LB would be %.3f, more than %.2f x the old plan's %.3f", r.new_ratio, slack, r.old_ratio);
    r.why = why;
  } else {
    ex.emplace(Executor::from_schedule(*adapted, comm, options.exec, "adapted plan"));
    r.adapted = true;
    r.schedule = std::move(*adapted);
  }
  if (!ex) {
    InJobReport planned;
    ex.emplace(plan_in_job(comm, sendbytes, recvbytes, options, &planned));
    r.schedule = std::move(planned.schedule);
  }
  r.seconds = MPI_Wtime() - start;
  if (report) *report = std::move(r);
  return std::move(*ex);
}

}  // namespace commfit::runtime
