#include "passes/verify.h"

#include "ir/error.h"

#include <algorithm>
#include <limits>
#include <tuple>

// Time and memory in proportion to the steps and the messages, in flat arrays: each rank's steps
// are in step_less order (the format checks see to it before any rule is checked), so a message's
// sends and its receives are one run of steps on each side, and walking the messages in (phase,
// from, to) order meets each receiver's runs in its own step order; the matrix is read through its
// rows and the verifier's own transpose. No map and no sort of all steps.
// Everything here is the verifier's own: it reads the plan and the matrix, never what the passes
// built to make them.
namespace commfit {
namespace {

// A network transfer as one side of it sees it; rule 3 reports in the order of key().
struct Half {
  Phase phase;
  Rank from, to, src, dst;
  Bytes offset, bytes;
  auto key() const { return std::tie(phase, from, to, src, dst, offset, bytes); }
};

constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

std::string piece_text(Rank src, Rank dst, Bytes offset, Bytes bytes) {
  return "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ") of " +
         std::to_string(src) + "->" + std::to_string(dst);
}

class Checker {
 public:
  Checker(const Plan& plan, const CommMatrix& m, const VerifyRules& rules)
      : plan_(plan), m_(m), rules_(rules) {}

  std::vector<std::string> run() {
    if (!format()) return problems_;
    matching();
    contention();
    delivery();
    holding();
    if (rules_.memory && !m_.memory.empty()) memory();
    return problems_;
  }

 private:
  bool full() const { return problems_.size() >= rules_.max_problems; }
  void problem(const std::string& s) {
    if (!full()) problems_.push_back(s);
  }

  // --- The matrix as the verifier reads it: its rows (m.com, compressed) and its own transpose.
  // A message is named by its number: its place in the row-major order of m.com, so (src, dst) order.
  void transpose() {
    const Rank p = m_.ranks;
    commfit_assert(m_.com.isCompressed() && m_.nnz() < kAbsent, "verify", "the matrix is not compressed or has 2^32 entries");
    const auto* row = m_.com.outerIndexPtr();
    const auto* col = m_.com.innerIndexPtr();
    col_start_.assign(static_cast<std::size_t>(p) + 1, 0);
    for (std::int64_t x = 0; x < m_.nnz(); ++x) ++col_start_[col[x] + 1];
    for (Rank j = 0; j < p; ++j) col_start_[j + 1] += col_start_[j];
    col_src_.resize(static_cast<std::size_t>(m_.nnz()));
    col_msg_.resize(static_cast<std::size_t>(m_.nnz()));
    std::vector<std::int64_t> next(col_start_.begin(), col_start_.end() - 1);
    for (Rank i = 0; i < p; ++i)
      for (std::int64_t x = row[i]; x < row[i + 1]; ++x) {
        const std::int64_t at = next[col[x]]++;
        col_src_[at] = i;
        col_msg_[at] = static_cast<std::uint32_t>(x);
      }
    row_at_.assign(static_cast<std::size_t>(p), kAbsent);
    col_at_.assign(static_cast<std::size_t>(p), kAbsent);
  }
  // While rank r is bound, its row and column are looked up in O(1): row_at_[dst] and
  // col_at_[src] hold message numbers. Binding and unbinding touch only r's entries.
  void bind(Rank r) {
    for (std::int64_t x = m_.com.outerIndexPtr()[r]; x < m_.com.outerIndexPtr()[r + 1]; ++x)
        row_at_[m_.com.innerIndexPtr()[x]] = static_cast<std::uint32_t>(x);
    for (std::int64_t x = col_start_[r]; x < col_start_[r + 1]; ++x) col_at_[col_src_[x]] = col_msg_[x];
  }
  void unbind(Rank r) {
    for (std::int64_t x = m_.com.outerIndexPtr()[r]; x < m_.com.outerIndexPtr()[r + 1]; ++x) row_at_[m_.com.innerIndexPtr()[x]] = kAbsent;
    for (std::int64_t x = col_start_[r]; x < col_start_[r + 1]; ++x) col_at_[col_src_[x]] = kAbsent;
  }
  // The number of message src -> dst, kAbsent when the matrix has none; r is the bound rank.
  std::uint32_t message(Rank r, Rank src, Rank dst) const {
    if (src == r) return row_at_[dst];
    if (dst == r) return col_at_[src];
    const auto* begin = m_.com.innerIndexPtr() + m_.com.outerIndexPtr()[src];
    const auto* end = m_.com.innerIndexPtr() + m_.com.outerIndexPtr()[src + 1];
    const auto* it = std::lower_bound(begin, end, static_cast<std::int64_t>(dst));
    return it != end && *it == dst ? static_cast<std::uint32_t>(it - m_.com.innerIndexPtr()) : kAbsent;
  }
  bool is_row(const std::vector<PeerBytes>& list, Rank r) const {
    const std::int64_t b = m_.com.outerIndexPtr()[r], e = m_.com.outerIndexPtr()[r + 1];
    if (list.size() != static_cast<std::size_t>(e - b)) return false;
    for (std::int64_t x = b; x < e; ++x)
      if (list[x - b].peer != m_.com.innerIndexPtr()[x] || list[x - b].bytes != m_.com.valuePtr()[x]) return false;
    return true;
  }
  bool is_column(const std::vector<PeerBytes>& list, Rank r) const {
    const std::int64_t b = col_start_[r], e = col_start_[r + 1];
    if (list.size() != static_cast<std::size_t>(e - b)) return false;
    for (std::int64_t x = b; x < e; ++x)
      if (list[x - b].peer != col_src_[x] || list[x - b].bytes != m_.com.valuePtr()[col_msg_[x]]) return false;
    return true;
  }

  // Format-level checks; false when the plan is too broken for the rules to make sense.
  bool format() {
    const Manifest& mf = plan_.manifest;
    const Rank p = m_.ranks;
    if (mf.ranks != p) problem("format: plan is for " + std::to_string(mf.ranks) + " ranks, matrix has " + std::to_string(p));
    if (plan_.ranks.size() != static_cast<std::size_t>(p)) {
      problem("format: plan has " + std::to_string(plan_.ranks.size()) + " rank schedules, expected " + std::to_string(p));
      return false;
    }
    const std::string fp = matrix_fingerprint(m_);
    if (mf.matrix_fingerprint != fp) problem("format: manifest fingerprint " + mf.matrix_fingerprint + " is not the matrix's " + fp);
    transpose();
    Bytes staging_max = 0;
    for (Rank r = 0; r < p && !full(); ++r) {
      const RankSchedule& rs = plan_.ranks[r];
      const std::string who = "rank " + std::to_string(r) + ": ";
      if (rs.rank != r) problem("format: " + who + "schedule names rank " + std::to_string(rs.rank));
      if (rs.ranks != p) problem("format: " + who + "schedule is for " + std::to_string(rs.ranks) + " ranks");
      if (rs.phases != mf.phases) problem("format: " + who + "phase count " + std::to_string(rs.phases) + " differs from the manifest's " + std::to_string(mf.phases));
      if (rs.matrix_fingerprint != fp) problem("format: " + who + "fingerprint is not the matrix's");
      if (!is_row(rs.sends, r)) problem("format: " + who + "\"sends\" is not row " + std::to_string(r) + " of the matrix");
      if (!is_column(rs.recvs, r)) problem("format: " + who + "\"recvs\" is not column " + std::to_string(r) + " of the matrix");
      staging_max = std::max(staging_max, rs.staging_bytes);
      // What the rank's schedule says alone (ir/plan.h). Its rule 2 and 6 problems are reported
      // with holding(), after the rules before them.
      const RankCheckOptions alone{false, true, rules_.max_problems - problems_.size()};   // tiling is rule 1's, below
      bool sound = true;
      for (const ScheduleProblem& q : check_rank_schedule(rs, alone)) {
        if (q.rule == 0) problem("format: " + who + q.place + ": " + q.what), sound = false;
        else held_.push_back("rule " + std::to_string(q.rule) + ": " + who + q.what);
      }
      if (!sound || rs.ranks != p) continue;
      // Staged pieces carry other ranks' messages: only the matrix knows their sizes.
      bind(r);
      for (std::size_t k = 0; k < rs.steps.size(); ++k) {
        const Step& s = rs.steps[k];
        const std::uint32_t x = message(r, s.src, s.dst);
        const Bytes size = x == kAbsent ? 0 : m_.com.valuePtr()[x];
        if (size != 0 && s.offset <= size && s.bytes <= size - s.offset) continue;
        const std::string at = who + "/steps/" + std::to_string(k) + ": ";
        if (size == 0) problem("format: " + at + "message " + std::to_string(s.src) + "->" + std::to_string(s.dst) + " is not in the matrix");
        else problem("format: " + at + piece_text(s.src, s.dst, s.offset, s.bytes) + " lie beyond the message's " + std::to_string(size) + " bytes");
      }
      unbind(r);
    }
    if (mf.staging_bytes_max != staging_max) problem("format: manifest staging_bytes_max " + std::to_string(mf.staging_bytes_max) + " is not the largest rank's " + std::to_string(staging_max));
    return problems_.empty();
  }

  // The messages: each run of one rank's send steps to one peer in one phase, in (phase, from,
  // to) order. Each rank's runs come in (phase, to) order (format() checked step_less order),
  // so a stable counting sort by phase does it: one pass counts, one places.
  void collect_messages() {
    for (const RankSchedule& rs : plan_.ranks)   // Message numbers a rank's steps in 32 bits
      commfit_assert(rs.steps.size() <= std::numeric_limits<std::uint32_t>::max(), "verify", "a rank with more than 2^32 - 1 steps");
    auto each_run = [&](auto&& f) {
      for (const RankSchedule& rs : plan_.ranks)
        for (std::size_t k = 0; k < rs.steps.size();) {
          const std::size_t end = run_end(rs.steps, k);
          if (rs.steps[k].op == Op::send) f(Message{rs.steps[k].phase, rs.rank, rs.steps[k].peer, static_cast<std::uint32_t>(k)});
          k = end;
        }
    };
    std::size_t count = 0;
    Phase phases = 0;
    each_run([&](const Message& x) { ++count, phases = std::max(phases, x.phase + 1); });
    if (phases > 4 * count + 1024) {   // sparse phase numbers: no table per phase
      messages_.reserve(count);
      each_run([&](const Message& x) { messages_.push_back(x); });
      std::stable_sort(messages_.begin(), messages_.end(), [](const Message& x, const Message& y) { return x.phase < y.phase; });
      return;
    }
    std::vector<std::size_t> start(static_cast<std::size_t>(phases) + 1, 0);
    each_run([&](const Message& x) { ++start[x.phase + 1]; });
    for (Phase ph = 0; ph < phases; ++ph) start[ph + 1] += start[ph];
    messages_.resize(count);
    each_run([&](const Message& x) { messages_[start[x.phase]++] = x; });
  }

  // Rule 3: every send step has exactly one matching receive step. A message's receives are one
  // run of its receiver's steps: walking the messages in (phase, from) order, each receiver's
  // runs are met in its own step order, so a cursor per rank finds them. The two runs are merged
  // by piece; receives the cursors pass over match no send. The unmatched are reported in the
  // order of Half::key.
  void matching() {
    collect_messages();
    std::vector<std::size_t> cursor(static_cast<std::size_t>(m_.ranks), 0);
    auto pass_over = [&](Rank r, std::size_t until) {   // receives before `until` that no message reached
      const auto& steps = plan_.ranks[r].steps;
      for (std::size_t& k = cursor[r]; k < until; ++k)
        if (steps[k].op == Op::recv) unmatched_.emplace_back(recv_half(r, steps[k]), false);
    };
    for (const Message& x : messages_) {
      const auto& in = plan_.ranks[x.to].steps;
      const auto want = std::make_tuple(x.phase, op_order(Op::recv), x.from);
      std::size_t first = cursor[x.to];
      while (first < in.size() && std::make_tuple(in[first].phase, op_order(in[first].op), in[first].peer) < want) ++first;
      pass_over(x.to, first);
      const std::size_t last = first < in.size() && in[first].phase == x.phase && in[first].op == Op::recv && in[first].peer == x.from
                                   ? run_end(in, first) : first;
      merge(x.from, x.first, run_end(plan_.ranks[x.from].steps, x.first), x.to, first, last);
      cursor[x.to] = last;
    }
    for (Rank r = 0; r < m_.ranks; ++r) pass_over(r, plan_.ranks[r].steps.size());
    std::stable_sort(unmatched_.begin(), unmatched_.end(), [](const auto& x, const auto& y) { return x.first.key() < y.first.key(); });
    auto describe = [](const Half& h) {
      return "phase " + std::to_string(h.phase) + ", " + std::to_string(h.from) + " -> " + std::to_string(h.to) + ", " + piece_text(h.src, h.dst, h.offset, h.bytes);
    };
    for (std::size_t k = 0; k < unmatched_.size() && !full(); ++k)
      problem(std::string(unmatched_[k].second ? "rule 3: send without a matching receive: " : "rule 3: receive without a matching send: ") +
              describe(unmatched_[k].first));
    std::vector<std::pair<Half, bool>>().swap(unmatched_);
  }

  static int op_order(Op op) { return op == Op::recv ? 0 : op == Op::send ? 1 : 2; }
  static Half send_half(Rank r, const Step& s) { return {s.phase, r, s.peer, s.src, s.dst, s.offset, s.bytes}; }
  static Half recv_half(Rank r, const Step& s) { return {s.phase, s.peer, r, s.src, s.dst, s.offset, s.bytes}; }
  // The end of the run of steps with the (phase, op, peer) of steps[k].
  static std::size_t run_end(const std::vector<Step>& steps, std::size_t k) {
    std::size_t end = k + 1;
    while (end < steps.size() && steps[end].phase == steps[k].phase && steps[end].op == steps[k].op && steps[end].peer == steps[k].peer) ++end;
    return end;
  }
  // Merges the sends [k, end) of rank `from` with the receives [first, last) of rank `to`, one
  // message's, by (src, dst, offset, bytes); the unmatched go to unmatched_.
  void merge(Rank from, std::size_t k, std::size_t end, Rank to, std::size_t first, std::size_t last) {
    const auto& out = plan_.ranks[from].steps;
    const auto& in = plan_.ranks[to].steps;
    auto piece = [](const Step& s) { return std::tie(s.src, s.dst, s.offset, s.bytes); };
    if (end - k == 1 && last - first == 1) {   // one piece each way: the common case
      if (piece(out[k]) != piece(in[first])) {
        unmatched_.emplace_back(send_half(from, out[k]), true);
        unmatched_.emplace_back(recv_half(to, in[first]), false);
      }
      return;
    }
    auto order = [&](const std::vector<Step>& steps, std::size_t a, std::size_t b, std::vector<std::size_t>& v) {
      v.clear();
      for (std::size_t x = a; x < b; ++x) v.push_back(x);
      // step_less leaves steps equal but for their sizes in any order: sort them by size too.
      if (!std::is_sorted(v.begin(), v.end(), [&](std::size_t x, std::size_t y) { return piece(steps[x]) < piece(steps[y]); }))
        std::sort(v.begin(), v.end(), [&](std::size_t x, std::size_t y) { return piece(steps[x]) < piece(steps[y]); });
    };
    order(out, k, end, sends_);
    order(in, first, last, recvs_);
    std::size_t a = 0, b = 0;
    while (a < sends_.size() || b < recvs_.size()) {
      if (b == recvs_.size() || (a < sends_.size() && piece(out[sends_[a]]) < piece(in[recvs_[b]]))) unmatched_.emplace_back(send_half(from, out[sends_[a++]]), true);
      else if (a == sends_.size() || piece(in[recvs_[b]]) < piece(out[sends_[a]])) unmatched_.emplace_back(recv_half(to, in[recvs_[b++]]), false);
      else ++a, ++b;
    }
  }

  // Rule 4: node contention or link contention. A message is every piece from one rank to
  // another in one phase: one MPI transfer, however many pieces it carries.
  void contention() {
    if (rules_.contention == Contention::none) return;
    {   // The node rule (or the bounded rule); the link rule includes the node rule.
      const std::size_t limit = rules_.contention == Contention::bounded ? static_cast<std::size_t>(std::max(rules_.per_port, 1)) : 1;
      struct Excess { Phase phase; Rank rank, a, b; };
      std::vector<Excess> excess;
      auto report = [&](const char* what) {
        std::sort(excess.begin(), excess.end(), [](const Excess& x, const Excess& y) { return std::tie(x.phase, x.rank) < std::tie(y.phase, y.rank); });
        for (std::size_t k = 0; k < excess.size() && !full(); ++k)
          problem("rule 4: rank " + std::to_string(excess[k].rank) + " " + what + " more than " +
                  (limit == 1 ? std::string("one rank") : std::to_string(limit) + " ranks") + " in phase " + std::to_string(excess[k].phase) +
                  " (" + std::to_string(excess[k].a) + " and " + std::to_string(excess[k].b) + ")");
        excess.clear();
      };
      // The messages come in (phase, from, to) order, so the peers of each (phase, rank) come in
      // increasing order on both sides: counting them per rank, the first run longer than the
      // limit is reported once, naming the last peer within it and the first beyond.
      struct Port { Phase phase = 0; std::size_t count = 0; Rank last = -1; };
      std::vector<Port> port(static_cast<std::size_t>(m_.ranks));
      auto see = [&](Phase phase, Rank r, Rank peer) {
        Port& q = port[r];
        if (q.count == 0 || q.phase != phase) q = {phase, 0, -1};
        if (++q.count == limit + 1) excess.push_back({phase, r, q.last, peer});
        q.last = peer;
      };
      for (const Message& x : messages_) see(x.phase, x.from, x.to);
      report("sends to");
      std::fill(port.begin(), port.end(), Port{});
      for (const Message& x : messages_) see(x.phase, x.to, x.from);
      report("receives from");
      if (rules_.contention != Contention::link) return;
    }
    if (!rules_.route) {
      problem("rule 4: link rule requested without a topology");
      return;
    }
    std::vector<std::int64_t> links;
    std::vector<std::pair<std::int64_t, std::size_t>> used;
    std::size_t k = 0;
    while (k < messages_.size() && !full()) {
      const Phase phase = messages_[k].phase;
      used.clear();
      for (; k < messages_.size() && messages_[k].phase == phase; ++k) {
        links.clear();
        rules_.route(messages_[k].from, messages_[k].to, links);
        for (std::int64_t l : links) used.emplace_back(l, k);
      }
      std::sort(used.begin(), used.end());
      for (std::size_t x = 1; x < used.size() && !full(); ++x)
        if (used[x].first == used[x - 1].first) {
          const Message& a = messages_[used[x - 1].second];
          const Message& b = messages_[used[x].second];
          problem("rule 4: phase " + std::to_string(phase) + ": " + std::to_string(a.from) + " -> " + std::to_string(a.to) + " and " +
                  std::to_string(b.from) + " -> " + std::to_string(b.to) + " share link " + std::to_string(used[x].first));
        }
    }
  }

  // Rule 1: every byte of every message arrives in dst's receive buffer exactly once. The
  // arrivals (receives and copies into the receive buffer) are on the message's dst (format()
  // checked it): each rank sorts its own by (src, offset) and walks its column of the matrix.
  // The problems are reported in (src, dst) order, as the messages of the matrix come.
  void delivery() {
    struct Arrival { Rank src; Bytes offset, bytes; };
    struct Gap { Rank src, dst; Bytes offset, bytes; bool twice; };
    std::vector<Arrival> arrivals;
    std::vector<Gap> gaps;
    auto by_piece = [](const Arrival& a, const Arrival& b) { return std::tie(a.src, a.offset, a.bytes) < std::tie(b.src, b.offset, b.bytes); };
    for (Rank j = 0; j < m_.ranks; ++j) {
      arrivals.clear();
      for (const Step& s : plan_.ranks[j].steps)
        if ((s.op == Op::recv || s.op == Op::copy) && s.buffer == Buffer::recv) arrivals.push_back({s.src, s.offset, s.bytes});
      if (!std::is_sorted(arrivals.begin(), arrivals.end(), by_piece)) std::sort(arrivals.begin(), arrivals.end(), by_piece);
      std::size_t k = 0;   // every arrival's src has a message to j (format() checked it)
      for (std::int64_t x = col_start_[j]; x < col_start_[j + 1]; ++x) {
        const Rank i = col_src_[x];
        const Bytes b = m_.com.valuePtr()[col_msg_[x]];
        Bytes next = 0;
        for (; k < arrivals.size() && arrivals[k].src == i; ++k) {
          const Arrival& a = arrivals[k];
          if (a.offset < next) gaps.push_back({i, j, a.offset, std::min(next - a.offset, a.bytes), true});
          else if (a.offset > next) gaps.push_back({i, j, next, a.offset - next, false});
          next = std::max(next, a.offset + a.bytes);
        }
        if (next < b) gaps.push_back({i, j, next, b - next, false});
      }
    }
    std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
    for (std::size_t k = 0; k < gaps.size() && !full(); ++k)
      problem("rule 1: " + piece_text(gaps[k].src, gaps[k].dst, gaps[k].offset, gaps[k].bytes) + (gaps[k].twice ? " arrive more than once" : " never arrive"));
  }

  // Rules 2 and 6: a rank sends only bytes it holds; live staging intervals do not overlap. Each
  // rank can tell alone: format() collected these from check_rank_schedule.
  void holding() {
    for (const std::string& h : held_) problem(h);
  }

  // Rule 5: per phase, network bytes received <= free bytes at the start of the phase. Steps are
  // in phase order (format() checked it), so phases are walked by their steps: a phase without
  // steps changes nothing, and nothing is allocated per phase (the phase count comes from a file).
  void memory() {
    for (const RankSchedule& rs : plan_.ranks) {
      if (full()) return;
      // free may dip below zero only through a violation, which is reported: use signed.
      __int128 free = m_.memory[rs.rank];
      for (std::size_t k = 0; k < rs.steps.size();) {
        const Phase phase = rs.steps[k].phase;
        __int128 in = 0, out = 0;
        for (; k < rs.steps.size() && rs.steps[k].phase == phase; ++k) {
          if (rs.steps[k].op == Op::recv) in += rs.steps[k].bytes;
          if (rs.steps[k].op == Op::send) out += rs.steps[k].bytes;
        }
        if (in > free) {
          problem("rule 5: rank " + std::to_string(rs.rank) + " receives " + std::to_string(static_cast<long long>(in)) + " bytes in phase " +
                  std::to_string(phase) + " with only " + std::to_string(static_cast<long long>(free)) + " bytes free");
          break;
        }
        free += out - in;
      }
    }
  }

  const Plan& plan_;
  const CommMatrix& m_;
  const VerifyRules& rules_;
  std::vector<std::string> problems_;
  // The matrix by column: entries in (dst, src) order, each with its source and message number.
  std::vector<std::int64_t> col_start_;
  std::vector<Rank> col_src_;
  std::vector<std::uint32_t> col_msg_;
  std::vector<std::uint32_t> row_at_, col_at_;   // the bound rank's row and column (bind())
  // A message (collect_messages()): the run of rank `from`'s send steps to `to` in `phase`
  // that begins at steps[first].
  struct Message { Phase phase; Rank from, to; std::uint32_t first; };
  std::vector<Message> messages_;                   // in (phase, from, to) order
  std::vector<std::pair<Half, bool>> unmatched_;   // matching(): true for a send
  std::vector<std::size_t> sends_, recvs_;          // merge()'s scratch
  std::vector<std::string> held_;                // rule 2 and 6 problems, in rank order
};

}  // namespace

std::vector<std::string> verify(const Plan& plan, const CommMatrix& m, const VerifyRules& rules) {
  return Checker(plan, m, rules).run();
}

const char* to_string(Contention c) {
  switch (c) {
    case Contention::none: return "none";
    case Contention::node: return "node";
    case Contention::link: return "link";
    case Contention::bounded: return "bounded";
  }
  return "?";
}

}  // namespace commfit
