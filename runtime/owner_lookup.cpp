// Owner lookup (runtime/owner_lookup.hpp): the distributed directory of Pinar and Hendrickson's
// Fig. 1, their ring and k-dimensional torus algorithms (§2.1), and the sparse exchange (the
// reverse step) that the rings' answers and the directory's registrations and queries travel by.
#include "runtime/owner_lookup.hpp"

#include "backends/exec/exec_support.h"
#include "ir/error.h"
#include "ir/random.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

namespace commfit::runtime {

using exec::agree;
using exec::Error;
using exec::raise_agreed;

namespace {

using I64 = std::int64_t;

// One table names every method and drives the option's parsing and its error message.
struct MethodEntry {
  const char* name;
  LookupMethod method;
  int dims;   // the rings: grid dimensions; 0 for the directories
};
constexpr MethodEntry kMethods[] = {
    {"directory", LookupMethod::directory, 0},        // Fig. 1, ids hashed to directory ranks
    {"directory-block", LookupMethod::directory_block, 0},   // Fig. 1, blocks of consecutive ids (as in §2.2)
    {"ring", LookupMethod::ring, 1},                  // §2.1: p - 1 steps around one ring
    {"ring2d", LookupMethod::ring2d, 2},              // §2.1: rows, then columns of a 2-D grid
    {"ring3d", LookupMethod::ring3d, 3},
    {"ring4d", LookupMethod::ring4d, 4},
};
struct ReverseEntry {
  const char* name;
  ReverseMethod method;
};
constexpr ReverseEntry kReverse[] = {
    {"nbx", ReverseMethod::nbx},                      // MPI_Issend, MPI_Iprobe, MPI_Ibarrier
    {"allreduce", ReverseMethod::allreduce},          // MPI_Allreduce of a p-vector of message counts
    {"reduce-scatter", ReverseMethod::reduce_scatter},   // MPI_Reduce_scatter_block of the same (auto)
};

// Tags on the lookup's communicator: the rings' lists, the reverse step's messages, the directory's
// registrations and queries (a sparse exchange too) and its answers. Each exchange has its own, so
// that a rank done with one cannot have its next messages taken for the last one's.
constexpr int kTagCount = 41, kTagList = 42, kTagReverse = 43, kTagRegister = 44, kTagAnswer = 45;

const char* reverse_name(ReverseMethod m) {
  for (const ReverseEntry& e : kReverse)
    if (e.method == m) return e.name;
  return kReverse[0].name;
}

const MethodEntry& entry(LookupMethod m) {
  for (const MethodEntry& e : kMethods)
    if (e.method == m) return e;
  return kMethods[0];
}

std::string owned_twice(I64 id, I64 rank, I64 a, I64 b) {
  return "id " + std::to_string(id) + " is owned twice by rank " + std::to_string(rank) + " (owned[" + std::to_string(a) + "] and owned[" +
         std::to_string(b) + "])";
}
std::string owned_by_two(I64 id, I64 a, I64 b) {
  return "id " + std::to_string(id) + " is owned by ranks " + std::to_string(std::min(a, b)) + " and " + std::to_string(std::max(a, b));
}
std::string owned_by_none(I64 id, I64 needer, I64 position) {
  return "id " + std::to_string(id) + " is needed by rank " + std::to_string(needer) + " (needed[" + std::to_string(position) + "]) but owned by no rank";
}

// Adds the MPI_Wtime spent in its scope, a collective's, waiting for the last rank to enter it
// included, to `total` (OwnerLookup::collective_seconds).
class CollectiveClock {
 public:
  explicit CollectiveClock(double& total) : total_(total), start_(MPI_Wtime()) {}
  CollectiveClock(const CollectiveClock&) = delete;
  CollectiveClock& operator=(const CollectiveClock&) = delete;
  ~CollectiveClock() { total_ += MPI_Wtime() - start_; }

 private:
  double& total_;
  double start_;
};

// The executor's error agreement (exec::agree, usage errors), its time added to `collective`.
void agree_timed(MPI_Comm comm, const std::string& local, double& collective) {
  const CollectiveClock clock(collective);
  agree(comm, Error::Kind::usage, local);
}

void sort_served(std::vector<Served>& s) {
  std::sort(s.begin(), s.end(), [](const Served& a, const Served& b) { return std::tie(a.needer, a.position) < std::tie(b.needer, b.position); });
}

// ---------------------------------------------------------------------------------------------
// The reverse step: each rank sends out[q] to every other rank q with words for it; no rank knows
// who sends to it. Returns the messages received, by source.
using Messages = std::vector<std::pair<int, std::vector<I64>>>;

// A directory rank's share: the (id, owner, index) registrations it received, `in` being
// [registrations, then (id, index) pairs, then queries] by source rank. Where the ids span a range
// at most kDenseSpan times their number (blocks of consecutive ids: directory-block on dense ids),
// a table indexed by id - lowest, filled in linear time; otherwise the entries sorted by id (the
// hashed directory, sparse ids). Both keep, for an id registered twice, the first two in
// (owner, index) order, and twice() names the smallest such id: the same answers and the same
// error whichever form a rank takes.
class Share {
 public:
  struct Entry {
    I64 id;
    int owner;   // -1: a slot of the table no id took
    I64 index;
  };
  static constexpr I64 kDenseSpan = 4;

  Share() = default;
  explicit Share(const Messages& in) {
    I64 low = std::numeric_limits<I64>::max(), high = std::numeric_limits<I64>::min();
    each_registration(in, [&](const Entry& e) { low = std::min(low, e.id), high = std::max(high, e.id), ++size_; });
    dense_ = size_ > 0 && high - low < kDenseSpan * size_;
    low_ = low;
    if (dense_) entries_.assign(static_cast<std::size_t>(high - low + 1), Entry{0, -1, 0});
    else entries_.reserve(static_cast<std::size_t>(size_));
    each_registration(in, [&](const Entry& e) {
      if (!dense_) return entries_.push_back(e);
      Entry& slot = entries_[static_cast<std::size_t>(e.id - low_)];
      if (slot.owner < 0) slot = e;
      else if (twice_.empty() || e.id < twice_id_) twice_id_ = e.id, twice_ = message(slot, e);
    });
    if (dense_) return;
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return std::tie(a.id, a.owner, a.index) < std::tie(b.id, b.owner, b.index); });
    for (std::size_t i = 1; i < entries_.size() && twice_.empty(); ++i)
      if (entries_[i].id == entries_[i - 1].id) twice_ = message(entries_[i - 1], entries_[i]);
  }
  I64 size() const { return size_; }
  // The id's first registration, or nullptr when nobody registered it.
  const Entry* find(I64 id) const {
    if (dense_) {
      if (id < low_ || id - low_ >= static_cast<I64>(entries_.size())) return nullptr;
      const Entry& e = entries_[static_cast<std::size_t>(id - low_)];
      return e.owner < 0 ? nullptr : &e;
    }
    const auto e = std::lower_bound(entries_.begin(), entries_.end(), id, [](const Entry& x, I64 v) { return x.id < v; });
    return e == entries_.end() || e->id != id ? nullptr : &*e;
  }
  // "directory: id ... owned twice / by two ranks" for the smallest id registered twice, or "".
  const std::string& twice() const { return twice_; }

 private:
  // Calls f with every registration of `in`: sources in increasing rank, each one's ids in
  // increasing index, so (owner, index) order.
  template <class F>
  static void each_registration(const Messages& in, F f) {
    for (const auto& [s, words] : in) {
      if (words.empty()) continue;
      for (I64 n = 0, k = 1; n < words[0]; ++n, k += 2) f(Entry{words[static_cast<std::size_t>(k)], s, words[static_cast<std::size_t>(k + 1)]});
    }
  }
  static std::string message(const Entry& a, const Entry& b) {
    return "directory: " + (a.owner == b.owner ? owned_twice(a.id, a.owner, a.index, b.index) : owned_by_two(a.id, a.owner, b.owner));
  }
  std::vector<Entry> entries_;
  I64 size_ = 0, low_ = 0, twice_id_ = 0;
  bool dense_ = false;
  std::string twice_;
};

std::vector<I64> receive_any(MPI_Comm comm, int tag, int& source, bool probe_only, bool& got) {
  MPI_Status st;
  int flag = 1;
  if (probe_only) MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st);
  else MPI_Probe(MPI_ANY_SOURCE, tag, comm, &st);
  got = flag != 0;
  if (!got) return {};
  int n = 0;
  MPI_Get_count(&st, MPI_INT64_T, &n);
  source = st.MPI_SOURCE;
  std::vector<I64> v(static_cast<std::size_t>(n));
  MPI_Recv(v.data(), n, MPI_INT64_T, source, tag, comm, MPI_STATUS_IGNORE);
  return v;
}

Messages sparse_exchange(MPI_Comm comm, ReverseMethod how, const std::vector<std::vector<I64>>& out, int tag, double& collective) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  Messages got;
  std::vector<MPI_Request> sends;
  std::vector<int> targets(static_cast<std::size_t>(p), 0);
  for (int q = 0; q < p; ++q) targets[static_cast<std::size_t>(q)] = q != me && !out[static_cast<std::size_t>(q)].empty();
  const auto post = [&](bool synchronous) {
    for (int q = 0; q < p; ++q) {
      if (!targets[static_cast<std::size_t>(q)]) continue;
      const auto& v = out[static_cast<std::size_t>(q)];
      sends.emplace_back();
      if (synchronous) MPI_Issend(v.data(), static_cast<int>(v.size()), MPI_INT64_T, q, tag, comm, &sends.back());
      else MPI_Isend(v.data(), static_cast<int>(v.size()), MPI_INT64_T, q, tag, comm, &sends.back());
    }
  };
  if (how == ReverseMethod::nbx) {
    // NBX: synchronous sends complete only once matched, so a rank whose sends are all matched
    // enters the non-blocking barrier; when the barrier completes every message has been received.
    post(true);
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool in_barrier = false;
    for (;;) {
      int source = -1;
      bool any = false;
      std::vector<I64> v = receive_any(comm, tag, source, true, any);
      if (any) got.emplace_back(source, std::move(v));
      int done = 0;
      if (!in_barrier) {
        MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
        if (done) MPI_Ibarrier(comm, &barrier), in_barrier = true;
      } else {
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
        if (done) break;
      }
    }
  } else {
    // The number of messages each rank receives: element q of the sum of every rank's 0/1 vector.
    int expect = 0;
    {
      const CollectiveClock clock(collective);
      if (how == ReverseMethod::allreduce) {
        std::vector<int> sum(targets.size());
        MPI_Allreduce(targets.data(), sum.data(), p, MPI_INT, MPI_SUM, comm);
        expect = sum[static_cast<std::size_t>(me)];
      } else {
        MPI_Reduce_scatter_block(targets.data(), &expect, 1, MPI_INT, MPI_SUM, comm);
      }
    }
    post(false);
    for (int n = 0; n < expect; ++n) {
      int source = -1;
      bool any = false;
      std::vector<I64> v = receive_any(comm, tag, source, false, any);
      got.emplace_back(source, std::move(v));
    }
    MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  }
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return got;
}

// ---------------------------------------------------------------------------------------------
// The distributed directory (Fig. 1). `home(id)` is the id's directory rank, the same on every rank.
// Each rank talks only to the directory ranks that hold its ids, and each directory rank answers
// only the ranks that registered or queried there: the first round is a sparse exchange (the
// receiver does not know who will register or query; solved by `how`), the second its mirror
// image, whose senders and receivers both know each other from the first.
// `may_overflow`: whether some rank has enough ids for one of its messages to exceed MPI's int
// counts (agreed by find_owners); only then is there an agreement before the ids move.
template <class Home>
OwnerLookup directory(MPI_Comm comm, std::span<const I64> owned, std::span<const I64> needed, Home home, ReverseMethod how, bool may_overflow,
                      double& collective) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::size_t P = static_cast<std::size_t>(p);
  OwnerLookup r;
  std::string local;

  // 1. Owners register (id, index) and needers query (id, position) at each id's directory rank:
  //    one message per directory rank with ids of this rank, [registrations, then the
  //    registrations' (id, index), then the queries' (id, position)]; none to the others.
  std::vector<I64> reg(P), qry(P);
  for (I64 id : owned) ++reg[static_cast<std::size_t>(home(id))];
  for (I64 id : needed) ++qry[static_cast<std::size_t>(home(id))];
  std::vector<std::vector<I64>> out(P);
  for (std::size_t d = 0; d < P; ++d) {
    if (reg[d] + qry[d] == 0) continue;
    const I64 words = 1 + 2 * (reg[d] + qry[d]);
    if (words > INT_MAX && local.empty())
      local = "the directory's registrations and queries would send " + std::to_string(words) + " words in one message, more than MPI's 2^31 - 1";
    out[d].reserve(static_cast<std::size_t>(words));
    out[d].push_back(reg[d]);
  }
  if (may_overflow) agree_timed(comm, local, collective);   // the same on every rank
  for (std::size_t i = 0; i < owned.size(); ++i) {
    std::vector<I64>& v = out[static_cast<std::size_t>(home(owned[i]))];
    v.insert(v.end(), {owned[i], static_cast<I64>(i)});
  }
  for (std::size_t j = 0; j < needed.size(); ++j) {
    std::vector<I64>& v = out[static_cast<std::size_t>(home(needed[j]))];
    v.insert(v.end(), {needed[j], static_cast<I64>(j)});
  }
  Messages in = sparse_exchange(comm, how, out, kTagRegister, collective);
  in.emplace(std::lower_bound(in.begin(), in.end(), me, [](const auto& m, int v) { return m.first < v; }), me, std::move(out[static_cast<std::size_t>(me)]));
  std::vector<int> asked;   // the directory ranks this rank wrote to: they answer
  for (int d = 0; d < p; ++d)
    if (d != me && !out[static_cast<std::size_t>(d)].empty()) asked.push_back(d);
  out = {};

  // 2. The directory: this rank's share of the ids, checked for double ownership; every query
  //    answered to its needer (owner, index) and told to the owner (needer, position, index).
  Share dir(in);
  r.directory_ids = dir.size();
  if (local.empty()) local = dir.twice();
  // The reply to each rank that wrote here: [answers, then its answers' (owner, index) in the
  // order of its queries, then (needer, position, index) for each of its ids needed]. Every rank
  // that wrote gets one, empty or not: it waits for it.
  std::vector<std::pair<int, std::vector<I64>>> replies;   // by rank
  for (const auto& [s, words] : in) replies.emplace_back(s, std::vector<I64>{0});
  std::vector<std::vector<I64>> notices(in.size());   // by the owner's place in `in`
  for (std::size_t m = 0; m < in.size(); ++m) {
    const auto& [s, words] = in[m];
    if (words.empty()) continue;
    std::vector<I64>& answers = replies[m].second;
    for (std::size_t k = 1 + 2 * static_cast<std::size_t>(words[0]); k + 1 < words.size(); k += 2) {
      const I64 id = words[k], j = words[k + 1];
      const Share::Entry* e = dir.find(id);
      if (e == nullptr) {
        if (local.empty()) local = "directory: " + owned_by_none(id, s, j);
        continue;
      }
      answers.insert(answers.end(), {I64{e->owner}, e->index});
      ++answers[0];
      std::vector<I64>& to_owner = notices[static_cast<std::size_t>(std::lower_bound(in.begin(), in.end(), e->owner, [](const auto& x, int v) { return x.first < v; }) - in.begin())];
      to_owner.insert(to_owner.end(), {s, j, e->index});
    }
  }
  in = {}, dir = {};
  for (std::size_t m = 0; m < replies.size(); ++m) {
    replies[m].second.insert(replies[m].second.end(), notices[m].begin(), notices[m].end());
    notices[m] = {};
    if (replies[m].second.size() > INT_MAX && local.empty())
      local = "the directory's answers would send " + std::to_string(replies[m].second.size()) + " words in one message, more than MPI's 2^31 - 1";
  }
  agree_timed(comm, local, collective);

  // 3. The replies: this directory rank sends one to each rank that wrote to it; this rank
  //    receives one from each directory rank it wrote to (and its own, locally).
  std::vector<MPI_Request> sends;
  sends.reserve(replies.size());
  for (const auto& [s, words] : replies) {
    if (s == me) continue;
    sends.emplace_back();
    MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T, s, kTagAnswer, comm, &sends.back());
  }
  Messages back;
  back.reserve(asked.size() + 1);
  for (std::size_t n = 0; n < asked.size(); ++n) {
    int source = -1;
    bool any = false;
    std::vector<I64> v = receive_any(comm, kTagAnswer, source, false, any);
    back.emplace_back(source, std::move(v));
  }
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  for (auto& [s, words] : replies)
    if (s == me) back.emplace_back(me, std::move(words));
  replies = {};
  std::sort(back.begin(), back.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // 4. Needer: the answers come from each directory rank in the order this rank queried it
  //    (needed[] order). Owner: the notices after the answers.
  std::vector<std::size_t> from(P, 0);   // per directory rank: the next answer's word in its reply
  std::vector<const std::vector<I64>*> reply_of(P, nullptr);
  for (const auto& [d, words] : back) reply_of[static_cast<std::size_t>(d)] = &words, from[static_cast<std::size_t>(d)] = 1;
  r.owner.resize(needed.size()), r.owner_index.resize(needed.size());
  for (std::size_t j = 0; j < needed.size(); ++j) {
    const auto d = static_cast<std::size_t>(home(needed[j]));
    const std::vector<I64>& v = *reply_of[d];
    r.owner[j] = static_cast<int>(v[from[d]]), r.owner_index[j] = v[from[d] + 1], from[d] += 2;
  }
  for (const auto& [d, words] : back)
    for (std::size_t k = 1 + 2 * static_cast<std::size_t>(words[0]); k + 3 <= words.size(); k += 3)
      r.served.push_back({words[k], words[k + 1], words[k + 2]});
  sort_served(r.served);
  return r;
}

// find_owners' one agreement, one element of kAgreedWords words: the options' words, the largest
// id, the first rank with a problem of its own (p - rank; 0 for none) and the most ids one rank
// gives (the largest of the first seven words), and the ids owned (the sum of the eighth).
constexpr int kAgreedWords = 8;
void max_max_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const I64* a = static_cast<const I64*>(in);
  I64* b = static_cast<I64*>(inout);
  for (int e = 0; e < *len; ++e, a += kAgreedWords, b += kAgreedWords) {
    for (int k = 0; k < kAgreedWords - 1; ++k) b[k] = std::max(a[k], b[k]);
    b[kAgreedWords - 1] += a[kAgreedWords - 1];
  }
}

int hashed_home(I64 id, int p) { return static_cast<int>(splitmix64(static_cast<std::uint64_t>(id)) % static_cast<std::uint64_t>(p)); }

// ---------------------------------------------------------------------------------------------
// The ring (dims = 1) and the k-dimensional torus algorithms (§2.1). The ranks sit on a grid of
// MPI_Dims_create(p, dims) (as near-cubic as p allows; a prime p gives p x 1 x ...: one ring, the
// dimensions of extent 1 cost nothing). Along each dimension in turn, the lists travel around the
// ring of that dimension (extent - 1 steps); every rank answers each list it receives from its own
// ids, and, except in the last dimension, aggregates the lists it received with its own: the
// aggregate is what travels along the next dimension. Every rank thus sees every other rank's
// list exactly once. A list is (id, needer, position) triples.
OwnerLookup ring(MPI_Comm comm, std::span<const I64> owned, std::span<const I64> needed, int ndims, ReverseMethod reverse,
                 const char* name, double& collective) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  const std::size_t P = static_cast<std::size_t>(p);
  const std::string prefix = std::string(name) + ": ";
  OwnerLookup r;
  std::string local;

  std::vector<int> dims(static_cast<std::size_t>(ndims), 0);
  if (ndims == 1) dims[0] = p;
  else MPI_Dims_create(p, ndims, dims.data());
  int last = -1;   // the last dimension with a ring to run
  for (int i = 0; i < ndims; ++i)
    if (dims[static_cast<std::size_t>(i)] > 1) last = i;

  // This rank's ids, sorted for the answers; an id it owns twice is its own to report.
  std::vector<std::pair<I64, I64>> mine(owned.size());   // (id, index)
  for (std::size_t i = 0; i < owned.size(); ++i) mine[i] = {owned[i], static_cast<I64>(i)};
  std::sort(mine.begin(), mine.end());
  for (std::size_t i = 1; i < mine.size() && local.empty(); ++i)
    if (mine[i].first == mine[i - 1].first) local = prefix + owned_twice(mine[i].first, me, mine[i - 1].second, mine[i].second);

  // The largest list that travels: the aggregate of prod(extents before the last) lists, each no
  // longer than the longest needed[] (one MPI_Allreduce), must fit MPI's int counts.
  {
    const CollectiveClock clock(collective);
    I64 longest = static_cast<I64>(needed.size());
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_INT64_T, MPI_MAX, comm);
    I64 lists = 1;
    for (int i = 0; i < last; ++i) lists *= dims[static_cast<std::size_t>(i)];
    if (local.empty() && 3 * longest > INT_MAX / std::max<I64>(lists, 1))
      local = prefix + "the lists would reach " + std::to_string(3 * longest * lists) + " words, more than MPI's 2^31 - 1";
    agree(comm, Error::Kind::usage, local);
  }

  const auto answer = [&](const std::vector<I64>& list) {
    for (std::size_t k = 0; k < list.size(); k += 3) {
      const auto e = std::lower_bound(mine.begin(), mine.end(), std::pair<I64, I64>{list[k], -1});
      if (e != mine.end() && e->first == list[k]) r.served.push_back({list[k + 1], list[k + 2], e->second});
    }
  };
  std::vector<I64> held;   // this rank's list, then the aggregate of the dimensions done
  held.reserve(3 * needed.size());
  for (std::size_t j = 0; j < needed.size(); ++j) held.insert(held.end(), {needed[j], I64{me}, static_cast<I64>(j)});
  answer(held);   // the ids this rank needs of its own
  int stride = 1;
  for (int i = 0; i <= last; ++i) {
    const int extent = dims[static_cast<std::size_t>(i)];
    const int c = (me / stride) % extent;
    const int next = me + (((c + 1) % extent) - c) * stride, prev = me + (((c + extent - 1) % extent) - c) * stride;
    std::vector<I64> passing = held, aggregate = (i < last) ? held : std::vector<I64>{};
    for (int step = 1; step < extent; ++step) {
      // (1) receive a list from the previous rank, (2) answer it, (3) pass it on.
      I64 n_out = static_cast<I64>(passing.size()), n_in = 0;
      MPI_Sendrecv(&n_out, 1, MPI_INT64_T, next, kTagCount, &n_in, 1, MPI_INT64_T, prev, kTagCount, comm, MPI_STATUS_IGNORE);
      std::vector<I64> incoming(static_cast<std::size_t>(n_in));
      MPI_Sendrecv(passing.data(), static_cast<int>(n_out), MPI_INT64_T, next, kTagList, incoming.data(), static_cast<int>(n_in), MPI_INT64_T, prev,
                   kTagList, comm, MPI_STATUS_IGNORE);
      answer(incoming);
      if (i < last) aggregate.insert(aggregate.end(), incoming.begin(), incoming.end());
      passing = std::move(incoming);
    }
    held = std::move(aggregate);
    stride *= extent;
  }
  held = {};

  // The reverse step: each owner tells each needer (position, index) for what it serves; the needer
  // checks that every position has exactly one answer.
  sort_served(r.served);
  std::vector<std::vector<I64>> out(P);
  for (const Served& s : r.served) out[static_cast<std::size_t>(s.needer)].insert(out[static_cast<std::size_t>(s.needer)].end(), {s.position, s.index});
  for (const std::vector<I64>& v : out)
    if (v.size() > INT_MAX && local.empty()) local = prefix + "the reverse step would send " + std::to_string(v.size()) + " words in one message, more than MPI's 2^31 - 1";
  agree_timed(comm, local, collective);
  const double reverse_start = MPI_Wtime();
  Messages got = sparse_exchange(comm, reverse, out, kTagReverse, collective);
  r.reverse_seconds = MPI_Wtime() - reverse_start;
  got.emplace(std::lower_bound(got.begin(), got.end(), me, [](const auto& m, int v) { return m.first < v; }), me, std::move(out[static_cast<std::size_t>(me)]));
  out = {};
  r.owner.assign(needed.size(), -1), r.owner_index.assign(needed.size(), -1);
  for (const auto& [source, words] : got)
    for (std::size_t k = 0; k + 1 < words.size(); k += 2) {
      const auto j = static_cast<std::size_t>(words[k]);
      if (r.owner[j] >= 0) {
        if (local.empty()) local = prefix + owned_by_two(needed[j], r.owner[j], source);
        continue;
      }
      r.owner[j] = source, r.owner_index[j] = words[k + 1];
    }
  for (std::size_t j = 0; j < needed.size() && local.empty(); ++j)
    if (r.owner[j] < 0) local = prefix + owned_by_none(needed[j], me, static_cast<I64>(j));
  agree_timed(comm, local, collective);
  return r;
}

}  // namespace

const char* lookup_name(LookupMethod method) { return method == LookupMethod::automatic ? "auto" : entry(method).name; }

// What the measurements support (docs/PERFORMANCE.md "Finding owners from global ids", METIS
// parts of two meshes on fat trees of 4 to 256 ranks, their ids numbered by mesh entity and part by
// part): blocks of consecutive ids when the ids are dense enough to fill the blocks evenly and no
// rank's ids fall in more than kFewDirectoryRanks other ranks' blocks (always so up to
// kFewDirectoryRanks + 1 ranks); otherwise the hashed directory up to 16 ranks, ring4d at 64 and
// 256 ranks when its grid has no dimension of extent 1 (otherwise it is a lesser ring); beyond 256
// ranks, not measured, the directory, whose work per rank does not grow with p where every ring's
// does.
LookupMethod auto_lookup(int p, const BlockStatistic& ids) {
  const bool dense = ids.top < 2 * ids.owned_ids;   // at least half of 0 .. top owned
  if (dense && (p <= kFewDirectoryRanks + 1 || ids.ranks_above == 0)) return LookupMethod::directory_block;
  if (p < 64 || p > 256) return LookupMethod::directory;
  int dims[4] = {0, 0, 0, 0};
  MPI_Dims_create(p, 4, dims);
  return *std::min_element(std::begin(dims), std::end(dims)) > 1 ? LookupMethod::ring4d : LookupMethod::directory;
}

LookupOptions take_lookup_options(std::string& spec) {
  LookupOptions o;
  std::istringstream words(spec);
  std::string rest;
  for (std::string word; words >> word;) {
    const std::size_t eq = word.find('=');
    const std::string key = eq == std::string::npos ? word : word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    // "auto", or one of the table's names; otherwise refused with the list.
    auto pick = [&](const auto& table, auto auto_value, auto& field, const char* what) {
      std::string list = "auto";
      bool found = value == "auto";
      if (found) field = auto_value;
      for (const auto& e : table) {
        list += std::string(", ") + e.name;
        if (value == e.name) field = e.method, found = true;
      }
      if (!found) throw UsageError(key + "=" + value + ": expected " + what + " (" + list + ")");
    };
    if (key == "lookup") {
      pick(kMethods, LookupMethod::automatic, o.method, "an owner lookup method");
    } else if (key == "reverse") {
      pick(kReverse, ReverseMethod::reduce_scatter, o.reverse, "a reverse-step method");
    } else {
      rest += (rest.empty() ? "" : " ") + word;
    }
  }
  spec = rest;
  return o;
}

OwnerLookup find_owners(MPI_Comm comm, std::span<const I64> owned, std::span<const I64> needed, const LookupOptions& options,
                        const std::string& local_error) {
  int p = 0, me = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  // Every rank must run the same method (one MPI_Allreduce; the first collective of each method
  // differs, so a difference would hang): when they differ, every rank stops here. The same
  // reduction raises the caller's local_error (the lowest rank's), before any id moves, and finds
  // the largest id (the directory's blocks), the most ids one rank gives (whether a directory
  // message could exceed MPI's int counts) and the ids owned in all (lookup=auto's density).
  double collective = 0;
  I64 top = -1;
  for (I64 id : owned) top = std::max(top, id);
  for (I64 id : needed) top = std::max(top, id);
  I64 all[kAgreedWords] = {static_cast<I64>(options.method),
                           -static_cast<I64>(options.method),
                           static_cast<I64>(options.reverse),
                           -static_cast<I64>(options.reverse),
                           top,
                           local_error.empty() ? 0 : I64{p} - me,
                           static_cast<I64>(owned.size() + needed.size()),
                           static_cast<I64>(owned.size())};
  {
    const CollectiveClock clock(collective);
    MPI_Datatype words;
    MPI_Op op;
    MPI_Type_contiguous(kAgreedWords, MPI_INT64_T, &words);
    MPI_Type_commit(&words);
    MPI_Op_create(&max_max_sum, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, all, 1, words, op, comm);
    MPI_Op_free(&op);
    MPI_Type_free(&words);
  }
  if (all[5] > 0) raise_agreed(comm, p - static_cast<int>(all[5]), Error::Kind::usage, local_error);   // the same on every rank
  if (all[0] != -all[1] || all[2] != -all[3]) {   // the same on every rank: all agree here
    agree(comm, Error::Kind::usage,
          std::string("the owner lookup options differ between ranks (here lookup=") + lookup_name(options.method) + " reverse=" +
              reverse_name(options.reverse) + "); every rank must give the same lookup= and reverse=");
  }
  const bool may_overflow = 1 + 2 * all[6] > INT_MAX;
  top = all[4];
  // Blocks of consecutive ids, as the paper's experiments assign them: the largest id split into p
  // blocks of top / p + 1 ids.
  const I64 block = std::max<I64>(1, top / p + 1);
  const auto block_home = [p, block](I64 id) { return static_cast<int>(std::min<I64>(id / block, p - 1)); };
  LookupMethod method = options.method;
  if (method == LookupMethod::automatic) {
    BlockStatistic ids{top, all[kAgreedWords - 1], 0};
    if (ids.top < 2 * ids.owned_ids && p > kFewDirectoryRanks + 1) {
      // Where the blocks could spread: one MPI_Allreduce of the ranks whose ids fall in more than
      // kFewDirectoryRanks other ranks' blocks.
      std::vector<char> seen(static_cast<std::size_t>(p), 0);
      for (I64 id : owned) seen[static_cast<std::size_t>(block_home(id))] = 1;
      for (I64 id : needed) seen[static_cast<std::size_t>(block_home(id))] = 1;
      seen[static_cast<std::size_t>(me)] = 0;
      ids.ranks_above = std::count(seen.begin(), seen.end(), 1) > kFewDirectoryRanks ? 1 : 0;
      const CollectiveClock clock(collective);
      MPI_Allreduce(MPI_IN_PLACE, &ids.ranks_above, 1, MPI_INT64_T, MPI_SUM, comm);
    }
    method = auto_lookup(p, ids);
  }
  const MethodEntry& m = entry(method);
  OwnerLookup r;
  if (m.dims > 0) r = ring(comm, owned, needed, m.dims, options.reverse, m.name, collective);
  else if (method == LookupMethod::directory)
    r = directory(comm, owned, needed, [p](I64 id) { return hashed_home(id, p); }, options.reverse, may_overflow, collective);
  else r = directory(comm, owned, needed, block_home, options.reverse, may_overflow, collective);
  r.method = method;
  r.collective_seconds = collective;
  return r;
}

}  // namespace commfit::runtime
