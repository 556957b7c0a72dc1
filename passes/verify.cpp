#include "passes/verify.h"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace commfit {
namespace {

// A network transfer as one side of it sees it.
struct Half {
  Phase phase;
  Rank from, to, src, dst;
  Bytes offset, bytes;
  auto key() const { return std::tie(phase, from, to, src, dst, offset, bytes); }
};

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
    Bytes staging_max = 0;
    std::vector<std::vector<PeerBytes>> row(p), col(p);
    m_.for_each([&](Rank i, Rank j, Bytes b) {
      row[i].push_back({j, b});
      col[j].push_back({i, b});
    });
    for (Rank r = 0; r < p && !full(); ++r) {
      const RankSchedule& rs = plan_.ranks[r];
      const std::string who = "rank " + std::to_string(r) + ": ";
      if (rs.rank != r) problem("format: " + who + "schedule names rank " + std::to_string(rs.rank));
      if (rs.ranks != p) problem("format: " + who + "schedule is for " + std::to_string(rs.ranks) + " ranks");
      if (rs.phases != mf.phases) problem("format: " + who + "phase count " + std::to_string(rs.phases) + " differs from the manifest's " + std::to_string(mf.phases));
      if (rs.matrix_fingerprint != fp) problem("format: " + who + "fingerprint is not the matrix's");
      if (rs.sends != row[r]) problem("format: " + who + "\"sends\" is not row " + std::to_string(r) + " of the matrix");
      if (rs.recvs != col[r]) problem("format: " + who + "\"recvs\" is not column " + std::to_string(r) + " of the matrix");
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
      for (std::size_t k = 0; k < rs.steps.size(); ++k) {
        const Step& s = rs.steps[k];
        const Bytes size = m_.at(s.src, s.dst);
        const std::string at = who + "/steps/" + std::to_string(k) + ": ";
        if (size == 0) problem("format: " + at + "message " + std::to_string(s.src) + "->" + std::to_string(s.dst) + " is not in the matrix");
        else if (s.offset > size || s.bytes > size - s.offset) problem("format: " + at + piece_text(s.src, s.dst, s.offset, s.bytes) + " lie beyond the message's " + std::to_string(size) + " bytes");
      }
    }
    if (mf.staging_bytes_max != staging_max) problem("format: manifest staging_bytes_max " + std::to_string(mf.staging_bytes_max) + " is not the largest rank's " + std::to_string(staging_max));
    return problems_.empty();
  }

  // Rule 3: every send step has exactly one matching receive step.
  void matching() {
    for (const RankSchedule& rs : plan_.ranks)
      for (const Step& s : rs.steps) {
        if (s.op == Op::send) sends_.push_back({s.phase, rs.rank, s.peer, s.src, s.dst, s.offset, s.bytes});
        if (s.op == Op::recv) recvs_.push_back({s.phase, s.peer, rs.rank, s.src, s.dst, s.offset, s.bytes});
      }
    auto less = [](const Half& a, const Half& b) { return a.key() < b.key(); };
    std::sort(sends_.begin(), sends_.end(), less);
    std::sort(recvs_.begin(), recvs_.end(), less);
    std::size_t a = 0, b = 0;
    auto describe = [](const Half& h) {
      return "phase " + std::to_string(h.phase) + ", " + std::to_string(h.from) + " -> " + std::to_string(h.to) + ", " + piece_text(h.src, h.dst, h.offset, h.bytes);
    };
    while ((a < sends_.size() || b < recvs_.size()) && !full()) {
      if (b == recvs_.size() || (a < sends_.size() && less(sends_[a], recvs_[b]))) {
        problem("rule 3: send without a matching receive: " + describe(sends_[a++]));
      } else if (a == sends_.size() || less(recvs_[b], sends_[a])) {
        problem("rule 3: receive without a matching send: " + describe(recvs_[b++]));
      } else {
        ++a, ++b;
      }
    }
  }

  // Rule 4: node contention or link contention. A message is every piece from one rank to
  // another in one phase: one MPI transfer, however many pieces it carries.
  void contention() {
    if (rules_.contention == Contention::none) return;
    std::vector<Half> messages;   // one per (phase, from, to), from the sorted sends
    for (const Half& h : sends_)
      if (messages.empty() || messages.back().phase != h.phase || messages.back().from != h.from || messages.back().to != h.to)
        messages.push_back(h);
    {   // The node rule (or the bounded rule); the link rule includes the node rule.
      const std::size_t limit = rules_.contention == Contention::bounded ? static_cast<std::size_t>(std::max(rules_.per_port, 1)) : 1;
      auto count = [&](bool by_sender, const char* what) {
        std::vector<std::tuple<Phase, Rank, Rank>> keys;
        keys.reserve(messages.size());
        for (const Half& h : messages) keys.emplace_back(h.phase, by_sender ? h.from : h.to, by_sender ? h.to : h.from);
        std::sort(keys.begin(), keys.end());
        // Runs of one (phase, rank): the first run longer than the limit is reported once.
        for (std::size_t k = 0; k < keys.size() && !full();) {
          std::size_t end = k;
          while (end < keys.size() && std::get<0>(keys[end]) == std::get<0>(keys[k]) && std::get<1>(keys[end]) == std::get<1>(keys[k])) ++end;
          if (end - k > limit) {
            const auto& [phase, rank, peer] = keys[k + limit];
            problem("rule 4: rank " + std::to_string(rank) + " " + what + " more than " +
                    (limit == 1 ? std::string("one rank") : std::to_string(limit) + " ranks") + " in phase " + std::to_string(phase) +
                    " (" + std::to_string(std::get<2>(keys[k + limit - 1])) + " and " + std::to_string(peer) + ")");
          }
          k = end;
        }
      };
      count(true, "sends to");
      count(false, "receives from");
      if (rules_.contention != Contention::link) return;
    }
    if (!rules_.route) {
      problem("rule 4: link rule requested without a topology");
      return;
    }
    std::vector<std::int64_t> links;
    std::vector<std::pair<std::int64_t, std::size_t>> used;
    std::size_t k = 0;
    while (k < messages.size() && !full()) {
      const Phase phase = messages[k].phase;
      used.clear();
      for (; k < messages.size() && messages[k].phase == phase; ++k) {
        links.clear();
        rules_.route(messages[k].from, messages[k].to, links);
        for (std::int64_t l : links) used.emplace_back(l, k);
      }
      std::sort(used.begin(), used.end());
      for (std::size_t x = 1; x < used.size() && !full(); ++x)
        if (used[x].first == used[x - 1].first) {
          const Half& a = messages[used[x - 1].second];
          const Half& b = messages[used[x].second];
          problem("rule 4: phase " + std::to_string(phase) + ": " + std::to_string(a.from) + " -> " + std::to_string(a.to) + " and " +
                  std::to_string(b.from) + " -> " + std::to_string(b.to) + " share link " + std::to_string(used[x].first));
        }
    }
  }

  // Rule 1: every byte of every message arrives in dst's receive buffer exactly once.
  void delivery() {
    struct Arrival { Rank src, dst; Bytes offset, bytes; };
    std::vector<Arrival> arrivals;
    for (const RankSchedule& rs : plan_.ranks)
      for (const Step& s : rs.steps)
        if ((s.op == Op::recv || s.op == Op::copy) && s.buffer == Buffer::recv) arrivals.push_back({s.src, s.dst, s.offset, s.bytes});
    std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
      return std::tie(a.src, a.dst, a.offset) < std::tie(b.src, b.dst, b.offset);
    });
    std::size_t k = 0;
    m_.for_each([&](Rank i, Rank j, Bytes b) {
      Bytes next = 0;
      for (; k < arrivals.size() && arrivals[k].src == i && arrivals[k].dst == j; ++k) {
        const Arrival& a = arrivals[k];
        if (a.offset < next) problem("rule 1: " + piece_text(i, j, a.offset, std::min(next - a.offset, a.bytes)) + " arrive more than once");
        else if (a.offset > next) problem("rule 1: " + piece_text(i, j, next, a.offset - next) + " never arrive");
        next = std::max(next, a.offset + a.bytes);
      }
      if (next < b) problem("rule 1: " + piece_text(i, j, next, b - next) + " never arrive");
    });
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
  std::vector<Half> sends_, recvs_;
  std::vector<std::string> held_;   // rule 2 and 6 problems, in rank order
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
