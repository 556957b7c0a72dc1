// Patterns from global ids (runtime/commfit_pattern.{h,hpp}, docs/PATTERN.md). The owner of
// every needed id is found by runtime/owner_lookup.hpp: by default the distributed directory of
// Pinar and Hendrickson ("Communication Support for Adaptive Computation", §2, Fig. 1), where owners
// and needers meet at each id's directory rank, which answers both sides at once; on request the
// ring and torus algorithms of their §2.1 with a reverse step. The exchange is then planned in the
// job (runtime/in_job.hpp).
#include "commfit_pattern.h"
#include "commfit_pattern.hpp"

#include "backends/exec/exec_support.h"
#include "runtime/in_job.hpp"
#include "runtime/owner_lookup.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace commfit::runtime {

// The executor's public face (commfit_exec.hpp) and what it offers the layers above (exec_support.h).
using exec::agree;
using exec::Error;
using exec::Executor;

namespace {

using I64 = std::int64_t;

// The element types gather and scatter take: predefined, contiguous; `kind` says how to reduce.
enum class Kind { bytes, f32, f64, s8, s16, s32, s64, u8, u16, u32, u64, other };
struct Scalar {
  int size = 0;
  Kind kind = Kind::other;
};

Scalar scalar_of(MPI_Datatype t, const char* what) {
  const std::string refuse = std::string(what) + ": the datatype must be a predefined contiguous one (MPI_DOUBLE, MPI_INT, MPI_INT64_T, ...)";
  if (t == MPI_DATATYPE_NULL) throw Error(Error::Kind::usage, 0, refuse + ", not MPI_DATATYPE_NULL");
  int ni = 0, na = 0, nd = 0, combiner = 0;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner != MPI_COMBINER_NAMED) throw Error(Error::Kind::usage, 0, refuse + ", not a derived datatype");
  MPI_Aint lb = 0, extent = 0;
  int size = 0;
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_size(t, &size);
  if (lb != 0 || size <= 0 || extent != size) throw Error(Error::Kind::usage, 0, refuse + ", not one with gaps (extent " + std::to_string(extent) + ", size " + std::to_string(size) + ")");
  Scalar s{size, Kind::other};
  const auto integer = [&](bool is_signed) {
    switch (size) {
      case 1: return is_signed ? Kind::s8 : Kind::u8;
      case 2: return is_signed ? Kind::s16 : Kind::u16;
      case 4: return is_signed ? Kind::s32 : Kind::u32;
      case 8: return is_signed ? Kind::s64 : Kind::u64;
    }
    return Kind::other;
  };
  // The Fortran types (through MPI_Type_f2c from the Fortran binding) by their size, which compiler
  // flags such as -fdefault-real-8 change.
  const MPI_Datatype signed_types[] = {MPI_SIGNED_CHAR, MPI_INT8_T, MPI_SHORT, MPI_INT16_T, MPI_INT, MPI_INT32_T, MPI_LONG, MPI_LONG_LONG, MPI_INT64_T,
                                       MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
  const MPI_Datatype unsigned_types[] = {MPI_UNSIGNED_CHAR, MPI_UINT8_T, MPI_UNSIGNED_SHORT, MPI_UINT16_T, MPI_UNSIGNED,
                                         MPI_UINT32_T, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T};
  const MPI_Datatype floating_types[] = {MPI_FLOAT, MPI_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL4, MPI_REAL8};
  if (std::find(std::begin(floating_types), std::end(floating_types), t) != std::end(floating_types))
    s.kind = size == 4 ? Kind::f32 : size == 8 ? Kind::f64 : Kind::other;
  else if (t == MPI_BYTE) s.kind = Kind::bytes;
  else if (t == MPI_CHAR) s.kind = integer(std::is_signed_v<char>);
  else if (std::find(std::begin(signed_types), std::end(signed_types), t) != std::end(signed_types)) s.kind = integer(true);
  else if (std::find(std::begin(unsigned_types), std::end(unsigned_types), t) != std::end(unsigned_types)) s.kind = integer(false);
  return s;
}

enum class Op { sum, max, min, replace };

Op op_of(MPI_Op op) {
  if (op == MPI_SUM) return Op::sum;
  if (op == MPI_MAX) return Op::max;
  if (op == MPI_MIN) return Op::min;
  if (op == MPI_REPLACE) return Op::replace;
  throw Error(Error::Kind::usage, 0, "scatter: the op must be MPI_SUM, MPI_MAX, MPI_MIN or MPI_REPLACE");
}

// owned[idx[k]] = op(owned[idx[k]], in[k]) for k in order. Integer sums wrap (unsigned arithmetic).
template <class T>
void reduce_into(unsigned char* owned, const unsigned char* in, const std::vector<I64>& idx, Op op) {
  for (std::size_t k = 0; k < idx.size(); ++k) {
    T a, b;
    unsigned char* at = owned + static_cast<std::size_t>(idx[k]) * sizeof(T);
    std::memcpy(&a, at, sizeof(T));
    std::memcpy(&b, in + k * sizeof(T), sizeof(T));
    if (op == Op::sum) {
      if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
      else a = a + b;
    } else if (op == Op::max) {
      a = b > a ? b : a;
    } else {
      a = b < a ? b : a;
    }
    std::memcpy(at, &a, sizeof(T));
  }
}

// out[k] = in[idx[k]] (pack) or out[idx[k]] = in[k] (unpack), elements of `size` bytes.
template <bool Pack>
void move_elements(unsigned char* out, const unsigned char* in, const std::vector<I64>& idx, std::size_t size) {
  const auto run = [&](auto sz) {
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const std::size_t i = static_cast<std::size_t>(idx[k]);
      if constexpr (Pack) std::memcpy(out + k * sz, in + i * sz, sz);
      else std::memcpy(out + i * sz, in + k * sz, sz);
    }
  };
  switch (size) {  // constant sizes let memcpy become one load and store
    case 4: run(std::integral_constant<std::size_t, 4>{}); break;
    case 8: run(std::integral_constant<std::size_t, 8>{}); break;
    default: run(size);
  }
}

}  // namespace

struct Pattern::Impl {
  MPI_Comm comm = MPI_COMM_NULL;   // our duplicate: the owner lookup's traffic and later planning
  int rank = 0, size = 0;
  InJobOptions options;
  PatternStats stats;
  // Gather's layout, self block included (at this rank's place): the send buffer holds owned
  // values by (needing rank, position in its needed[]); the receive buffer needed values by
  // (owning rank, position in needed[]). Counts and displacements in elements, per rank.
  std::vector<I64> send_index, recv_slot;
  std::vector<int> send_count, send_displ, recv_count, recv_displ;
  std::vector<int> exec_send_count, exec_recv_count;   // the same without the self block
  std::vector<std::pair<int, Executor>> gathers, scatters;   // by element size
  std::vector<unsigned char> send_buf, recv_buf;
  // A split gather or scatter between its begin and end: the executor started, where end writes,
  // and scatter's reduction.
  struct Pending {
    enum class What { none, gather, scatter } what = What::none;
    Executor* ex = nullptr;
    void* out = nullptr;
    Scalar type;
    Op op = Op::replace;
  } pending;

  // Refuses `what` (gather, scatter or a begin) while a split call is pending, on the calling rank.
  void refuse_if_pending(const char* what) const {
    if (pending.what == Pending::What::none) return;
    const char* open = pending.what == Pending::What::gather ? "gather" : "scatter";
    throw Error(Error::Kind::usage, rank,
                std::string(what) + ": a split " + open + " is pending (" + open + "_begin was called and " + open +
                    "_end not yet); a pattern has one gather or scatter in flight at a time: call " + open + "_end first");
  }
  // gather_end / scatter_end: the pending call must be `want`.
  void expect_pending(Pending::What want, const char* what) const {
    if (pending.what == want) return;
    const char* name = want == Pending::What::gather ? "gather" : "scatter";
    if (pending.what == Pending::What::none)
      throw Error(Error::Kind::usage, rank, std::string(what) + " was called without " + name + "_begin");
    throw Error(Error::Kind::usage, rank,
                std::string(what) + " was called while a split " + (want == Pending::What::gather ? "scatter" : "gather") +
                    " is pending, not a gather: end it with its own _end");
  }

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    gathers.clear(), scatters.clear();
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

  // The executor of one direction for elements of `elem` bytes, planned on first use (collective).
  Executor& executor(bool reverse, int elem) {
    auto& cache = reverse ? scatters : gathers;
    for (auto& [e, ex] : cache)
      if (e == elem) return ex;
    std::vector<I64> s(static_cast<std::size_t>(size)), r(s.size());
    for (int q = 0; q < size; ++q) {
      s[q] = I64{reverse ? exec_recv_count[q] : exec_send_count[q]} * elem;
      r[q] = I64{reverse ? exec_send_count[q] : exec_recv_count[q]} * elem;
    }
    cache.emplace_back(elem, plan_in_job(comm, s.data(), r.data(), options, nullptr, {}, elem));
    return cache.back().second;
  }

  void size_buffers(int elem) {
    const auto bytes = [&](const std::vector<I64>& v) { return std::max<std::size_t>(1, v.size() * static_cast<std::size_t>(elem)); };
    if (send_buf.size() < bytes(send_index)) send_buf.resize(bytes(send_index));
    if (recv_buf.size() < bytes(recv_slot)) recv_buf.resize(bytes(recv_slot));
  }

  // The self block: the values this rank needs of its own, straight from one layout to the other.
  void copy_self(unsigned char* to, const std::vector<int>& to_displ, const unsigned char* from, const std::vector<int>& from_displ, int elem) {
    std::memcpy(to + static_cast<std::size_t>(to_displ[rank]) * elem, from + static_cast<std::size_t>(from_displ[rank]) * elem,
                static_cast<std::size_t>(send_count[rank]) * elem);
  }
};

namespace {

// The owners found, with the exchange they yield. `caller_error` is this rank's own problem with its arguments
// (from the C binding), raised on every rank with the first agreement.
std::unique_ptr<Pattern::Impl> build(MPI_Comm user_comm, std::span<const I64> owned, std::span<const I64> needed,
                                     const std::string& plan_options, std::string caller_error) {
  if (user_comm == MPI_COMM_NULL) throw Error(Error::Kind::usage, 0, "the communicator is MPI_COMM_NULL");
  int inter = 0;
  MPI_Comm_test_inter(user_comm, &inter);
  if (inter) throw Error(Error::Kind::usage, 0, "a pattern needs an intracommunicator");
  auto impl = std::make_unique<Pattern::Impl>();
  Pattern::Impl& m = *impl;
  MPI_Comm_dup(user_comm, &m.comm);
  MPI_Comm_rank(m.comm, &m.rank);
  MPI_Comm_size(m.comm, &m.size);
  const int p = m.size, me = m.rank;
  const std::size_t P = static_cast<std::size_t>(p);

  // 0. This rank's arguments: the options parse (the lookup's words, then in-job planning's), every
  //    id is >= 0.
  std::string local = std::move(caller_error);
  LookupOptions lookup;
  try {
    std::string in_job = plan_options;
    lookup = take_lookup_options(in_job);
    m.options = parse_in_job_options(in_job);
    // The counts every gather and scatter passes are the pattern's own, the plan's by construction:
    // the first call agrees on them, later calls compare them locally and pay no collective.
    m.options.exec.count_check = exec::CountCheck::first_call;
  } catch (const std::exception& e) {
    if (local.empty()) local = e.what();
  }
  const auto negative = [&](std::span<const I64> ids, const char* name) {
    for (std::size_t i = 0; i < ids.size() && local.empty(); ++i)
      if (ids[i] < 0) local = "id " + std::to_string(ids[i]) + " is negative (" + name + "[" + std::to_string(i) + "])";
  };
  negative(owned, "owned");
  negative(needed, "needed");
  if (!local.empty()) owned = {}, needed = {};   // take part in the counts, send nothing

  // 1. The owners: every needed id's owner, and what this rank serves (runtime/owner_lookup.hpp).
  OwnerLookup found = find_owners(m.comm, owned, needed, lookup, local);
  m.stats.directory_ids = found.directory_ids;

  // 2. The exchange. Needer: the receive layout is by owner, then position in needed[].
  m.recv_count.assign(P, 0), m.recv_displ.assign(P, 0);
  for (int o : found.owner) ++m.recv_count[static_cast<std::size_t>(o)];
  std::exclusive_scan(m.recv_count.begin(), m.recv_count.end(), m.recv_displ.begin(), 0);
  m.recv_slot.resize(needed.size());
  {
    std::vector<int> at = m.recv_displ;
    for (std::size_t j = 0; j < needed.size(); ++j) m.recv_slot[static_cast<std::size_t>(at[static_cast<std::size_t>(found.owner[j])]++)] = static_cast<I64>(j);
  }
  found.owner = {}, found.owner_index = {};
  //    Owner: what it serves, by needer, then position: the send layout, in the order each
  //    needer's receive layout expects.
  m.send_count.assign(P, 0), m.send_displ.assign(P, 0);
  m.send_index.reserve(found.served.size());
  for (const Served& s : found.served) ++m.send_count[static_cast<std::size_t>(s.needer)], m.send_index.push_back(s.index);
  std::exclusive_scan(m.send_count.begin(), m.send_count.end(), m.send_displ.begin(), 0);
  m.exec_send_count = m.send_count, m.exec_recv_count = m.recv_count;
  m.exec_send_count[static_cast<std::size_t>(me)] = m.exec_recv_count[static_cast<std::size_t>(me)] = 0;

  PatternStats& st = m.stats;
  st.owned = static_cast<I64>(owned.size()), st.needed = static_cast<I64>(needed.size());
  st.local = m.recv_count[static_cast<std::size_t>(me)];
  for (int q = 0; q < p; ++q) {
    st.send_peers += m.exec_send_count[static_cast<std::size_t>(q)] > 0, st.recv_peers += m.exec_recv_count[static_cast<std::size_t>(q)] > 0;
    st.sent += m.exec_send_count[static_cast<std::size_t>(q)], st.received += m.exec_recv_count[static_cast<std::size_t>(q)];
  }

  // 3. The gather's executor for 8-byte elements (double, int64): planning problems show here.
  m.executor(false, 8);
  return impl;
}

}  // namespace

Pattern::Pattern(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;
Pattern::~Pattern() = default;

Pattern Pattern::from_ids(MPI_Comm comm, std::span<const std::int64_t> owned, std::span<const std::int64_t> needed, const std::string& plan_options) {
  return Pattern(build(comm, owned, needed, plan_options, {}));
}

const PatternStats& Pattern::stats() const { return impl_->stats; }

namespace {

// Scatter's last step: each owned value combined with what came back for it, in send_index's order.
void reduce_back(unsigned char* o, const unsigned char* in, const std::vector<I64>& idx, Scalar t, Op op) {
  if (op == Op::replace) return move_elements<false>(o, in, idx, static_cast<std::size_t>(t.size));   // in order: the last wins
  switch (t.kind) {
    case Kind::f32: return reduce_into<float>(o, in, idx, op);
    case Kind::f64: return reduce_into<double>(o, in, idx, op);
    case Kind::s8: return reduce_into<std::int8_t>(o, in, idx, op);
    case Kind::s16: return reduce_into<std::int16_t>(o, in, idx, op);
    case Kind::s32: return reduce_into<std::int32_t>(o, in, idx, op);
    case Kind::s64: return reduce_into<std::int64_t>(o, in, idx, op);
    case Kind::u8: return reduce_into<std::uint8_t>(o, in, idx, op);
    case Kind::u16: return reduce_into<std::uint16_t>(o, in, idx, op);
    case Kind::u32: return reduce_into<std::uint32_t>(o, in, idx, op);
    case Kind::u64: return reduce_into<std::uint64_t>(o, in, idx, op);
    case Kind::bytes:
    case Kind::other: break;
  }
}

// Gather's first half: the owned values packed in the send layout, the self block copied, the
// exchange started (begin) or run (plain).
Executor& gather_start(Pattern::Impl& m, const void* owned_values, MPI_Datatype type, Scalar t, bool split) {
  Executor& ex = m.executor(false, t.size);
  m.size_buffers(t.size);
  move_elements<true>(m.send_buf.data(), static_cast<const unsigned char*>(owned_values), m.send_index, static_cast<std::size_t>(t.size));
  m.copy_self(m.recv_buf.data(), m.recv_displ, m.send_buf.data(), m.send_displ, t.size);
  if (split)
    ex.start(m.send_buf.data(), m.exec_send_count.data(), m.send_displ.data(), type, m.recv_buf.data(), m.exec_recv_count.data(),
             m.recv_displ.data(), type);
  else
    ex.execute(m.send_buf.data(), m.exec_send_count.data(), m.send_displ.data(), type, m.recv_buf.data(), m.exec_recv_count.data(),
               m.recv_displ.data(), type);
  return ex;
}

Op scatter_op(Scalar t, MPI_Op mpi_op) {
  const Op op = op_of(mpi_op);
  if (op != Op::replace && (t.kind == Kind::other || t.kind == Kind::bytes))
    throw Error(Error::Kind::usage, 0, "scatter: MPI_SUM, MPI_MAX and MPI_MIN need an integer or floating datatype (MPI_REPLACE takes any)");
  return op;
}

// Scatter's first half, the reverse of gather's: needed values packed in the receive layout, sent
// back to the send layout.
Executor& scatter_start(Pattern::Impl& m, const void* needed_values, MPI_Datatype type, Scalar t, bool split) {
  Executor& ex = m.executor(true, t.size);
  m.size_buffers(t.size);
  move_elements<true>(m.recv_buf.data(), static_cast<const unsigned char*>(needed_values), m.recv_slot, static_cast<std::size_t>(t.size));
  m.copy_self(m.send_buf.data(), m.send_displ, m.recv_buf.data(), m.recv_displ, t.size);
  if (split)
    ex.start(m.recv_buf.data(), m.exec_recv_count.data(), m.recv_displ.data(), type, m.send_buf.data(), m.exec_send_count.data(),
             m.send_displ.data(), type);
  else
    ex.execute(m.recv_buf.data(), m.exec_recv_count.data(), m.recv_displ.data(), type, m.send_buf.data(), m.exec_send_count.data(),
               m.send_displ.data(), type);
  return ex;
}

}  // namespace

void Pattern::gather(const void* owned_values, void* needed_values, MPI_Datatype type) {
  Impl& m = *impl_;
  m.refuse_if_pending("gather");
  const Scalar t = scalar_of(type, "gather");
  gather_start(m, owned_values, type, t, false);
  move_elements<false>(static_cast<unsigned char*>(needed_values), m.recv_buf.data(), m.recv_slot, static_cast<std::size_t>(t.size));
}

void Pattern::scatter(const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op mpi_op) {
  Impl& m = *impl_;
  m.refuse_if_pending("scatter");
  const Scalar t = scalar_of(type, "scatter");
  const Op op = scatter_op(t, mpi_op);
  scatter_start(m, needed_values, type, t, false);
  reduce_back(static_cast<unsigned char*>(owned_values), m.send_buf.data(), m.send_index, t, op);
}

void Pattern::gather_begin(const void* owned_values, void* needed_values, MPI_Datatype type) {
  Impl& m = *impl_;
  m.refuse_if_pending("gather_begin");
  const Scalar t = scalar_of(type, "gather_begin");
  Executor& ex = gather_start(m, owned_values, type, t, true);
  m.pending = {Impl::Pending::What::gather, &ex, needed_values, t, Op::replace};
}

void Pattern::gather_end() {
  Impl& m = *impl_;
  m.expect_pending(Impl::Pending::What::gather, "gather_end");
  const Impl::Pending pd = std::exchange(m.pending, Impl::Pending{});
  pd.ex->finish();
  move_elements<false>(static_cast<unsigned char*>(pd.out), m.recv_buf.data(), m.recv_slot, static_cast<std::size_t>(pd.type.size));
}

void Pattern::scatter_begin(const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op mpi_op) {
  Impl& m = *impl_;
  m.refuse_if_pending("scatter_begin");
  const Scalar t = scalar_of(type, "scatter_begin");
  const Op op = scatter_op(t, mpi_op);
  Executor& ex = scatter_start(m, needed_values, type, t, true);
  m.pending = {Impl::Pending::What::scatter, &ex, owned_values, t, op};
}

void Pattern::scatter_end() {
  Impl& m = *impl_;
  m.expect_pending(Impl::Pending::What::scatter, "scatter_end");
  const Impl::Pending pd = std::exchange(m.pending, Impl::Pending{});
  pd.ex->finish();
  reduce_back(static_cast<unsigned char*>(pd.out), m.send_buf.data(), m.send_index, pd.type, pd.op);
}

}  // namespace commfit::runtime

// The C binding: exceptions to the executor's status codes and per-thread message (the C API's
// support in backends/exec/exec_support.h, shared with runtime/c_api_plan.cpp).
struct commfit_pattern {
  commfit::runtime::Pattern pattern;
};

using namespace commfit::exec::c_api;

extern "C" {

int commfit_pattern_from_ids(MPI_Comm comm, int64_t n_owned, const int64_t* owned, int64_t n_needed, const int64_t* needed,
                             const char* plan_options, commfit_pattern** out) {
  if (!out) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_from_ids: out is NULL");
  *out = nullptr;
  // This rank's own problems travel through the first agreement: the other ranks are in the call.
  std::string error;
  if (n_owned < 0 || n_needed < 0) error = "commfit_pattern_from_ids: a negative count of ids";
  else if ((n_owned > 0 && !owned) || (n_needed > 0 && !needed)) error = "commfit_pattern_from_ids: the ids are NULL";
  if (!error.empty()) n_owned = n_needed = 0;
  return guarded([&] {
    std::span<const std::int64_t> o(owned, static_cast<std::size_t>(n_owned)), n(needed, static_cast<std::size_t>(n_needed));
    *out = new commfit_pattern{commfit::runtime::Pattern(commfit::runtime::build(comm, o, n, plan_options ? plan_options : "", error))};
  });
}

int commfit_pattern_gather(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Datatype type) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_gather: the pattern is NULL");
  return guarded([&] { p->pattern.gather(owned_values, needed_values, type); });
}

int commfit_pattern_scatter(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op op) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_scatter: the pattern is NULL");
  return guarded([&] { p->pattern.scatter(needed_values, owned_values, type, op); });
}

int commfit_pattern_gather_begin(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Datatype type) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_gather_begin: the pattern is NULL");
  return guarded([&] { p->pattern.gather_begin(owned_values, needed_values, type); });
}

int commfit_pattern_gather_end(commfit_pattern* p) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_gather_end: the pattern is NULL");
  return guarded([&] { p->pattern.gather_end(); });
}

int commfit_pattern_scatter_begin(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op op) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_scatter_begin: the pattern is NULL");
  return guarded([&] { p->pattern.scatter_begin(needed_values, owned_values, type, op); });
}

int commfit_pattern_scatter_end(commfit_pattern* p) {
  if (!p) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_pattern_scatter_end: the pattern is NULL");
  return guarded([&] { p->pattern.scatter_end(); });
}

void commfit_pattern_free(commfit_pattern** p) {
  if (!p) return;
  delete *p;
  *p = nullptr;
}

// The Fortran entry points (runtime/commfit_pattern.f90): the same functions on Fortran MPI handles.
int commfit_pattern_from_ids_f(MPI_Fint comm, int64_t n_owned, const int64_t* owned, int64_t n_needed, const int64_t* needed,
                               const char* plan_options, commfit_pattern** out) {
  return commfit_pattern_from_ids(MPI_Comm_f2c(comm), n_owned, owned, n_needed, needed, plan_options, out);
}

int commfit_pattern_gather_f(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Fint type) {
  return commfit_pattern_gather(p, owned_values, needed_values, MPI_Type_f2c(type));
}

int commfit_pattern_scatter_f(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Fint type, MPI_Fint op) {
  return commfit_pattern_scatter(p, needed_values, owned_values, MPI_Type_f2c(type), MPI_Op_f2c(op));
}

int commfit_pattern_gather_begin_f(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Fint type) {
  return commfit_pattern_gather_begin(p, owned_values, needed_values, MPI_Type_f2c(type));
}

int commfit_pattern_gather_end_f(commfit_pattern* p) { return commfit_pattern_gather_end(p); }

int commfit_pattern_scatter_begin_f(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Fint type, MPI_Fint op) {
  return commfit_pattern_scatter_begin(p, needed_values, owned_values, MPI_Type_f2c(type), MPI_Op_f2c(op));
}

int commfit_pattern_scatter_end_f(commfit_pattern* p) { return commfit_pattern_scatter_end(p); }

}  // extern "C"
