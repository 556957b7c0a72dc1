// Loading a rank schedule into an Executor: read (plan directory or binary file), check locally,
// compile into per-phase op arrays, then agree collectively that every rank loaded the same,
// mutually consistent plan. Every check ends in agree(), so an error on one rank is an error on all.
#include "backends/exec/executor_impl.h"

#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/network_sim.h"
#include "ir/random.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <functional>
#include <new>
#include <numeric>

#include <unistd.h>

namespace commfit::exec {

// The cost model counts messages as the executor sends them by default (ir/network_sim.h).
static_assert(Options{}.coalesce == kCoalesceBytes, "the cost model's coalescing limit must be the executor's default");

namespace {

// The machine's physical memory: a staging area larger than it cannot be what a plan needs.
Bytes physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<Bytes>(pages) * static_cast<Bytes>(page) : ~Bytes{0};
}

constexpr std::uint64_t kHashSeed = 0xcbf29ce484222325ULL;

std::string check_options(const Options& o) {
  if (o.protocol != Protocol::post_all && o.protocol != Protocol::handshake)
    return "unknown protocol " + std::to_string(static_cast<int>(o.protocol));
  if (o.max_message == 0 || o.max_message > static_cast<std::uint64_t>(INT_MAX))
    return "max_message must be in [1, 2^31 - 1], not " + std::to_string(o.max_message);
  if (o.max_outstanding < kPlanWindow || o.max_outstanding == 1)
    return "max_outstanding must be -1 (the plan's), 0 (no cap) or at least 2, not " + std::to_string(o.max_outstanding);
  if (o.max_outstanding > 0 && o.protocol != Protocol::post_all)
    return "max_outstanding is supported by the post-all protocol only";
  if (o.coalesce < 0) return "coalesce must be 0 (off) or a byte count, not " + std::to_string(o.coalesce);
  if (o.persistent && (o.protocol != Protocol::post_all || o.max_outstanding > 0))
    return "persistent requests are supported by the post-all protocol without a request window only";
  return {};
}

// The options every rank must share, or the ranks would wait for ready messages, barriers or
// collectives that never come, or cut and pack messages differently from their peers: protocol,
// barrier, count_check, check_consistency, max_message, coalesce.
void check_same_options(Executor::Impl& x) {
  constexpr int n = 6;
  const Options& o = x.options;
  int mine[n] = {static_cast<int>(o.protocol), o.barrier, static_cast<int>(o.count_check), o.check_consistency,
                 static_cast<int>(o.max_message), o.coalesce};   // check_options: max_message <= INT_MAX
  int v[2 * n], r[2 * n];
  for (int k = 0; k < n; ++k) v[k] = mine[k], v[n + k] = -mine[k];
  MPI_Allreduce(v, r, 2 * n, MPI_INT, MPI_MIN, x.comm);
  bool same = true;
  for (int k = 0; k < n; ++k) same = same && r[k] == -r[n + k];
  if (same) return;
  int root[n];
  std::copy(mine, mine + n, root);
  MPI_Bcast(root, n, MPI_INT, 0, x.comm);
  auto text = [](const int* a) {
    return std::string("protocol ") + to_string(static_cast<Protocol>(a[0])) + ", barrier " + (a[1] ? "on" : "off") +
           ", count_check " + to_string(static_cast<CountCheck>(a[2])) +
           ", check_consistency " + (a[3] ? "on" : "off") + ", max_message " + std::to_string(a[4]) + ", coalesce " +
           std::to_string(a[5]);
  };
  const int first = first_failing_rank(x.comm, !std::equal(mine, mine + n, root));
  if (first < 0) return;
  raise_agreed(x.comm, first, Error::Kind::usage,
               "options differ from rank 0's (" + text(mine) + "; rank 0: " + text(root) +
                   "): every rank must use the same protocol, barrier, count_check, check_consistency, max_message and coalesce");
}

// All ranks loaded the same plan: fingerprint and phase count agree (one MPI_Allreduce).
void check_same_plan(Executor::Impl& x) {
  std::uint64_t h = kHashSeed;
  for (char ch : x.fingerprint) h = hash_fold(h, static_cast<unsigned char>(ch));
  h = hash_fold(h, x.phases);
  std::uint64_t v[2] = {h, ~h}, r[2] = {0, 0};
  MPI_Allreduce(v, r, 2, MPI_UINT64_T, MPI_MIN, x.comm);
  if (r[0] == ~r[1]) return;   // min == max
  // Error path: tell everyone rank 0's plan, and let the lowest rank that differs explain.
  int head[2] = {static_cast<int>(x.fingerprint.size()), static_cast<int>(x.phases)};
  MPI_Bcast(head, 2, MPI_INT, 0, x.comm);
  std::string fp0 = x.rank == 0 ? x.fingerprint : std::string(static_cast<std::size_t>(head[0]), '\0');
  MPI_Bcast(fp0.data(), head[0], MPI_CHAR, 0, x.comm);
  const bool differs = x.fingerprint != fp0 || x.phases != static_cast<std::uint32_t>(head[1]);
  const int first = first_failing_rank(x.comm, differs);
  if (first < 0) return;
  raise_agreed(x.comm, first, Error::Kind::plan,
               x.origin + ": loaded a different plan than rank 0 (matrix fingerprint " + x.fingerprint +
                   ", " + std::to_string(x.phases) + " phases; rank 0 has " + fp0 + ", " +
                   std::to_string(head[1]) + " phases): every rank must load the same plan");
}

// The plan's phase count is where the steps of its ranks end (rule 7, passes/verify.h): phases after
// every rank's last step would be empty everywhere. One MPI_Allreduce, before anything is
// allocated per phase; rank 0 explains (the ranks agreed on the phase count already).
void check_phases_used(Executor::Impl& x, Phase used) {
  Phase most = 0;
  MPI_Allreduce(&used, &most, 1, MPI_UINT32_T, MPI_MAX, x.comm);
  if (most == x.phases) return;
  raise_agreed(x.comm, 0, Error::Kind::plan,
               InputError(x.origin, "/phases", "phases " + std::to_string(x.phases) + " but the steps use at most " + std::to_string(most) +
                                                   " (the phases after the last step are empty on every rank)")
                   .what());
}

// Every rank's sends to j are, step for step, j's receives from it (one MPI_Alltoall).
void check_consistency(Executor::Impl& x, const std::vector<std::uint64_t>& send_hash,
                       const std::vector<std::uint64_t>& recv_hash) {
  std::vector<std::uint64_t> got(send_hash.size());
  MPI_Alltoall(send_hash.data(), 1, MPI_UINT64_T, got.data(), 1, MPI_UINT64_T, x.comm);
  std::string err;
  for (int i = 0; i < x.size && err.empty(); ++i)
    if (got[i] != recv_hash[i])
      err = x.origin + ": the receive steps from rank " + std::to_string(i) +
            " do not match rank " + std::to_string(i) +
            "'s send steps to this rank (phase, piece or order differ): the ranks loaded "
            "inconsistent plan files (mixed plans, or edited or corrupted files)";
  agree(x.comm, Error::Kind::plan, err);
}

Executor build(MPI_Comm comm, const Options& options, const std::string& origin,
               const std::function<RankSchedule(int rank, int size, std::string& origin)>& read,
               const std::function<std::uint64_t()>& stored_hash = {}) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) throw Error(Error::Kind::usage, -1, "MPI is not initialized");
  if (comm == MPI_COMM_NULL) throw Error(Error::Kind::usage, -1, "the communicator is MPI_COMM_NULL");
  auto x = std::make_unique<Executor::Impl>();
  MPI_Comm_dup(comm, &x->comm);
  MPI_Comm_rank(x->comm, &x->rank);
  MPI_Comm_size(x->comm, &x->size);
  x->options = options;
  x->origin = origin;
  agree(x->comm, Error::Kind::usage, check_options(options));
  check_same_options(*x);

  // Every check comes before compile(), the only step that allocates in proportion to the figures
  // a plan declares (its staging area, request window and phases): reading and checking cost what
  // the file holds. Each check ends in an agreement, so a plan refused on one rank is refused on all.
  RankSchedule rs;
  std::vector<std::uint64_t> send_hash, recv_hash;
  std::uint64_t rank_hash = 0;
  Phase used = 0;
  std::string err;
  try {
    rs = read(x->rank, x->size, x->origin);
    x->check(rs);
    used = rs.steps.empty() ? 0 : rs.steps.back().phase + 1;   // steps in phase order (check)
    x->step_hashes(rs, send_hash, recv_hash);
    rank_hash = rank_schedule_hash(rs);
  } catch (const std::bad_alloc&) {
    err = x->origin + ": out of memory while reading the schedule";
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(x->comm, Error::Kind::plan, err);
  check_same_plan(*x);
  check_phases_used(*x, used);
  check_plan_hash(x->comm, x->rank, rank_hash, origin, stored_hash);
  if (options.check_consistency) check_consistency(*x, send_hash, recv_hash);
  try {
    x->compile(rs);
  } catch (const std::bad_alloc&) {
    err = x->origin + ": out of memory while loading the schedule";
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(x->comm, Error::Kind::plan, err);
  // Sized calls need every rank's schedule whole and direct (a forwarding rank would receive
  // pieces of the plan's sizes): one MPI_Allreduce.
  int whole = x->whole ? 1 : 0, all_whole = 0;
  MPI_Allreduce(&whole, &all_whole, 1, MPI_INT, MPI_MIN, x->comm);
  x->whole = all_whole == 1;
  return Executor(std::move(x));
}

}  // namespace

const char* to_string(Protocol p) { return p == Protocol::post_all ? "post-all" : "handshake"; }

const char* to_string(CountCheck c) {
  return c == CountCheck::every_call ? "every_call" : c == CountCheck::first_call ? "first_call" : "none";
}

Protocol parse_protocol(const std::string& name) {
  if (name == "post-all") return Protocol::post_all;
  if (name == "handshake") return Protocol::handshake;
  throw std::invalid_argument("unknown protocol '" + name + "' (post-all, handshake)");
}

Executor::Impl::~Impl() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  abandon_split();
  free_persistent();
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void Executor::Impl::check(const RankSchedule& rs) {
  const std::string& f = origin;
  if (rs.ranks != size)
    throw InputError(f, "/ranks", "the plan is for " + std::to_string(rs.ranks) +
                                      " ranks but the communicator has " + std::to_string(size));
  if (rs.rank != rank)
    throw InputError(f, "/rank", "this is the schedule of rank " + std::to_string(rs.rank) +
                                     ", loaded by rank " + std::to_string(rank));
  phases = rs.phases;
  fingerprint = rs.matrix_fingerprint;
  // Everything this rank can check alone (ir/plan.h): the format, that the pieces tile its
  // messages on both sides, that staged bytes are held before they are forwarded, and that the
  // staging area is what the staged steps use (rule 7). A schedule that passes cannot make the
  // executor touch memory outside the user's segments or its staging area, nor allocate a staging
  // area its steps do not fill.
  if (const auto problems = check_rank_schedule(rs); !problems.empty())
    throw InputError(f, problems[0].place, problems[0].what);
  if (const Bytes machine = physical_memory(); rs.staging_bytes > machine)
    throw InputError(f, "/staging_bytes", "staging_bytes " + std::to_string(rs.staging_bytes) + " is more than this machine's memory (" +
                                              std::to_string(machine) + " bytes)");
}

void Executor::Impl::compile(const RankSchedule& rs) {
  expect_send.assign(size, 0);
  expect_recv.assign(size, 0);
  for (const PeerBytes& x : rs.sends) expect_send[x.peer] = static_cast<std::int64_t>(x.bytes);
  for (const PeerBytes& x : rs.recvs) expect_recv[x.peer] = static_cast<std::int64_t>(x.bytes);

  // Compile: steps in step_less order, bucketed by phase; pieces above max_message split.
  std::vector<std::size_t> order(rs.steps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return step_less(rs.steps[a], rs.steps[b]); });
  phase_ops.clear();
  // Coalescing: the packed messages of a phase live in the staging area past the plan's own part,
  // the phase's sends first, then its receives; every phase reuses the same bytes.
  const Bytes pack_base = rs.staging_bytes;
  const Bytes pack_limit = std::min<Bytes>(static_cast<Bytes>(options.coalesce), options.max_message);
  Bytes pack_max = 0;
  std::vector<Bytes> sizes;
  std::vector<std::uint32_t> message_of;
  std::vector<std::size_t> by_message;
  std::vector<NetOp> run;
  auto coalesce = [&](std::vector<NetOp>& list, std::vector<PackOp>& moves, Bytes& at) {
    // list is in (peer, src, dst, offset) order, one op per piece where pieces are this small:
    // the peer's ops in the same order, so both sides pack the same pieces at the same places.
    // Each peer's pieces become the messages of coalesce_pieces (ir/network_sim.h), the rule the
    // cost model counts by. A message of one piece is sent from where it lies.
    std::size_t out = 0;
    for (std::size_t k = 0; k < list.size();) {
      std::size_t end = k;
      while (end < list.size() && list[end].peer == list[k].peer) ++end;
      run.assign(list.begin() + static_cast<std::ptrdiff_t>(k), list.begin() + static_cast<std::ptrdiff_t>(end));
      sizes.clear();
      for (const NetOp& op : run) sizes.push_back(static_cast<Bytes>(op.count));
      message_of.resize(run.size());
      coalesce_pieces(sizes, pack_limit, message_of);
      by_message.resize(run.size());
      std::iota(by_message.begin(), by_message.end(), std::size_t{0});
      std::stable_sort(by_message.begin(), by_message.end(), [&](std::size_t x, std::size_t y) { return message_of[x] < message_of[y]; });
      for (std::size_t g = 0; g < by_message.size();) {
        std::size_t h = g + 1;
        while (h < by_message.size() && message_of[by_message[h]] == message_of[by_message[g]]) ++h;
        if (h - g == 1) {
          list[out++] = run[by_message[g]];
        } else {
          NetOp packed = run[by_message[g]];
          packed.where = Where::stage;
          packed.offset = at;
          Bytes total = 0;
          for (std::size_t i = g; i < h; ++i) {
            const NetOp& piece = run[by_message[i]];
            moves.push_back({piece, at});
            at += static_cast<Bytes>(piece.count);
            total += static_cast<Bytes>(piece.count);
          }
          packed.count = static_cast<int>(total);
          list[out++] = packed;
          ++stats.coalesced;
        }
        g = h;
      }
      k = end;
    }
    list.resize(out);
    for (std::size_t i = 0; i < list.size(); ++i) list[i].key = i > 0 && list[i - 1].peer == list[i].peer ? list[i - 1].key + 1 : 0;
  };
  // The plan's window applies under post-all only: the handshake protocol has no window.
  cap = options.max_outstanding != kPlanWindow ? options.max_outstanding
              : options.protocol == Protocol::post_all ? static_cast<int>(rs.max_outstanding)
                                                       : 0;
  const bool windowed = cap > 0;
  // Pairs only under post-all without a cap, and only where this rank's phase is one send and one
  // receive with the same peer: a Sendrecv blocks, and several of them in a phase (a one-phase
  // plan has hundreds) would run one after another. Under the handshake protocol the other side
  // could not tell whether this rank paired (it sees only its own steps), so it would wait for a
  // ready message that never comes: no pairs there.
  const bool pair = options.pairwise && !windowed && options.protocol == Protocol::post_all;
  std::vector<NetOp> ph_recv, ph_send;
  // Each peer's place in the plan's posting order (empty: none; the format checks saw that it
  // names every peer the sends address).
  std::vector<std::uint32_t> position;
  if (!rs.send_order.empty()) {
    position.assign(static_cast<std::size_t>(size), 0);
    for (std::size_t i = 0; i < rs.send_order.size(); ++i) position[static_cast<std::size_t>(rs.send_order[i])] = static_cast<std::uint32_t>(i);
  }
  std::size_t busiest = 0, widest = 0, k = 0;
  whole = true;
  std::vector<unsigned char> seen_send(static_cast<std::size_t>(size), 0), seen_recv(static_cast<std::size_t>(size), 0);
  stats = ExecStats{};
  stats.phases = phases;
  stats.staging_bytes = rs.staging_bytes;
  stats.window = cap;
  // Only the phases where this rank has steps are compiled: an empty phase costs nothing.
  while (k < order.size()) {
    const Phase p = rs.steps[order[k]].phase;
    PhaseOps& po = phase_ops.emplace_back();
    po.phase = p;
    ph_recv.clear();
    ph_send.clear();
    po.copy_begin = static_cast<std::uint32_t>(copies.size());
    const int tag = static_cast<int>(2 * (p % kTagPhases));
    for (; k < order.size() && rs.steps[order[k]].phase == p; ++k) {
      const Step& s = rs.steps[order[k]];
      if (s.op == Op::copy) {
        copies.push_back({s.offset, s.bytes});
        ++stats.copy_steps;
        continue;
      }
      ++stats.network_steps;
      // Whole and direct: the step is its peer's whole message, between the user's buffers, the
      // only one in its direction, and not split.
      const bool send = s.op == Op::send;
      if (s.buffer == Buffer::stage || s.offset != 0 || (send ? s.dst : s.src) != s.peer ||
          static_cast<std::int64_t>(s.bytes) != (send ? expect_send : expect_recv)[s.peer] || s.bytes > options.max_message ||
          (send ? seen_send : seen_recv)[s.peer]++)
        whole = false;
      auto& list = s.op == Op::send ? ph_send : ph_recv;
      for (Bytes done = 0; done < s.bytes; done += options.max_message) {
        NetOp op;
        op.peer = s.peer;
        op.tag = tag;
        op.count = static_cast<int>(std::min<Bytes>(options.max_message, s.bytes - done));
        op.is_send = s.op == Op::send;
        if (s.buffer == Buffer::stage) {
          op.where = Where::stage;
          op.offset = s.stage_offset + done;
        } else {
          op.where = s.buffer == Buffer::send ? Where::send_buf : Where::recv_buf;
          op.disp = s.buffer == Buffer::send ? s.dst : s.src;
          op.offset = s.offset + done;
        }
        op.key = (list.empty() || list.back().peer != op.peer) ? 0 : list.back().key + 1;
        list.push_back(op);
      }
    }
    po.copy_end = static_cast<std::uint32_t>(copies.size());
    if (pack_limit > 0) {
      Bytes at = pack_base;
      po.pack_begin = static_cast<std::uint32_t>(packs.size());
      coalesce(ph_send, packs, at);
      po.pack_end = static_cast<std::uint32_t>(packs.size());
      po.unpack_begin = static_cast<std::uint32_t>(unpacks.size());
      coalesce(ph_recv, unpacks, at);
      po.unpack_end = static_cast<std::uint32_t>(unpacks.size());
      pack_max = std::max(pack_max, at - pack_base);
    }
    // A pairwise exchange: this rank's whole phase is one send to and one receive from one peer.
    po.pair_begin = static_cast<std::uint32_t>(pair_sends.size());
    po.recv_begin = static_cast<std::uint32_t>(recvs.size());
    po.send_begin = static_cast<std::uint32_t>(sends.size());
    if (pair && ph_send.size() == 1 && ph_recv.size() == 1 && ph_send[0].peer == ph_recv[0].peer) {
      pair_sends.push_back(ph_send[0]);
      pair_recvs.push_back(ph_recv[0]);
      ++stats.pairs;
    } else {
      recvs.insert(recvs.end(), ph_recv.begin(), ph_recv.end());
      // Sends go out in the plan's posting order when it lists one (RankSchedule::send_order),
      // else rotated: to the peers above this rank first, ascending, then wrapping around
      // (rank + 1, rank + 2, ..., as MPI Advance and pairwise exchanges order them), so that the
      // ranks' first messages do not all go to the lowest ranks at once. A peer's sends keep
      // their order (the network model posts in the same order, ir/network_sim.h).
      const auto first = static_cast<std::ptrdiff_t>(sends.size());
      sends.insert(sends.end(), ph_send.begin(), ph_send.end());
      if (!position.empty())
        std::stable_sort(sends.begin() + first, sends.end(), [&](const NetOp& a, const NetOp& b) { return position[a.peer] < position[b.peer]; });
      else
        std::stable_partition(sends.begin() + first, sends.end(), [me = rank](const NetOp& o) { return o.peer > me; });
    }
    po.pair_end = static_cast<std::uint32_t>(pair_sends.size());
    po.recv_end = static_cast<std::uint32_t>(recvs.size());
    po.send_end = static_cast<std::uint32_t>(sends.size());
    // With a cap: all ops in one global order of (rank pair, direction, sequence).
    po.window_begin = static_cast<std::uint32_t>(window.size());
    if (windowed) {
      window.insert(window.end(), ph_recv.begin(), ph_recv.end());
      window.insert(window.end(), ph_send.begin(), ph_send.end());
      const int me = rank;
      std::sort(window.begin() + po.window_begin, window.end(), [me](const NetOp& a, const NetOp& b) {
        auto key = [me](const NetOp& o) {
          return std::make_tuple(std::min(me, o.peer), std::max(me, o.peer), o.is_send ? me : o.peer, o.key);
        };
        return key(a) < key(b);
      });
    }
    po.window_end = static_cast<std::uint32_t>(window.size());
    const std::size_t n = (po.recv_end - po.recv_begin) + (po.send_end - po.send_begin);
    // A split call (Executor::start) posts a pair as a receive and a send.
    busiest = std::max(busiest, options.protocol == Protocol::handshake ? 2 * n : n + 2 * std::size_t{po.pair_end - po.pair_begin});
    widest = std::max<std::size_t>(widest, po.window_end - po.window_begin);
  }
  // A window holds at most the ops of its busiest phase: one larger than that never fills (the
  // window's loop waits only once `cap` are in flight), so its requests are the steps' to bound.
  if (windowed) busiest = std::min(static_cast<std::size_t>(cap), widest);
  stage.assign(rs.staging_bytes + pack_max, 0);
  stats.pack_bytes = pack_max;
  requests.assign(std::max<std::size_t>(busiest, 1), MPI_REQUEST_NULL);
  indices.assign(requests.size(), 0);
  if (whole) {   // what sized calls need (load agrees on `whole` after this)
    extra_requests.assign(2 * static_cast<std::size_t>(size), MPI_REQUEST_NULL);
    for (auto* v : {&sized_send, &sized_recv, &sized_sdispls, &sized_rdispls}) v->assign(static_cast<std::size_t>(size), 0);
  }
}

void Executor::Impl::step_hashes(const RankSchedule& rs, std::vector<std::uint64_t>& send_hash,
                                 std::vector<std::uint64_t>& recv_hash) const {
  send_hash.assign(size, kHashSeed);
  recv_hash.assign(size, kHashSeed);
  std::vector<const Step*> order;
  order.reserve(rs.steps.size());
  for (const Step& s : rs.steps) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Step* a, const Step* b) { return step_less(*a, *b); });
  for (const Step* s : order) {
    if (s->op == Op::copy) continue;
    std::uint64_t& h = (s->op == Op::send ? send_hash : recv_hash)[s->peer];
    for (std::uint64_t v : {std::uint64_t{s->phase}, std::uint64_t(s->src), std::uint64_t(s->dst), s->offset, s->bytes})
      h = hash_fold(h, v);
  }
}

std::string plan_rank_origin(const std::string& path, int rank, int size) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? (std::filesystem::path(path) / rank_file_name(rank, size)).string() : path;
}

RankSchedule read_plan_rank(const std::string& path, int rank, int size, std::string& origin) {
  namespace fs = std::filesystem;
  std::error_code ec;
  origin = plan_rank_origin(path, rank, size);
  if (fs::is_directory(path, ec)) return read_rank_schedule(origin);
  if (!fs::exists(path, ec)) throw InputError(path, "", "no such plan directory or binary plan file");
  return read_rank_schedule_binary(path, rank);
}

std::uint64_t read_stored_plan_hash(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? read_manifest(path).plan_hash : read_plan_hash_binary(path);
}

// The plan's content hash (ir/plan.h): catches a rank file edited, replaced or taken from another
// plan of the same matrix, which the other checks may not see.
void check_plan_hash(MPI_Comm comm, int rank, std::uint64_t rank_hash, const std::string& plan_path,
                     const std::function<std::uint64_t()>& stored) {
  std::uint64_t want = 0;
  std::string err;
  if (rank == 0 && stored) {
    try {
      want = stored();
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  agree(comm, Error::Kind::plan, err);
  MPI_Bcast(&want, 1, MPI_UINT64_T, 0, comm);
  if (want == 0) return;
  std::uint64_t term = plan_hash_term(rank_hash, rank), sum = 0;
  MPI_Allreduce(&term, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (sum == 0) sum = 1;   // as plan_hash()
  if (sum == want) return;
  raise_agreed(comm, 0, Error::Kind::plan,
               plan_path + ": the rank schedules hash to " + plan_hash_text(sum) + ", not to the " + plan_hash_text(want) +
                   " the plan was written with: a rank file was edited, replaced or comes from another plan");
}

Executor Executor::load(const std::string& path, MPI_Comm comm, const Options& options) {
  return build(comm, options, path, [&](int rank, int size, std::string& origin) { return read_plan_rank(path, rank, size, origin); },
               [&] { return read_stored_plan_hash(path); });   // rank 0, once every rank has read its schedule
}

Executor Executor::load(const std::string& path, const RankSchedule& schedule, MPI_Comm comm, const Options& options) {
  return build(comm, options, path,
               [&](int rank, int size, std::string& origin) {
                 origin = plan_rank_origin(path, rank, size);
                 return schedule;
               },
               [&] { return read_stored_plan_hash(path); });
}

Executor Executor::from_schedule(const RankSchedule& schedule, MPI_Comm comm, const Options& options,
                                 const std::string& origin) {
  return build(comm, options, origin, [&](int, int, std::string&) { return schedule; });
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;
const ExecStats& Executor::stats() const { return impl_->stats; }
const Options& Executor::options() const { return impl_->options; }
MPI_Comm Executor::comm() const { return impl_->comm; }

}  // namespace commfit::exec
