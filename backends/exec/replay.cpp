// Executing a loaded plan: the count check, then the phases under the chosen protocol. Nothing
// here allocates except on an error path: every array was sized at load (load.cpp).
#include "backends/exec/executor_impl.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace commfit::exec {
namespace {

// Posts one message of `bytes` bytes: MPI_BYTE up to INT_MAX; beyond (a sized call's message can
// be larger than any the plan split) whole GiB blocks and the rest, a type both ends build alike
// from the same size.
void post(bool send, char* at, std::int64_t bytes, int peer, int tag, MPI_Comm comm, MPI_Request* req) {
  if (bytes <= INT_MAX) {
    if (send) MPI_Isend(at, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, req);
    else MPI_Irecv(at, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, req);
    return;
  }
  constexpr std::int64_t gib = std::int64_t{1} << 30;
  MPI_Datatype block = MPI_DATATYPE_NULL, whole = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(gib), MPI_BYTE, &block);
  const int lengths[2] = {static_cast<int>(bytes / gib), static_cast<int>(bytes % gib)};
  const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(bytes / gib * gib)};
  const MPI_Datatype types[2] = {block, MPI_BYTE};
  MPI_Type_create_struct(lengths[1] > 0 ? 2 : 1, lengths, displs, types, &whole);
  MPI_Type_commit(&whole);
  if (send) MPI_Isend(at, 1, whole, peer, tag, comm, req);
  else MPI_Irecv(at, 1, whole, peer, tag, comm, req);
  MPI_Type_free(&whole);   // freed when the message completes
  MPI_Type_free(&block);
}
void irecv(const NetOp& op, const Call& c, char* stage, MPI_Comm comm, MPI_Request* req) {
  post(false, op_address(op, c, stage), op_bytes(op, c), op.peer, op.tag, comm, req);
}
void isend(const NetOp& op, const Call& c, char* stage, MPI_Comm comm, MPI_Request* req) {
  post(true, op_address(op, c, stage), op_bytes(op, c), op.peer, op.tag, comm, req);
}

// Held while a call runs: a second thread calling the same Executor meanwhile gets Error (usage)
// on its rank (its collectives would interleave with the first call's and hang every rank).
struct OneCall {
  std::atomic<bool>& busy;
  OneCall(Executor::Impl& x, const char* what) : busy(x.busy) {
    if (busy.exchange(true, std::memory_order_acquire))
      throw Error(Error::Kind::usage, x.rank,
                  "rank " + std::to_string(x.rank) + ": " + what + " was called while another thread is inside execute on the same "
                  "Executor; an Executor runs one call at a time (give each thread its own Executor: each has its own communicator)");
  }
  ~OneCall() { busy.store(false, std::memory_order_release); }
};

// execute, execute_sized and start while a split call is pending: refused on the calling rank (the
// call's messages are still in flight on the executor's communicator, and its buffers in use).
void refuse_if_pending(const Executor::Impl& x, const char* what) {
  if (x.split.pending)
    throw Error(Error::Kind::usage, x.rank,
                "rank " + std::to_string(x.rank) + ": " + what + " was called while a split call is pending (start was "
                "called and finish not yet); an Executor has one call in flight at a time: call finish first");
}

}  // namespace

void Executor::Impl::abort_alone(const Call& c, const std::string* usage_error, const char* mode) {
  std::string msg = usage_error ? *usage_error : std::string();
  if (!usage_error) counts_match(c, &msg);
  std::fprintf(stderr,
               "commfit exec: error: rank %d: %s\n(%s: the other ranks cannot be told without a collective, so the job is "
               "aborted)\n",
               rank, msg.c_str(), mode);
  MPI_Abort(comm, 3);
  std::abort();   // MPI_Abort does not return
}

bool contiguous(MPI_Datatype t, int* size) {
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size(t, size);
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_get_true_extent(t, &tlb, &textent);
  return *size > 0 && lb == 0 && tlb == 0 && extent == *size && textent == *size;
}

bool Executor::Impl::counts_match(const Call& c, std::string* msg) const {
  auto check = [&](const int* counts, std::int64_t scale, const std::vector<std::int64_t>& expect,
                   bool send) {
    for (int i = 0; i < size; ++i) {
      const std::int64_t got = std::int64_t{counts[i]} * scale;
      if (got == expect[i]) continue;
      if (msg) {
        const int src = send ? rank : i, dst = send ? i : rank;
        *msg = origin + ": " + (send ? "sendcounts[" : "recvcounts[") + std::to_string(i) + "] is " +
               std::to_string(got) + " bytes but the plan's message " + std::to_string(src) + " -> " +
               std::to_string(dst) + " has " + std::to_string(expect[i]) +
               " bytes: the plan was made for other counts (matrix " + fingerprint + ")";
      }
      return false;
    }
    return true;
  };
  return check(c.scounts, c.scount_scale, expect_send, true) &&
         check(c.rcounts, c.rcount_scale, expect_recv, false);
}

void Executor::Impl::run_copies(const PhaseOps& ph, const Call& c) {
  if (ph.copy_begin == ph.copy_end || c.dry_sdispls || c.sized_send) return;   // a sized call copies once
  const char* from = c.sbuf + c.sdispls[rank] * c.sdispl_scale;
  char* to = c.rbuf + c.rdispls[rank] * c.rdispl_scale;
  for (std::uint32_t i = ph.copy_begin; i < ph.copy_end; ++i)
    std::memcpy(to + copies[i].offset, from + copies[i].offset, copies[i].bytes);
}

void Executor::Impl::run_packs(const PhaseOps& ph, const Call& c) {
  for (std::uint32_t i = ph.pack_begin; i < ph.pack_end; ++i)
    std::memcpy(stage.data() + packs[i].pack, op_address(packs[i].piece, c, stage.data()), static_cast<std::size_t>(packs[i].piece.count));
}

void Executor::Impl::run_unpacks(const PhaseOps& ph, const Call& c) {
  for (std::uint32_t i = ph.unpack_begin; i < ph.unpack_end; ++i)
    std::memcpy(op_address(unpacks[i].piece, c, stage.data()), stage.data() + unpacks[i].pack, static_cast<std::size_t>(unpacks[i].piece.count));
}

void Executor::Impl::run_pairs(const PhaseOps& ph, const Call& c) {
  // At most one (load.cpp: the rank's whole phase), after the peer has posted or paired its side.
  for (std::uint32_t i = ph.pair_begin; i < ph.pair_end; ++i) {
    const NetOp& s = pair_sends[i];
    const NetOp& r = pair_recvs[i];
    if (c.sized_send) {   // sizes of this call, possibly beyond an int
      MPI_Request two[2];
      irecv(r, c, stage.data(), comm, &two[0]);
      isend(s, c, stage.data(), comm, &two[1]);
      MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
      continue;
    }
    MPI_Sendrecv(op_address(s, c, stage.data()), s.count, MPI_BYTE, s.peer, s.tag,
                 op_address(r, c, stage.data()), r.count, MPI_BYTE, r.peer, r.tag, comm, MPI_STATUS_IGNORE);
  }
}

void Executor::Impl::run_phase_post_all(const PhaseOps& ph, const Call& c) {
  int n = 0;
  for (std::uint32_t i = ph.recv_begin; i < ph.recv_end; ++i) irecv(recvs[i], c, stage.data(), comm, &requests[n++]);
  for (std::uint32_t i = ph.send_begin; i < ph.send_end; ++i) isend(sends[i], c, stage.data(), comm, &requests[n++]);
  run_copies(ph, c);
  run_pairs(ph, c);
  if (n > 0) MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
}

void Executor::Impl::run_phase_handshake(const PhaseOps& ph, const Call& c) {
  // requests: [data receives | ready sends | ready receives | data sends]
  const int nr = static_cast<int>(ph.recv_end - ph.recv_begin);
  const int ns = static_cast<int>(ph.send_end - ph.send_begin);
  MPI_Request* data_recv = requests.data();
  MPI_Request* ready_send = data_recv + nr;
  MPI_Request* ready_recv = ready_send + nr;
  MPI_Request* data_send = ready_recv + ns;
  for (int i = 0; i < nr; ++i) irecv(recvs[ph.recv_begin + i], c, stage.data(), comm, &data_recv[i]);
  for (int i = 0; i < nr; ++i) {
    const NetOp& op = recvs[ph.recv_begin + i];
    MPI_Isend(&ready_byte, 0, MPI_BYTE, op.peer, op.tag + 1, comm, &ready_send[i]);
  }
  for (int i = 0; i < ns; ++i) {
    const NetOp& op = sends[ph.send_begin + i];
    MPI_Irecv(&ready_byte, 0, MPI_BYTE, op.peer, op.tag + 1, comm, &ready_recv[i]);
  }
  run_copies(ph, c);   // no pairs under the handshake (load.cpp)
  // Sends go out in step order, each once its receiver is ready: the order both sides agreed on.
  for (int i = 0; i < ns; ++i) {
    MPI_Wait(&ready_recv[i], MPI_STATUS_IGNORE);
    isend(sends[ph.send_begin + i], c, stage.data(), comm, &data_send[i]);
  }
  if (nr + ns > 0) MPI_Waitall(2 * (nr + ns), requests.data(), MPI_STATUSES_IGNORE);
}

void Executor::Impl::run_phase_window(const PhaseOps& ph, const Call& c) {
  // At most `cap` requests in flight, ops posted in the global (rank pair, direction, sequence)
  // order: the smallest unfinished transfer is always posted on both of its sides.
  run_copies(ph, c);
  int posted = 0;
  for (std::uint32_t i = ph.window_begin; i < ph.window_end; ++i) {
    int slot = posted;
    if (posted < cap) {
      ++posted;
    } else {
      MPI_Waitany(cap, requests.data(), &slot, MPI_STATUS_IGNORE);
    }
    const NetOp& op = window[i];
    if (op.is_send) isend(op, c, stage.data(), comm, &requests[slot]);
    else irecv(op, c, stage.data(), comm, &requests[slot]);
  }
  if (posted > 0) MPI_Waitall(posted, requests.data(), MPI_STATUSES_IGNORE);
}

Call Executor::Impl::dry_call() {
  if (dry_sdispls.empty()) {
    dry_sdispls.assign(size, 0);
    dry_rdispls.assign(size, 0);
    std::int64_t s = 0, r = 0;
    for (int i = 0; i < size; ++i) {
      dry_sdispls[i] = s;
      dry_rdispls[i] = r;
      s += expect_send[i];
      r += expect_recv[i];
    }
    dry_send.assign(std::size_t(s) + 1, 0);
    dry_recv.assign(std::size_t(r) + 1, 0);
  }
  Call d;
  d.sbuf = dry_send.data();
  d.rbuf = dry_recv.data();
  d.dry_sdispls = dry_sdispls.data();
  d.dry_rdispls = dry_rdispls.data();
  return d;
}

void Executor::Impl::free_persistent() {
  for (MPI_Request& r : persistent)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  bound = false;
}

void Executor::Impl::bind_persistent(const Call& c) {
  // Bound to these buffers and byte displacements already? (O(p), no allocation.)
  bool same = bound && c.sbuf == bound_sbuf && c.rbuf == bound_rbuf;
  for (int i = 0; same && i < size; ++i)
    same = c.sdispls[i] * c.sdispl_scale == bound_sdispls[i] && c.rdispls[i] * c.rdispl_scale == bound_rdispls[i];
  if (same) return;
  free_persistent();
  if (persistent_begin.empty()) {   // the first call: size everything once
    std::size_t total = 0;
    for (const PhaseOps& ph : phase_ops)
      total += (ph.recv_end - ph.recv_begin) + (ph.send_end - ph.send_begin) + 2 * std::size_t{ph.pair_end - ph.pair_begin};
    persistent.assign(total, MPI_REQUEST_NULL);
    persistent_begin.assign(phase_ops.size() + 1, 0);
    bound_sdispls.assign(static_cast<std::size_t>(size), 0);
    bound_rdispls.assign(static_cast<std::size_t>(size), 0);
  }
  std::uint32_t n = 0;
  char* st = stage.data();
  auto recv_init = [&](const NetOp& op) { MPI_Recv_init(op_address(op, c, st), op.count, MPI_BYTE, op.peer, op.tag, comm, &persistent[n++]); };
  auto send_init = [&](const NetOp& op) { MPI_Send_init(op_address(op, c, st), op.count, MPI_BYTE, op.peer, op.tag, comm, &persistent[n++]); };
  for (std::size_t k = 0; k < phase_ops.size(); ++k) {
    const PhaseOps& ph = phase_ops[k];
    persistent_begin[k] = n;
    for (std::uint32_t i = ph.recv_begin; i < ph.recv_end; ++i) recv_init(recvs[i]);
    for (std::uint32_t i = ph.pair_begin; i < ph.pair_end; ++i) recv_init(pair_recvs[i]);
    for (std::uint32_t i = ph.send_begin; i < ph.send_end; ++i) send_init(sends[i]);
    for (std::uint32_t i = ph.pair_begin; i < ph.pair_end; ++i) send_init(pair_sends[i]);
  }
  persistent_begin[phase_ops.size()] = n;
  bound_sbuf = c.sbuf, bound_rbuf = c.rbuf;
  for (int i = 0; i < size; ++i) bound_sdispls[i] = c.sdispls[i] * c.sdispl_scale, bound_rdispls[i] = c.rdispls[i] * c.rdispl_scale;
  bound = true;
}

void Executor::Impl::run_phase_persistent(std::size_t k, const PhaseOps& ph, const Call& c) {
  const std::uint32_t first = persistent_begin[k], n = persistent_begin[k + 1] - first;
  if (n > 0) MPI_Startall(static_cast<int>(n), persistent.data() + first);
  run_copies(ph, c);
  if (n > 0) MPI_Waitall(static_cast<int>(n), persistent.data() + first, MPI_STATUSES_IGNORE);
}

void Executor::Impl::replay(const Call& c, std::size_t from) {
  // Persistent requests for the post-all protocol without a window, except for a failed call's
  // replay into scratch buffers (which would only unbind them).
  const bool use_persistent = options.persistent && cap == 0 && !c.dry_sdispls && !c.sized_send;
  if (use_persistent) bind_persistent(c);
  auto run_phase = [&](std::size_t k) {
    const PhaseOps& ph = phase_ops[k];
    run_packs(ph, c);
    if (use_persistent) run_phase_persistent(k, ph, c);
    else if (cap > 0) run_phase_window(ph, c);
    else if (options.protocol == Protocol::handshake) run_phase_handshake(ph, c);
    else run_phase_post_all(ph, c);
    run_unpacks(ph, c);
  };
  if (!options.barrier) {
    for (std::size_t k = from; k < phase_ops.size(); ++k) run_phase(k);
    return;
  }
  // Synchronous phases: every phase of the plan ends in a barrier, those without steps here too.
  for (std::size_t p = 0, k = 0; p < phases; ++p) {
    if (k < phase_ops.size() && phase_ops[k].phase == p) run_phase(k++);
    MPI_Barrier(comm);
  }
}

Call Executor::Impl::sized_call(const Call& c) {
  for (int j = 0; j < size; ++j) {
    sized_send[j] = std::int64_t{c.scounts[j]} * c.scount_scale;
    sized_recv[j] = std::int64_t{c.rcounts[j]} * c.rcount_scale;
    sized_sdispls[j] = std::int64_t{c.sdispls[j]} * c.sdispl_scale;
    sized_rdispls[j] = std::int64_t{c.rdispls[j]} * c.rdispl_scale;
  }
  Call sized = c;
  sized.sized_send = sized_send.data(), sized.sized_recv = sized_recv.data();
  sized.sized_sdispls = sized_sdispls.data(), sized.sized_rdispls = sized_rdispls.data();
  return sized;
}

void Executor::Impl::replay_sized(const Call& c) {
  // The messages the plan lacks go first, directly, on the first phase's data tag: no planned
  // message shares their rank pair, so nothing else can match them. They complete after the phases.
  int extra = 0;
  char* rbuf = c.rbuf;
  char* sbuf = const_cast<char*>(c.sbuf);
  for (int j = 0; j < size; ++j)
    if (j != rank && c.sized_recv[j] > 0 && expect_recv[j] == 0)
      post(false, rbuf + c.sized_rdispls[j], c.sized_recv[j], j, 0, comm, &extra_requests[extra++]);
  for (int j = 0; j < size; ++j)
    if (j != rank && c.sized_send[j] > 0 && expect_send[j] == 0)
      post(true, sbuf + c.sized_sdispls[j], c.sized_send[j], j, 0, comm, &extra_requests[extra++]);
  if (c.sized_send[rank] > 0)
    std::memmove(rbuf + c.sized_rdispls[rank], sbuf + c.sized_sdispls[rank],
                 static_cast<std::size_t>(std::min(c.sized_send[rank], c.sized_recv[rank])));
  replay(c);
  if (extra > 0) MPI_Waitall(extra, extra_requests.data(), MPI_STATUSES_IGNORE);
}

void Executor::Impl::run(const Call& c, const std::string* usage_error) {
  const OneCall one(*this, "execute");
  refuse_if_pending(*this, "execute");
  if (options.count_check == CountCheck::none) {
    // No agreement: the plan's own counts replay as they are; other counts replay sized where
    // the plan is whole and direct; else this rank cannot tell the others, and aborts.
    if (usage_error == nullptr && counts_match(c, nullptr)) {
      replay(c);
    } else if (usage_error == nullptr && whole) {
      replay_sized(sized_call(c));
    } else {
      abort_alone(c, usage_error, "count_check = none and the plan is not whole and direct");
    }
    ++stats.executes;
    return;
  }
  if (options.count_check == CountCheck::first_call && counts_agreed) {
    // Trusted calls: a local check only; a mismatch cannot be told to the others.
    if (usage_error != nullptr || !counts_match(c, nullptr)) abort_alone(c, usage_error, "count_check = first_call");
    replay(c);
    ++stats.executes;
    return;
  }
  // The collective count check: every rank contributes its verdict to an MPI_Iallreduce that
  // completes while the phases run. A rank whose check failed never touches the caller's buffers:
  // it replays into scratch buffers, so that its peers, who do not know yet, find their messages;
  // at the end every rank learns the verdict and all raise the same error.
  std::string msg;   // written only on a failure
  const bool ok = usage_error == nullptr && counts_match(c, &msg);
  check_mine = ok ? INT_MAX : rank;
  MPI_Iallreduce(&check_mine, &check_first, 1, MPI_INT, MPI_MIN, comm, &check_request);
  if (ok) {
    replay(c);
  } else {
    const Call dry = dry_call();
    replay(dry);
  }
  MPI_Wait(&check_request, MPI_STATUS_IGNORE);
  if (check_first != INT_MAX)
    raise_agreed(comm, check_first, usage_error ? Error::Kind::usage : Error::Kind::counts,
                 usage_error ? *usage_error : msg);
  counts_agreed = true;
  ++stats.executes;
}

// A split call. start does what execute does before its first phase's wait; finish the rest.
// Where execute agrees on the counts (every_call, and first_call's first call) start agrees with a
// blocking MPI_Allreduce before it touches a buffer, so a failed check raises on every rank and
// leaves nothing in flight (execute instead overlaps the agreement with the phases).
void Executor::Impl::start(const Call& c, const std::string* usage_error) {
  const OneCall one(*this, "start");
  refuse_if_pending(*this, "start");
  if (options.count_check == CountCheck::none) {
    if (usage_error == nullptr && counts_match(c, nullptr)) {
      post_first(c);
    } else if (usage_error == nullptr && whole) {
      // Other counts of a whole, direct plan: the sized replay, run here whole (it overlaps nothing).
      replay_sized(sized_call(c));
      split = Split{};
      split.pending = split.done = true;
    } else {
      abort_alone(c, usage_error, "count_check = none and the plan is not whole and direct");
    }
    return;
  }
  if (options.count_check == CountCheck::first_call && counts_agreed) {
    if (usage_error != nullptr || !counts_match(c, nullptr)) abort_alone(c, usage_error, "count_check = first_call");
    post_first(c);
    return;
  }
  std::string msg;   // written only on a failure
  const bool ok = usage_error == nullptr && counts_match(c, &msg);
  const int first = first_failing_rank(comm, !ok);
  if (first >= 0)
    raise_agreed(comm, first, usage_error ? Error::Kind::usage : Error::Kind::counts, usage_error ? *usage_error : msg);
  counts_agreed = true;
  post_first(c);
}

void Executor::Impl::post_first(const Call& c) {
  split = Split{};
  split.call = c;
  split.pending = true;
  // Only the post-all protocol without a window posts a whole phase at once; the handshake, the
  // window and barrier mode leave every phase to finish.
  const bool use_persistent = options.persistent && cap == 0;
  const bool overlap = !options.barrier && !phase_ops.empty() &&
                       (use_persistent || (cap == 0 && options.protocol == Protocol::post_all));
  if (!overlap) return;
  const PhaseOps& ph = phase_ops[0];
  run_packs(ph, c);
  if (use_persistent) {
    bind_persistent(c);
    const std::uint32_t first = persistent_begin[0], n = persistent_begin[1] - first;
    if (n > 0) MPI_Startall(static_cast<int>(n), persistent.data() + first);
    split.persistent = true;
  } else {
    // As run_phase_post_all, with a pairwise exchange posted as a receive and a send (load sized
    // `requests` for it).
    int n = 0;
    for (std::uint32_t i = ph.recv_begin; i < ph.recv_end; ++i) irecv(recvs[i], c, stage.data(), comm, &requests[n++]);
    for (std::uint32_t i = ph.pair_begin; i < ph.pair_end; ++i) irecv(pair_recvs[i], c, stage.data(), comm, &requests[n++]);
    for (std::uint32_t i = ph.send_begin; i < ph.send_end; ++i) isend(sends[i], c, stage.data(), comm, &requests[n++]);
    for (std::uint32_t i = ph.pair_begin; i < ph.pair_end; ++i) isend(pair_sends[i], c, stage.data(), comm, &requests[n++]);
    split.posted = n;
  }
  run_copies(ph, c);
  split.next = 1;
}

void Executor::Impl::finish() {
  const OneCall one(*this, "finish");
  if (!split.pending)
    throw Error(Error::Kind::usage, rank,
                "rank " + std::to_string(rank) + ": finish was called without a pending split call (call start first)");
  const Split s = split;
  split = Split{};
  if (!s.done) {
    if (s.next == 1) {   // the first phase's wait and unpacks, as replay would have run them
      if (s.persistent) {
        const std::uint32_t first = persistent_begin[0], n = persistent_begin[1] - first;
        if (n > 0) MPI_Waitall(static_cast<int>(n), persistent.data() + first, MPI_STATUSES_IGNORE);
      } else if (s.posted > 0) {
        MPI_Waitall(s.posted, requests.data(), MPI_STATUSES_IGNORE);
      }
      run_unpacks(phase_ops[0], s.call);
    }
    replay(s.call, s.next);
  }
  ++stats.executes;
}

void Executor::Impl::abandon_split() {
  if (!split.pending || split.next == 0) return;
  // Receives are cancelled; sends are left to complete on their own.
  const auto drop = [](MPI_Request& r, bool is_recv) {
    if (r == MPI_REQUEST_NULL) return;
    if (is_recv) {
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&r);
    }
  };
  const PhaseOps& ph = phase_ops[0];
  if (split.persistent) {
    const std::uint32_t first = persistent_begin[0];
    const std::uint32_t nr = (ph.recv_end - ph.recv_begin) + (ph.pair_end - ph.pair_begin);
    for (std::uint32_t i = first; i < first + nr; ++i) {
      MPI_Cancel(&persistent[i]);
      MPI_Wait(&persistent[i], MPI_STATUS_IGNORE);
    }
  } else {
    const int nr = static_cast<int>((ph.recv_end - ph.recv_begin) + (ph.pair_end - ph.pair_begin));
    for (int i = 0; i < split.posted; ++i) drop(requests[i], i < nr);
  }
  split = Split{};
}

namespace {

// The Call of execute's and start's signatures, with this rank's problem with it in `usage` (empty
// when there is none).
Call bytes_call(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf, const int* recvcounts,
                const int* rdispls, std::size_t elem_size, std::string& usage) {
  Call c{static_cast<const char*>(sendbuf), static_cast<char*>(recvbuf), sendcounts, sdispls,
         recvcounts, rdispls};
  c.scount_scale = c.sdispl_scale = c.rcount_scale = c.rdispl_scale = static_cast<std::int64_t>(elem_size);
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) usage = "MPI_IN_PLACE is not supported";
  else if (!sendcounts || !sdispls || !recvcounts || !rdispls) usage = "a count or displacement array is null";
  else if (elem_size == 0 || elem_size > INT_MAX) usage = "element size " + std::to_string(elem_size) + " out of range";
  return c;
}

Call typed_call(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, std::string& usage) {
  Call c{static_cast<const char*>(sendbuf), static_cast<char*>(recvbuf), sendcounts, sdispls,
         recvcounts, rdispls};
  int ssize = 0, rsize = 0;
  if (sendtype == MPI_DATATYPE_NULL || recvtype == MPI_DATATYPE_NULL) usage = "a datatype is MPI_DATATYPE_NULL";
  else if (!contiguous(sendtype, &ssize) || !contiguous(recvtype, &rsize))
    usage = "the datatypes must be contiguous (size == extent, lower bound 0)";
  else if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) usage = "MPI_IN_PLACE is not supported";
  else if (!sendcounts || !sdispls || !recvcounts || !rdispls) usage = "a count or displacement array is null";
  c.scount_scale = c.sdispl_scale = ssize;
  c.rcount_scale = c.rdispl_scale = rsize;
  return c;
}

}  // namespace

void Executor::execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                       const int* recvcounts, const int* rdispls) {
  execute(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, 1);
}

void Executor::execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                       const int* recvcounts, const int* rdispls, std::size_t elem_size) {
  std::string usage;
  const Call c = bytes_call(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, elem_size, usage);
  impl_->run(c, usage.empty() ? nullptr : &usage);
}

void Executor::execute(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                       void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  std::string usage;
  const Call c = typed_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, usage);
  impl_->run(c, usage.empty() ? nullptr : &usage);
}

void Executor::start(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                     const int* recvcounts, const int* rdispls) {
  start(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, 1);
}

void Executor::start(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                     const int* recvcounts, const int* rdispls, std::size_t elem_size) {
  std::string usage;
  const Call c = bytes_call(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, elem_size, usage);
  impl_->start(c, usage.empty() ? nullptr : &usage);
}

void Executor::start(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                     void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  std::string usage;
  const Call c = typed_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, usage);
  impl_->start(c, usage.empty() ? nullptr : &usage);
}

void Executor::finish() { impl_->finish(); }

bool Executor::pending() const { return impl_->split.pending; }

bool Executor::whole_direct() const { return impl_->whole; }

void Executor::execute_sized(const void* sendbuf, const std::int64_t* send_bytes, const std::int64_t* send_displs,
                             void* recvbuf, const std::int64_t* recv_bytes, const std::int64_t* recv_displs) {
  Impl& x = *impl_;
  if (!x.whole)
    throw Error(Error::Kind::usage, x.rank,
                "rank " + std::to_string(x.rank) + ": execute_sized needs a whole, direct plan (" + x.origin + " is not)");
  const OneCall one(x, "execute_sized");
  refuse_if_pending(x, "execute_sized");
  Call c;
  c.sbuf = static_cast<const char*>(sendbuf);
  c.rbuf = static_cast<char*>(recvbuf);
  c.sized_send = send_bytes, c.sized_recv = recv_bytes, c.sized_sdispls = send_displs, c.sized_rdispls = recv_displs;
  x.replay_sized(c);
  ++x.stats.executes;
}

}  // namespace commfit::exec
