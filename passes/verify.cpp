#include "passes/verify.h"

#include "ir/error.h"

#include <algorithm>
#include <limits>
#include <tuple>

// One rank at a time, in rank order, in time and memory proportional to the steps and the
// messages: each rank's steps are in step_less order (the format checks see to it before any
// rule is checked), so a message's sends and its receives are one run of steps on each side.
// Rule 3 pairs the two sides of each transfer across ranks: the side of the lower rank is kept
// (a `Half` record) until the higher rank comes, whose runs, in (phase, peer) order, then meet the
// kept records of each peer in the order they were kept, so a cursor per peer finds them. Every
// other rule is one rank's alone. Problems are reported per rule in a fixed order (below), each
// rule's in the order of its own key, whatever order the ranks found them in.
// Everything here is the verifier's own: it reads the rank schedules and the matrix, never what
// the passes built to make them.
namespace commfit {
namespace {

// A network transfer as one side of it sees it; rule 3 reports in the order of key().
struct Half {
  Phase phase;
  Rank from, to, src, dst;
  Bytes offset, bytes;
  auto key() const { return std::tie(phase, from, to, src, dst, offset, bytes); }
};

// One side of a transfer kept for rule 3 until its other end's rank comes: `peer` is the rank
// that kept it (the lower one).
struct Kept {
  Phase phase;
  Rank peer, src, dst;
  Bytes offset, bytes;
};

constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

std::string piece_text(Rank src, Rank dst, Bytes offset, Bytes bytes) {
  return "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ") of " +
         std::to_string(src) + "->" + std::to_string(dst);
}

// The `cap` least items under `less`, in order: a rule's problems come in rank order but are
// reported in the order of their key, and only the first max_problems of them are ever printed.
// `less` must be a total order on what it tells apart (ties print alike).
template <class T, class Less>
class Least {
 public:
  Least(std::size_t cap, Less less) : cap_(cap), less_(less) {}
  void add(T x) {
    items_.push_back(std::move(x));
    if (items_.size() > cap_ && items_.size() - cap_ >= cap_ + 64) trim();   // room for 2 cap + 64 before sorting
  }
  std::vector<T> take() {
    trim();
    std::sort(items_.begin(), items_.end(), less_);
    return std::move(items_);
  }

 private:
  void trim() {
    if (items_.size() <= cap_) return;
    std::nth_element(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(cap_), items_.end(), less_);
    items_.resize(cap_);
  }
  std::size_t cap_;
  Less less_;
  std::vector<T> items_;
};

}  // namespace

class PlanVerifier::Impl {
 public:
  Impl(const Manifest& mf, const CommMatrix& m, const VerifyRules& rules, const MatrixColumns* columns, std::string fingerprint)
      : mf_(mf), m_(m), rules_(rules), p_(m.ranks), fp_(fingerprint.empty() ? matrix_fingerprint(m) : std::move(fingerprint)),
        unmatched_(rules.max_problems, [](const Unmatched& a, const Unmatched& b) { return a.half.key() < b.half.key(); }),
        excess_out_(rules.max_problems, by_phase_rank), excess_in_(rules.max_problems, by_phase_rank),
        gaps_(rules.max_problems, [](const Gap& a, const Gap& b) { return std::tie(a.src, a.dst, a.seq) < std::tie(b.src, b.dst, b.seq); }) {
    if (!columns) {
      own_columns_ = matrix_columns(m);
      columns = &own_columns_;
    }
    columns_ = columns;
    // The manifest's own problems come first; they also bound what the ranks may add.
    if (mf_.ranks != p_) head_.push_back("format: plan is for " + std::to_string(mf_.ranks) + " ranks, matrix has " + std::to_string(p_));
    if (mf_.matrix_fingerprint != fp_) head_.push_back("format: manifest fingerprint " + mf_.matrix_fingerprint + " is not the matrix's " + fp_);
    const std::size_t p = static_cast<std::size_t>(p_);
    row_at_.assign(p, kAbsent);
    col_at_.assign(p, kAbsent);
    seen_.assign(p, -1);
    kept_sends_.resize(p);
    kept_recvs_.resize(p);
    for (Cursors* c : {&send_cursors_, &recv_cursors_}) {
      c->at.assign(p, 0);
      c->end.assign(p, 0);
    }
  }

  void add(const RankSchedule& rs) {
    const std::size_t k = count_++;
    if (k >= static_cast<std::size_t>(p_) || format_full()) return;
    const Rank r = static_cast<Rank>(k);
    bind(r);
    if (format(r, rs) && clean()) rules(r, rs);
    unbind(r);
    if (!clean()) release_rules();
  }

  std::vector<std::string> finish() {
    std::vector<std::string> out;
    auto problem = [&](const std::string& s) {
      if (out.size() < rules_.max_problems) out.push_back(s);
    };
    auto full = [&] { return out.size() >= rules_.max_problems; };
    // The format: the manifest's, each rank's in rank order, then the staging maximum.
    if (mf_.ranks != p_) problem(head_.front());
    if (count_ != static_cast<std::size_t>(p_)) {
      problem("format: plan has " + std::to_string(count_) + " rank schedules, expected " + std::to_string(p_));
      return out;
    }
    if (mf_.matrix_fingerprint != fp_) problem(head_.back());
    for (const std::string& s : format_) problem(s);
    if (mf_.staging_bytes_max != staging_max_)
      problem("format: manifest staging_bytes_max " + std::to_string(mf_.staging_bytes_max) + " is not the largest rank's " + std::to_string(staging_max_));
    if (!out.empty()) return out;

    // Rule 3: every send step has exactly one matching receive step.
    for (const Unmatched& u : unmatched_.take()) {
      const Half& h = u.half;
      problem(std::string(u.send ? "rule 3: send without a matching receive: " : "rule 3: receive without a matching send: ") + "phase " +
              std::to_string(h.phase) + ", " + std::to_string(h.from) + " -> " + std::to_string(h.to) + ", " + piece_text(h.src, h.dst, h.offset, h.bytes));
    }
    // Rule 4: node or bounded contention at each rank's ports, then the link rule.
    if (rules_.contention != Contention::none) {
      const std::size_t limit = per_port();
      auto report = [&](Least<Excess, decltype(&by_phase_rank)>& excess, const char* what) {
        for (const Excess& e : excess.take())
          problem("rule 4: rank " + std::to_string(e.rank) + " " + what + " more than " +
                  (limit == 1 ? std::string("one rank") : std::to_string(limit) + " ranks") + " in phase " + std::to_string(e.phase) + " (" +
                  std::to_string(e.a) + " and " + std::to_string(e.b) + ")");
      };
      report(excess_out_, "sends to");
      report(excess_in_, "receives from");
      if (rules_.contention == Contention::link) link_rule(problem, full);
    }
    // Rule 1: every byte of every message arrives in dst's receive buffer exactly once.
    for (const Gap& g : gaps_.take())
      problem("rule 1: " + piece_text(g.src, g.dst, g.offset, g.bytes) + (g.twice ? " arrive more than once" : " never arrive"));
    // Rules 2, 6 and 7 of each rank, then rule 5, then rule 7 of the whole plan.
    for (const std::string& h : held_) problem(h);
    for (const std::string& h : memory_) problem(h);
    if (mf_.phases != phases_used_)
      problem("rule 7: phases " + std::to_string(mf_.phases) + " but the steps use at most " + std::to_string(phases_used_) +
              " (the phases after the last step are empty on every rank)");
    return out;
  }

 private:
  // Per lower rank, its block of the kept records being matched: [at, end).
  struct Cursors {
    std::vector<std::size_t> at, end;
  };

  // --- The format: what the manifest says of every rank, the rank's own checks (ir/plan.h), and
  // the message each step's piece belongs to.
  bool format_full() const { return head_.size() + format_.size() >= rules_.max_problems; }
  void format_problem(const std::string& s) {
    if (!format_full()) format_.push_back(s);
  }
  // No format problem so far: the rules are worth checking.
  bool clean() const { return head_.empty() && format_.empty(); }

  bool is_row(const std::vector<PeerBytes>& list, Rank r) const {
    const std::int64_t b = m_.com.outerIndexPtr()[r], e = m_.com.outerIndexPtr()[r + 1];
    if (list.size() != static_cast<std::size_t>(e - b)) return false;
    for (std::int64_t x = b; x < e; ++x)
      if (list[x - b].peer != m_.com.innerIndexPtr()[x] || list[x - b].bytes != m_.com.valuePtr()[x]) return false;
    return true;
  }
  bool is_column(const std::vector<PeerBytes>& list, Rank r) const {
    const std::int64_t b = columns_->start[r], e = columns_->start[r + 1];
    if (list.size() != static_cast<std::size_t>(e - b)) return false;
    for (std::int64_t x = b; x < e; ++x)
      if (list[x - b].peer != columns_->src[x] || list[x - b].bytes != m_.com.valuePtr()[columns_->message[x]]) return false;
    return true;
  }
  // While rank r is bound (add() binds each rank while it checks it), its row and column are
  // looked up in O(1): row_at_[dst] and col_at_[src] hold message numbers. Binding and unbinding
  // touch only r's entries.
  void bind(Rank r, bool on = true) {
    for (std::int64_t x = m_.com.outerIndexPtr()[r]; x < m_.com.outerIndexPtr()[r + 1]; ++x)
      row_at_[m_.com.innerIndexPtr()[x]] = on ? static_cast<std::uint32_t>(x) : kAbsent;
    for (std::int64_t x = columns_->start[r]; x < columns_->start[r + 1]; ++x) col_at_[columns_->src[x]] = on ? columns_->message[x] : kAbsent;
  }
  void unbind(Rank r) { bind(r, false); }
  // The number of message src -> dst, kAbsent when the matrix has none; r is the bound rank.
  std::uint32_t message(Rank r, Rank src, Rank dst) const {
    if (src == r) return row_at_[dst];
    if (dst == r) return col_at_[src];
    const auto* begin = m_.com.innerIndexPtr() + m_.com.outerIndexPtr()[src];
    const auto* end = m_.com.innerIndexPtr() + m_.com.outerIndexPtr()[src + 1];
    const auto* it = std::lower_bound(begin, end, static_cast<std::int64_t>(dst));
    return it != end && *it == dst ? static_cast<std::uint32_t>(it - m_.com.innerIndexPtr()) : kAbsent;
  }

  // Rank r's format; false when its steps are too broken for the rules to read.
  bool format(Rank r, const RankSchedule& rs) {
    const std::string who = "rank " + std::to_string(r) + ": ";
    if (rs.rank != r) format_problem("format: " + who + "schedule names rank " + std::to_string(rs.rank));
    if (rs.ranks != p_) format_problem("format: " + who + "schedule is for " + std::to_string(rs.ranks) + " ranks");
    if (rs.phases != mf_.phases) format_problem("format: " + who + "phase count " + std::to_string(rs.phases) + " differs from the manifest's " + std::to_string(mf_.phases));
    if (rs.matrix_fingerprint != fp_) format_problem("format: " + who + "fingerprint is not the matrix's");
    if (!is_row(rs.sends, r)) format_problem("format: " + who + "\"sends\" is not row " + std::to_string(r) + " of the matrix");
    if (!is_column(rs.recvs, r)) format_problem("format: " + who + "\"recvs\" is not column " + std::to_string(r) + " of the matrix");
    staging_max_ = std::max(staging_max_, rs.staging_bytes);
    // What the rank's schedule says alone (ir/plan.h). Its rule 2 and 6 problems are reported
    // after the rules before them.
    const RankCheckOptions alone{false, true, rules_.max_problems - head_.size() - format_.size()};   // tiling is rule 1's, below
    bool sound = true;
    for (const ScheduleProblem& q : check_rank_schedule(rs, alone)) {
      if (q.rule == 0) format_problem("format: " + who + q.place + ": " + q.what), sound = false;
      else if (held_.size() < rules_.max_problems) held_.push_back("rule " + std::to_string(q.rule) + ": " + who + q.what);
    }
    if (!sound || rs.ranks != p_) return false;
    if (!rs.steps.empty()) phases_used_ = std::max(phases_used_, rs.steps.back().phase + 1);   // steps in phase order
    // Staged pieces carry other ranks' messages: only the matrix knows their sizes.
    for (std::size_t k = 0; k < rs.steps.size(); ++k) {
      const Step& s = rs.steps[k];
      const std::uint32_t x = message(r, s.src, s.dst);
      const Bytes size = x == kAbsent ? 0 : m_.com.valuePtr()[x];
      if (size != 0 && s.offset <= size && s.bytes <= size - s.offset) continue;
      const std::string at = who + "/steps/" + std::to_string(k) + ": ";
      if (size == 0) format_problem("format: " + at + "message " + std::to_string(s.src) + "->" + std::to_string(s.dst) + " is not in the matrix");
      else format_problem("format: " + at + piece_text(s.src, s.dst, s.offset, s.bytes) + " lie beyond the message's " + std::to_string(size) + " bytes");
    }
    return true;
  }

  // --- The rules of rank r, whose format is sound.
  void rules(Rank r, const RankSchedule& rs) {
    open_kept(kept_sends_[r], send_cursors_);
    open_kept(kept_recvs_[r], recv_cursors_);
    PortCount out, in;
    const std::vector<Step>& steps = rs.steps;
    for (std::size_t k = 0; k < steps.size();) {
      const std::size_t end = run_end(steps, k);
      const Step& s = steps[k];
      if (s.op == Op::send) {
        see(out, s.phase, r, s.peer, excess_out_);
        if (rules_.contention == Contention::link) links_.push_back({s.phase, r, s.peer});
        if (s.peer > r) keep(kept_sends_[s.peer], r, steps, k, end);   // the receiver's side comes later
        else match(r, steps, k, end, kept_recvs_[r], recv_cursors_, true);
      } else if (s.op == Op::recv) {
        see(in, s.phase, r, s.peer, excess_in_);
        if (s.peer > r) keep(kept_recvs_[s.peer], r, steps, k, end);
        else match(r, steps, k, end, kept_sends_[r], send_cursors_, false);
      }
      k = end;
    }
    close_kept(r, kept_sends_[r], send_cursors_, true);
    close_kept(r, kept_recvs_[r], recv_cursors_, false);
    delivery(r, rs);
    if (rules_.memory && !m_.memory.empty()) memory(r, rs);
  }

  // The end of the run of steps with the (phase, op, peer) of steps[k].
  static std::size_t run_end(const std::vector<Step>& steps, std::size_t k) {
    std::size_t end = k + 1;
    while (end < steps.size() && steps[end].phase == steps[k].phase && steps[end].op == steps[k].op && steps[end].peer == steps[k].peer) ++end;
    return end;
  }

  // Rule 3. kept_sends_[r]: the sends of lower ranks to r; kept_recvs_[r]: the receives of lower
  // ranks from r. Each lower rank's records are one block, in its step order (phase first), and
  // while r is checked a cursor per lower rank walks its block.
  void keep(std::vector<Kept>& to, Rank r, const std::vector<Step>& steps, std::size_t k, std::size_t end) {
    for (; k < end; ++k) to.push_back({steps[k].phase, r, steps[k].src, steps[k].dst, steps[k].offset, steps[k].bytes});
  }
  // Points each lower rank's cursor at its block of `kept`.
  static void open_kept(const std::vector<Kept>& kept, Cursors& c) {
    for (std::size_t x = 0; x < kept.size();) {
      const Rank a = kept[x].peer;
      c.at[a] = x;
      while (x < kept.size() && kept[x].peer == a) ++x;
      c.end[a] = x;
    }
  }
  // What the cursors left of `kept` matched nothing on rank r; then the records go.
  void close_kept(Rank r, std::vector<Kept>& kept, Cursors& c, bool sends) {
    for (std::size_t x = 0; x < kept.size();) {
      const Rank a = kept[x].peer;
      for (std::size_t y = c.at[a]; y < c.end[a]; ++y) unmatched(kept[y], a, r, sends);
      x = c.end[a];
      c.at[a] = c.end[a] = 0;
    }
    std::vector<Kept>().swap(kept);
  }
  // A kept record nothing matched: a send of `a` to r (sends) or a receive of `a` from r.
  void unmatched(const Kept& x, Rank a, Rank r, bool sends) {
    if (sends) unmatched_.add({{x.phase, a, r, x.src, x.dst, x.offset, x.bytes}, true});
    else unmatched_.add({{x.phase, r, a, x.src, x.dst, x.offset, x.bytes}, false});
  }
  // Rank r's run steps[k, end) (sends when `send`, else receives) against the lower peer's kept
  // records of the same phase: the two are merged by piece, and what is left on either side, and
  // the peer's records of earlier phases the cursor passes, match nothing.
  void match(Rank r, const std::vector<Step>& steps, std::size_t k, std::size_t end, const std::vector<Kept>& kept, Cursors& c, bool send) {
    const Step& s = steps[k];
    const Rank peer = s.peer;
    std::size_t first = c.at[peer];
    const std::size_t stop = c.end[peer];
    for (; first < stop && kept[first].phase < s.phase; ++first) unmatched(kept[first], peer, r, !send);
    std::size_t last = first;
    while (last < stop && kept[last].phase == s.phase) ++last;
    c.at[peer] = last;
    auto mine = [&](std::size_t x) { return send ? Half{steps[x].phase, r, peer, steps[x].src, steps[x].dst, steps[x].offset, steps[x].bytes}
                                                 : Half{steps[x].phase, peer, r, steps[x].src, steps[x].dst, steps[x].offset, steps[x].bytes}; };
    auto piece = [](const auto& x) { return std::tie(x.src, x.dst, x.offset, x.bytes); };
    if (end - k == 1 && last - first == 1) {   // one piece each way: the common case
      if (piece(steps[k]) != piece(kept[first])) {
        unmatched_.add({mine(k), send});
        unmatched(kept[first], peer, r, !send);
      }
      return;
    }
    // step_less leaves steps equal but for their sizes in any order: sort both sides by piece.
    mine_.clear();
    theirs_.clear();
    for (std::size_t x = k; x < end; ++x) mine_.push_back(x);
    for (std::size_t x = first; x < last; ++x) theirs_.push_back(x);
    std::sort(mine_.begin(), mine_.end(), [&](std::size_t x, std::size_t y) { return piece(steps[x]) < piece(steps[y]); });
    std::sort(theirs_.begin(), theirs_.end(), [&](std::size_t x, std::size_t y) { return piece(kept[x]) < piece(kept[y]); });
    std::size_t a = 0, b = 0;
    while (a < mine_.size() || b < theirs_.size()) {
      if (b == theirs_.size() || (a < mine_.size() && piece(steps[mine_[a]]) < piece(kept[theirs_[b]]))) unmatched_.add({mine(mine_[a++]), send});
      else if (a == mine_.size() || piece(kept[theirs_[b]]) < piece(steps[mine_[a]])) unmatched(kept[theirs_[b++]], peer, r, !send);
      else ++a, ++b;
    }
  }
  // Frees what the rules keep once a format problem means they will not be checked.
  void release_rules() {
    for (auto& kept : kept_sends_) std::vector<Kept>().swap(kept);
    for (auto& kept : kept_recvs_) std::vector<Kept>().swap(kept);
    std::vector<LinkMessage>().swap(links_);
  }

  // Rule 4 at one port of a rank: counting the runs (messages) of each phase, the first run beyond
  // the limit is reported once, naming the last peer within it and the first beyond. A rank's
  // runs come in (phase, peer) order, so its peers in a phase come in increasing order.
  struct PortCount {
    Phase phase = 0;
    std::size_t count = 0;
    Rank last = -1;
  };
  struct Excess {
    Phase phase;
    Rank rank, a, b;
  };
  static bool by_phase_rank(const Excess& x, const Excess& y) { return std::tie(x.phase, x.rank) < std::tie(y.phase, y.rank); }
  std::size_t per_port() const { return rules_.contention == Contention::bounded ? static_cast<std::size_t>(std::max(rules_.per_port, 1)) : 1; }
  void see(PortCount& q, Phase phase, Rank r, Rank peer, Least<Excess, decltype(&by_phase_rank)>& excess) {
    if (rules_.contention == Contention::none) return;
    if (q.count == 0 || q.phase != phase) q = {phase, 0, -1};
    if (++q.count == per_port() + 1) excess.add({phase, r, q.last, peer});
    q.last = peer;
  }

  // The link rule: no two messages of a phase share a directed link. The messages were kept in
  // rank order, each rank's in (phase, peer) order: a stable sort by phase puts them in (phase,
  // from, to) order.
  template <class Problem, class Full>
  void link_rule(Problem& problem, Full& full) {
    if (!rules_.route) {
      problem("rule 4: link rule requested without a topology");
      return;
    }
    std::stable_sort(links_.begin(), links_.end(), [](const LinkMessage& x, const LinkMessage& y) { return x.phase < y.phase; });
    std::vector<Link> links;
    std::vector<std::pair<Link, std::size_t>> used;
    std::size_t k = 0;
    while (k < links_.size() && !full()) {
      const Phase phase = links_[k].phase;
      used.clear();
      for (; k < links_.size() && links_[k].phase == phase; ++k) {
        links.clear();
        rules_.route(links_[k].from, links_[k].to, links);
        for (Link l : links) used.emplace_back(l, k);
      }
      std::sort(used.begin(), used.end());
      for (std::size_t x = 1; x < used.size() && !full(); ++x)
        if (used[x].first == used[x - 1].first) {
          const LinkMessage& a = links_[used[x - 1].second];
          const LinkMessage& b = links_[used[x].second];
          problem("rule 4: phase " + std::to_string(phase) + ": " + std::to_string(a.from) + " -> " + std::to_string(a.to) + " and " +
                  std::to_string(b.from) + " -> " + std::to_string(b.to) + " share link " + std::to_string(used[x].first.value()));
        }
    }
  }

  // Rule 1: every byte of every message arrives in dst's receive buffer exactly once. The
  // arrivals (receives and copies into the receive buffer) are on the message's dst (the format
  // checks saw to it): rank j sorts its own by (src, offset) and walks its column of the matrix.
  // The problems are reported in (src, dst) order, as the messages of the matrix come.
  void delivery(Rank j, const RankSchedule& rs) {
    auto by_piece = [](const Arrival& a, const Arrival& b) { return std::tie(a.src, a.offset, a.bytes) < std::tie(b.src, b.offset, b.bytes); };
    arrivals_.clear();
    for (const Step& s : rs.steps)
      if ((s.op == Op::recv || s.op == Op::copy) && s.buffer == Buffer::recv) arrivals_.push_back({s.src, s.offset, s.bytes});
    // Most plans deliver every message whole, in one piece: then nothing is missing or twice,
    // which one look at each arrival tells (j is bound: col_at_ gives each src's message).
    if (arrivals_.size() == static_cast<std::size_t>(columns_->start[j + 1] - columns_->start[j])) {
      bool whole = true;
      for (const Arrival& a : arrivals_) {
        const std::uint32_t x = col_at_[a.src];
        if (x == kAbsent || a.offset != 0 || a.bytes != m_.com.valuePtr()[x] || seen_[a.src] == j) {
          whole = false;
          break;
        }
        seen_[a.src] = j;
      }
      for (const Arrival& a : arrivals_) seen_[a.src] = -1;
      if (whole) return;
    }
    if (!std::is_sorted(arrivals_.begin(), arrivals_.end(), by_piece)) std::sort(arrivals_.begin(), arrivals_.end(), by_piece);
    std::size_t k = 0;   // every arrival's src has a message to j (the format checks saw to it)
    for (std::int64_t x = columns_->start[j]; x < columns_->start[j + 1]; ++x) {
      const Rank i = columns_->src[x];
      const Bytes b = m_.com.valuePtr()[columns_->message[x]];
      Bytes next = 0;
      for (; k < arrivals_.size() && arrivals_[k].src == i; ++k) {
        const Arrival& a = arrivals_[k];
        if (a.offset < next) gaps_.add({i, j, a.offset, std::min(next - a.offset, a.bytes), true, gap_seq_++});
        else if (a.offset > next) gaps_.add({i, j, next, a.offset - next, false, gap_seq_++});
        next = std::max(next, a.offset + a.bytes);
      }
      if (next < b) gaps_.add({i, j, next, b - next, false, gap_seq_++});
    }
  }

  // Rule 5: per phase, network bytes received <= free bytes at the start of the phase. Steps are
  // in phase order (the format checks saw to it), so phases are walked by their steps: a phase
  // without steps changes nothing, and nothing is allocated per phase (the phase count comes from
  // a file). One problem per rank at most.
  void memory(Rank r, const RankSchedule& rs) {
    if (memory_.size() >= rules_.max_problems) return;
    // free may dip below zero only through a violation, which is reported: use signed.
    __int128 free = m_.memory[r];
    for (std::size_t k = 0; k < rs.steps.size();) {
      const Phase phase = rs.steps[k].phase;
      __int128 in = 0, out = 0;
      for (; k < rs.steps.size() && rs.steps[k].phase == phase; ++k) {
        if (rs.steps[k].op == Op::recv) in += rs.steps[k].bytes;
        if (rs.steps[k].op == Op::send) out += rs.steps[k].bytes;
      }
      if (in > free) {
        memory_.push_back("rule 5: rank " + std::to_string(r) + " receives " + std::to_string(static_cast<long long>(in)) + " bytes in phase " +
                          std::to_string(phase) + " with only " + std::to_string(static_cast<long long>(free)) + " bytes free");
        return;
      }
      free += out - in;
    }
  }

  struct Unmatched {
    Half half;
    bool send;
  };
  struct Gap {
    Rank src, dst;
    Bytes offset, bytes;
    bool twice;
    std::uint64_t seq;   // the order found, among the gaps of one message
  };
  struct Arrival {
    Rank src;
    Bytes offset, bytes;
  };
  struct LinkMessage {
    Phase phase;
    Rank from, to;
  };

  const Manifest& mf_;
  const CommMatrix& m_;
  const VerifyRules& rules_;
  const Rank p_;
  const std::string fp_;
  MatrixColumns own_columns_;
  const MatrixColumns* columns_ = nullptr;
  std::size_t count_ = 0;                       // rank schedules added
  std::vector<std::string> head_, format_;      // the manifest's problems; the ranks' format problems
  Bytes staging_max_ = 0;
  Phase phases_used_ = 0;                       // rule 7: the most phases a rank's steps reach
  std::vector<std::uint32_t> row_at_, col_at_;  // the bound rank's row and column (bind())
  std::vector<std::vector<Kept>> kept_sends_, kept_recvs_;
  Cursors send_cursors_, recv_cursors_;
  std::vector<std::size_t> mine_, theirs_;         // match()'s scratch
  std::vector<Arrival> arrivals_;                  // delivery()'s scratch
  std::vector<Rank> seen_;                         // delivery(): per src, the rank that last saw its arrival
  std::vector<LinkMessage> links_;
  Least<Unmatched, bool (*)(const Unmatched&, const Unmatched&)> unmatched_;
  Least<Excess, decltype(&by_phase_rank)> excess_out_, excess_in_;
  Least<Gap, bool (*)(const Gap&, const Gap&)> gaps_;
  std::uint64_t gap_seq_ = 0;
  std::vector<std::string> held_, memory_;         // rule 2, 6 and 7 problems, rule 5 problems, in rank order
};

PlanVerifier::PlanVerifier(const Manifest& manifest, const CommMatrix& m, const VerifyRules& rules, const MatrixColumns* columns,
                           std::string fingerprint)
    : impl_(std::make_unique<Impl>(manifest, m, rules, columns, std::move(fingerprint))) {}
PlanVerifier::~PlanVerifier() = default;
void PlanVerifier::add(const RankSchedule& rs) { impl_->add(rs); }
std::vector<std::string> PlanVerifier::finish() { return impl_->finish(); }

std::vector<std::string> verify(const Plan& plan, const CommMatrix& m, const VerifyRules& rules) {
  PlanVerifier v(plan.manifest, m, rules);
  for (const RankSchedule& rs : plan.ranks) v.add(rs);
  return v.finish();
}

}  // namespace commfit
