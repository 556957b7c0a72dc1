// Internals of the executor shared by its sources: the compiled form of a rank schedule (what
// load builds once, so execute only walks arrays). What the layers above use of the executor
// besides its public API is in backends/exec/exec_support.h.
#pragma once

#include "backends/exec/commfit_exec.hpp"
#include "backends/exec/exec_support.h"
#include "ir/plan.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <functional>
#include <vector>

namespace commfit::exec {

// Data tag of phase k: 2 * (k mod kTagPhases); its ready tag is one more. Below MPI's minimum
// guaranteed MPI_TAG_UB (32767).
inline constexpr std::uint32_t kTagPhases = 16384;

enum class Where : std::uint8_t { send_buf, recv_buf, stage };

// One MPI message of a phase: a piece, or one chunk of a piece larger than Options::max_message.
struct NetOp {
  int peer = 0;
  int tag = 0;
  int count = 0;          // bytes
  Where where = Where::send_buf;
  Rank disp = 0;          // send_buf: index into sdispls (the piece's dst); recv_buf: into rdispls (its src)
  Bytes offset = 0;       // within the message (send_buf, recv_buf) or the staging area
  std::uint64_t key = 0;  // position in the global pair order (max_outstanding only)
  bool is_send = false;
};

// One piece of a coalesced message: `piece` says where it lives (its count is its length), `pack`
// where it sits in the staging area's packing part.
struct PackOp {
  NetOp piece;
  Bytes pack = 0;
};

struct CopyOp {
  Bytes offset = 0;       // bytes [offset, offset + bytes) of the self message
  Bytes bytes = 0;
};

// One phase in which this rank has steps (the others are not compiled).
struct PhaseOps {
  Phase phase = 0;
  std::uint32_t recv_begin = 0, recv_end = 0;   // non-paired receives, in `recvs`
  std::uint32_t send_begin = 0, send_end = 0;   // non-paired sends, in `sends`
  std::uint32_t pair_begin = 0, pair_end = 0;   // pairwise exchanges, in `pair_sends`/`pair_recvs`
  std::uint32_t copy_begin = 0, copy_end = 0;   // in `copies`
  std::uint32_t window_begin = 0, window_end = 0;  // all network ops in pair order, in `window`
  std::uint32_t pack_begin = 0, pack_end = 0;      // pieces packed before the sends, in `packs`
  std::uint32_t unpack_begin = 0, unpack_end = 0;  // pieces unpacked after the phase, in `unpacks`
};

// One call's buffers; scales turn counts and displacements into bytes.
struct Call {
  const char* sbuf = nullptr;
  char* rbuf = nullptr;
  const int* scounts = nullptr;
  const int* sdispls = nullptr;
  const int* rcounts = nullptr;
  const int* rdispls = nullptr;
  std::int64_t scount_scale = 1, sdispl_scale = 1, rcount_scale = 1, rdispl_scale = 1;
  // A failed call replays into scratch buffers laid out by these byte displacements instead
  // (so its peers, who do not know yet, still find their messages); copies are skipped.
  const std::int64_t* dry_sdispls = nullptr;
  const std::int64_t* dry_rdispls = nullptr;
  // A sized call (whole, direct plans): every message's size and both buffers' byte displacements
  // are the call's own, not the plan's; the self message is one copy.
  const std::int64_t* sized_send = nullptr;
  const std::int64_t* sized_recv = nullptr;
  const std::int64_t* sized_sdispls = nullptr;
  const std::int64_t* sized_rdispls = nullptr;
};

struct Executor::Impl {
  MPI_Comm comm = MPI_COMM_NULL;   // the duplicate
  int rank = 0, size = 0;
  Options options;
  // The request window in force: options.max_outstanding, or when that is kPlanWindow the plan's
  // own (post-all only); 0 = none.
  int cap = 0;
  ExecStats stats;
  std::string origin;               // file the schedule came from, for messages
  std::string fingerprint;
  std::uint32_t phases = 0;

  std::vector<std::int64_t> expect_send, expect_recv;   // dense row / column of COM, bytes
  bool whole = false;                                   // Executor::whole_direct
  // Sized calls: the messages the plan lacks (2 * size requests at most), and under
  // CountCheck::none the call's counts and displacements in bytes; sized at load.
  std::vector<MPI_Request> extra_requests;
  std::vector<std::int64_t> sized_send, sized_recv, sized_sdispls, sized_rdispls;
  std::vector<PhaseOps> phase_ops;   // the phases with steps on this rank, in order
  std::vector<NetOp> recvs, sends, pair_sends, pair_recvs, window;
  std::vector<CopyOp> copies;
  std::vector<PackOp> packs, unpacks;
  std::vector<char> stage;   // the plan's staging area, then the packing part (Options::coalesce)

  // Options::persistent: one persistent request per network op (pairs included, as a receive and a
  // send), each phase's contiguous from persistent_begin[k] (k indexes phase_ops); bound to the buffers and byte
  // displacements of the call that made them (bound_*), and made again when a call differs.
  std::vector<MPI_Request> persistent;
  std::vector<std::uint32_t> persistent_begin;
  const char* bound_sbuf = nullptr;
  char* bound_rbuf = nullptr;
  std::vector<std::int64_t> bound_sdispls, bound_rdispls;
  bool bound = false;

  std::vector<MPI_Request> requests;   // sized at load for the busiest phase
  std::vector<int> indices;
  bool counts_agreed = false;
  // Set while execute runs: a second thread calling execute on the same Executor is refused
  // (its collectives would interleave with the first call's and hang every rank).
  std::atomic<bool> busy{false};
  // A split call (Executor::start, then finish): the call, and what start left in flight. Only
  // one per Executor; `next` is the first entry of phase_ops that finish replays.
  struct Split {
    bool pending = false;
    bool done = false;         // start ran the whole call (a sized call): finish only ends it
    bool persistent = false;   // phase_ops[0]'s persistent requests were started
    int posted = 0;            // else requests[0, posted) were posted
    std::size_t next = 0;
    Call call;
  } split;
  char ready_byte = 0;
  int check_mine = 0, check_first = 0;          // the count check's MPI_Iallreduce
  MPI_Request check_request = MPI_REQUEST_NULL;
  std::vector<char> dry_send, dry_recv;         // allocated on the first failed call only
  std::vector<std::int64_t> dry_sdispls, dry_rdispls;

  ~Impl();

  // Everything this rank can check of its schedule alone (ir/plan.h, rule 7 included), before
  // anything is allocated for it; sets phases and fingerprint; throws InputError.
  void check(const RankSchedule& rs);
  // Compilation of a checked schedule into the arrays above: the only step that allocates in
  // proportion to the figures the plan declares, so load runs it after every check.
  void compile(const RankSchedule& rs);
  // Per-peer hashes of the send and receive step sequences (size `size` each).
  void step_hashes(const RankSchedule& rs, std::vector<std::uint64_t>& send_hash,
                   std::vector<std::uint64_t>& recv_hash) const;

  // One execute; usage_error (a problem with the call found by the caller) fails it collectively.
  void run(const Call& c, const std::string* usage_error);
  // The phases of phase_ops from `from` on (the first `from` ran already: a split call's finish;
  // never under barrier mode, where a split call replays every phase in finish).
  void replay(const Call& c, std::size_t from = 0);
  // A split call: start checks the counts (blocking agreement where execute would agree), packs,
  // copies and posts phase_ops[0] when the protocol allows (post-all or persistent, no window, no
  // barrier); finish waits, unpacks and replays the rest. abandon_split cancels what start left
  // posted (an Executor destroyed between them).
  void start(const Call& c, const std::string* usage_error);
  void post_first(const Call& c);
  void finish();
  void abandon_split();
  // The call in byte counts and displacements (the sized_* arrays), for replay_sized.
  Call sized_call(const Call& c);
  // A sized call of a whole, direct plan: the extra messages posted, the phases, the self copy.
  void replay_sized(const Call& c);
  // A rank whose call is wrong (usage_error, or counts other than the plan's) where no collective
  // tells the others: prints why (`mode` names the option that got here) and calls MPI_Abort.
  [[noreturn]] void abort_alone(const Call& c, const std::string* usage_error, const char* mode);
  // The stand-in for a call that failed its checks on this rank.
  Call dry_call();
  // True when the counts of `c` are the plan's; else writes the first mismatch to `msg` (if given).
  bool counts_match(const Call& c, std::string* msg) const;
  void run_phase_post_all(const PhaseOps& ph, const Call& c);
  void run_phase_handshake(const PhaseOps& ph, const Call& c);
  void run_phase_window(const PhaseOps& ph, const Call& c);
  void run_pairs(const PhaseOps& ph, const Call& c);
  void run_copies(const PhaseOps& ph, const Call& c);
  void run_packs(const PhaseOps& ph, const Call& c);
  void run_unpacks(const PhaseOps& ph, const Call& c);
  // Persistent requests: (re)made for c's buffers when they are not bound to them already.
  void bind_persistent(const Call& c);
  void free_persistent();
  void run_phase_persistent(std::size_t k, const PhaseOps& ph, const Call& c);
};

// Address of an op's bytes in this call.
inline char* op_address(const NetOp& op, const Call& c, char* stage) {
  switch (op.where) {
    case Where::send_buf:
      return const_cast<char*>(c.sbuf) + std::int64_t(op.offset) +
             (c.sized_sdispls ? c.sized_sdispls[op.disp]
              : c.dry_sdispls ? c.dry_sdispls[op.disp]
                              : c.sdispls[op.disp] * c.sdispl_scale);
    case Where::recv_buf:
      return c.rbuf + std::int64_t(op.offset) +
             (c.sized_rdispls ? c.sized_rdispls[op.disp]
              : c.dry_rdispls ? c.dry_rdispls[op.disp]
                              : c.rdispls[op.disp] * c.rdispl_scale);
    case Where::stage:
      return stage + op.offset;
  }
  return nullptr;
}

// An op's size in this call: the plan's, or in a sized call the call's own for its peer.
inline std::int64_t op_bytes(const NetOp& op, const Call& c) {
  if (!c.sized_send) return op.count;
  return op.is_send ? c.sized_send[op.peer] : c.sized_recv[op.peer];
}

}  // namespace commfit::exec
