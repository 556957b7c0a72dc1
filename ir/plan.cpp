#include "ir/plan.h"

#include "ir/random.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace commfit {

const char* to_string(Op op) {
  switch (op) {
    case Op::send: return "send";
    case Op::recv: return "recv";
    case Op::copy: return "copy";
  }
  return "?";
}

const char* to_string(Buffer b) {
  switch (b) {
    case Buffer::send: return "send";
    case Buffer::recv: return "recv";
    case Buffer::stage: return "stage";
  }
  return "?";
}

bool step_less(const Step& a, const Step& b) {
  // recv < send < copy inside a phase: receives are posted first (docs/FORMAT.md §3.2).
  auto rank_op = [](Op op) { return op == Op::recv ? 0 : op == Op::send ? 1 : 2; };
  return std::make_tuple(a.phase, rank_op(a.op), a.peer, a.src, a.dst, a.offset) <
         std::make_tuple(b.phase, rank_op(b.op), b.peer, b.src, b.dst, b.offset);
}

namespace {

std::string range(Bytes a, Bytes b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

std::string piece_text(Rank src, Rank dst, Bytes offset, Bytes bytes) {
  return "bytes " + range(offset, offset + bytes) + " of " + std::to_string(src) + "->" + std::to_string(dst);
}

// Bytes of the message a rank's `sends` or `recvs` list gives for a peer, 0 when it lists none,
// in O(1): an open-addressing table over the list (a rank looks one up for every step).
class Listed {
 public:
  explicit Listed(const std::vector<PeerBytes>& list) : list_(list) {
    std::size_t size = 16;
    while (size < 2 * list.size()) size *= 2;
    slot_.assign(size, kEmpty);
    for (std::size_t k = 0; k < list.size(); ++k) {
      std::size_t at = home(list[k].peer);
      while (slot_[at] != kEmpty && list_[slot_[at]].peer != list[k].peer) at = (at + 1) & (slot_.size() - 1);
      if (slot_[at] == kEmpty) slot_[at] = static_cast<std::uint32_t>(k);   // a repeated peer keeps its first entry
    }
  }
  Bytes operator()(Rank peer) const {
    for (std::size_t at = home(peer);; at = (at + 1) & (slot_.size() - 1)) {
      if (slot_[at] == kEmpty) return 0;
      if (list_[slot_[at]].peer == peer) return list_[slot_[at]].bytes;
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  std::size_t home(Rank peer) const { return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) * 0x9e3779b97f4a7c15ULL >> 32) & (slot_.size() - 1); }
  const std::vector<PeerBytes>& list_;
  std::vector<std::uint32_t> slot_;
};

class RankChecker {
 public:
  RankChecker(const RankSchedule& rs, const RankCheckOptions& o) : rs_(rs), o_(o) {}

  std::vector<ScheduleProblem> run() {
    format();
    if (!problems_.empty()) return problems_;
    if (o_.tiling) {
      tiling(false);
      tiling(true);
    }
    if (o_.staging) {
      staging();
      declared();
    }
    return problems_;
  }

 private:
  bool full() const { return problems_.size() >= o_.max_problems; }
  void problem(int rule, std::string place, std::string what) {
    if (!full()) problems_.push_back({rule, std::move(place), std::move(what)});
  }
  std::string out_of_range(const char* what, Rank v) const {
    return std::string(what) + " " + std::to_string(v) + " is out of range (ranks = " + std::to_string(rs_.ranks) + ")";
  }

  void peers(const std::vector<PeerBytes>& list, const char* name) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const PeerBytes& x = list[k];
      if (x.peer >= 0 && x.peer < rs_.ranks && (k == 0 || x.peer > list[k - 1].peer) && x.bytes != 0 && x.bytes <= kMaxMessageBytes) continue;
      const std::string at = std::string("/") + name + "/" + std::to_string(k);
      if (x.peer < 0 || x.peer >= rs_.ranks) problem(0, at + "/0", out_of_range("peer", x.peer));
      else if (k > 0 && x.peer <= list[k - 1].peer) problem(0, at + "/0", "peers must be listed in increasing order");
      if (x.bytes == 0) problem(0, at + "/1", "zero entries are not listed");
      else if (x.bytes > kMaxMessageBytes) problem(0, at + "/1", "size " + std::to_string(x.bytes) + " exceeds the limit of 2^53 bytes");
    }
  }

  void format() {
    if (rs_.rank < 0 || rs_.rank >= rs_.ranks) return problem(0, "/rank", out_of_range("rank", rs_.rank));
    if (rs_.max_outstanding == 1 || rs_.max_outstanding > kMaxWindow)
      problem(0, "/max_outstanding", "the request window must be 0 (none) or in [2, " + std::to_string(kMaxWindow) + "], not " +
                                         std::to_string(rs_.max_outstanding));
    peers(rs_.sends, "sends");
    peers(rs_.recvs, "recvs");
    if (!problems_.empty()) return;   // the steps are checked against the lists' sizes
    sends_.emplace(rs_.sends);
    recvs_.emplace(rs_.recvs);
    const Bytes self_sent = (*sends_)(rs_.rank), self_received = (*recvs_)(rs_.rank);
    if (self_sent != self_received)
      problem(0, "/recvs", "the self message has " + std::to_string(self_sent) + " bytes in sends but " +
                               std::to_string(self_received) + " in recvs");
    for (std::size_t k = 0; k < rs_.steps.size() && !full(); ++k) step(k);
    if (!rs_.send_order.empty() && !full()) send_order();
  }

  // The posting order names every peer the send steps address, each once, and no other.
  void send_order() {
    const auto& order = rs_.send_order;
    for (std::size_t k = 0; k < order.size(); ++k)
      if (order[k] < 0 || order[k] >= rs_.ranks || order[k] == rs_.rank)
        return problem(0, "/send_order/" + std::to_string(k),
                       order[k] == rs_.rank ? "the posting order names this rank" : out_of_range("peer", order[k]));
    std::vector<Rank> listed(order), addressed;
    for (const Step& s : rs_.steps)
      if (s.op == Op::send) addressed.push_back(s.peer);
    std::sort(listed.begin(), listed.end());
    std::sort(addressed.begin(), addressed.end());
    addressed.erase(std::unique(addressed.begin(), addressed.end()), addressed.end());
    if (const auto twice = std::adjacent_find(listed.begin(), listed.end()); twice != listed.end())
      return problem(0, "/send_order", "peer " + std::to_string(*twice) + " is listed twice");
    if (listed != addressed) {
      const auto [a, b] = std::mismatch(listed.begin(), listed.end(), addressed.begin(), addressed.end());
      const bool extra = b == addressed.end() || (a != listed.end() && *a < *b);
      problem(0, "/send_order", extra ? "peer " + std::to_string(*a) + " is listed but no send step addresses it"
                                      : "send steps address peer " + std::to_string(*b) + ", which the posting order leaves out");
    }
  }

  void step(std::size_t k) {
    const Step& s = rs_.steps[k];
    const Rank me = rs_.rank;
    auto at = [k] { return "/steps/" + std::to_string(k); };   // made only for a problem
    if (k > 0 && step_less(s, rs_.steps[k - 1])) problem(0, at(), "steps are not in phase order (receives, then sends, then copies)");
    if (s.phase >= rs_.phases)
      problem(0, at() + "/phase", "phase " + std::to_string(s.phase) + " is not below the phase count " + std::to_string(rs_.phases));
    for (const auto& [field, v] : {std::pair{"peer", s.peer}, {"src", s.src}, {"dst", s.dst}})
      if (v < 0 || v >= rs_.ranks) return problem(0, at() + "/" + field, out_of_range(field, v));
    if (s.bytes == 0) problem(0, at() + "/bytes", "a step moves at least one byte");
    // A piece of this rank's own message lies inside the message as sends or recvs give it.
    auto within = [&](Bytes size) {
      if (s.offset > size || s.bytes > size - s.offset)
        problem(0, at(), "bytes " + range(s.offset, s.offset + s.bytes) + " of message " + std::to_string(s.src) + " -> " +
                           std::to_string(s.dst) + " lie outside the message (" + std::to_string(size) + " bytes)");
    };
    switch (s.op) {
      case Op::copy:
        if (s.peer != me || s.src != me || s.dst != me) problem(0, at(), "a copy step must have peer == src == dst == this rank");
        else if (s.buffer != Buffer::recv) problem(0, at() + "/buffer", "a copy copies the self message into the receive buffer (buffer \"recv\")");
        else within((*sends_)(me));
        break;
      case Op::send:
        if (s.peer == me) problem(0, at() + "/peer", "a rank does not send to itself (use a copy step)");
        if (s.buffer == Buffer::recv) problem(0, at() + "/buffer", "a send cannot read the receive buffer");
        else if (s.buffer == Buffer::send && s.src != me) problem(0, at() + "/src", "only the message's src sends from its send buffer");
        else if (s.buffer == Buffer::send) within((*sends_)(s.dst));
        break;
      case Op::recv:
        if (s.peer == me) problem(0, at() + "/peer", "a rank does not receive from itself (use a copy step)");
        if (s.buffer == Buffer::send) problem(0, at() + "/buffer", "only the message's src sends from its send buffer");
        else if (s.buffer == Buffer::recv && s.dst != me) problem(0, at() + "/dst", "only the message's dst receives into its receive buffer");
        else if (s.buffer == Buffer::recv) within((*recvs_)(s.src));
        break;
    }
    if (s.buffer == Buffer::stage) {
      if (s.stage_offset == kNoStage) problem(0, at(), "a step with buffer \"stage\" needs a stage_offset");
      else if (s.stage_offset > rs_.staging_bytes || s.bytes > rs_.staging_bytes - s.stage_offset)
        problem(0, at() + "/stage_offset", "staging range " + range(s.stage_offset, s.stage_offset + s.bytes) + " lies outside the rank's " +
                                             std::to_string(rs_.staging_bytes) + " staging bytes");
    } else if (s.stage_offset != kNoStage) {
      problem(0, at() + "/stage_offset", "only steps with buffer \"stage\" have a stage_offset");
    }
  }

  // Rule 1 on this rank's side: the pieces read from the send buffer (or received into the
  // receive buffer), copies included, cover each message of sends (recvs) exactly once.
  void tiling(bool recv_side) {
    struct Span { Rank peer; Bytes offset, bytes; };
    std::vector<Span> spans;
    for (const Step& s : rs_.steps) {
      if (s.op == Op::copy) spans.push_back({rs_.rank, s.offset, s.bytes});
      else if (!recv_side && s.op == Op::send && s.buffer == Buffer::send) spans.push_back({s.dst, s.offset, s.bytes});
      else if (recv_side && s.op == Op::recv && s.buffer == Buffer::recv) spans.push_back({s.src, s.offset, s.bytes});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return std::tie(a.peer, a.offset) < std::tie(b.peer, b.offset); });
    const char* list = recv_side ? "/recvs" : "/sends";
    const char* done = recv_side ? "received" : "sent";
    std::size_t k = 0;   // format() put every span's peer in the list
    for (const PeerBytes& m : recv_side ? rs_.recvs : rs_.sends) {
      const Rank src = recv_side ? m.peer : rs_.rank, dst = recv_side ? rs_.rank : m.peer;
      const std::string msg = " of message " + std::to_string(src) + " -> " + std::to_string(dst) + " are ";
      Bytes pos = 0;
      for (; k < spans.size() && spans[k].peer == m.peer; ++k) {
        if (spans[k].offset < pos) problem(1, list, "bytes " + range(spans[k].offset, std::min(pos, spans[k].offset + spans[k].bytes)) + msg + done + " twice");
        if (spans[k].offset > pos) problem(1, list, "bytes " + range(pos, spans[k].offset) + msg + "never " + done);
        pos = std::max(pos, spans[k].offset + spans[k].bytes);
      }
      if (pos != m.bytes) problem(1, list, "bytes " + range(pos, m.bytes) + msg + "never " + done);
    }
  }

  // Rules 2 and 6: a staged send forwards bytes a staged receive of an earlier phase left at the
  // same offset, and staged pieces do not overlap while live (from arrival to last forward).
  void staging() {
    struct Live { std::size_t step; Phase arrived; Bytes remaining; };
    std::map<Bytes, Live> live;   // stage_offset -> piece, received by rs_.steps[step]
    std::vector<Bytes> release;
    std::size_t k = 0;
    while (k < rs_.steps.size() && !full()) {
      const Phase phase = rs_.steps[k].phase;
      for (; k < rs_.steps.size() && rs_.steps[k].phase == phase; ++k) {
        const Step& s = rs_.steps[k];
        if (s.buffer != Buffer::stage) continue;
        const std::string at = "/steps/" + std::to_string(k);
        const Bytes lo = s.stage_offset, hi = s.stage_offset + s.bytes;
        if (s.op == Op::recv) {
          const auto next = live.lower_bound(lo);
          const bool clash = (next != live.end() && next->first < hi) ||
                             (next != live.begin() && std::prev(next)->first + rs_.steps[std::prev(next)->second.step].bytes > lo);
          if (clash) problem(6, at, "phase " + std::to_string(phase) + ": staging range " + range(lo, hi) + " overlaps a live staged piece");
          else live.emplace(lo, Live{k, phase, s.bytes});
          continue;
        }
        auto it = live.upper_bound(lo);
        bool ok = it != live.begin();
        if (ok) {
          --it;
          const Step& in = rs_.steps[it->second.step];
          ok = hi <= it->first + in.bytes && in.src == s.src && in.dst == s.dst && s.offset - in.offset == lo - it->first &&
               it->second.arrived < phase && it->second.remaining >= s.bytes;
        }
        if (!ok) {
          problem(2, at, "phase " + std::to_string(phase) + " sends " + piece_text(s.src, s.dst, s.offset, s.bytes) + " from staging offset " +
                             std::to_string(lo) + ", which it does not hold from an earlier phase");
          continue;
        }
        if ((it->second.remaining -= s.bytes) == 0) release.push_back(it->first);
      }
      for (Bytes off : release) live.erase(off);
      release.clear();
    }
    for (const auto& [off, l] : live) {
      const Step& in = rs_.steps[l.step];
      problem(2, "/steps/" + std::to_string(l.step), piece_text(in.src, in.dst, in.offset, in.bytes) + " staged at offset " + std::to_string(off) +
                                                         " are never forwarded (" + std::to_string(l.remaining) + " bytes left)");
    }
  }

  // Rule 7 (declared figures), this rank's part: the staging area is what the staged steps use, as
  // the executor allocates it at load. Its size is the end of the highest staged range, and that
  // end is no more than the bytes the staged receives bring (a first-fit area never grows past
  // them, passes/lower.cpp; gaps would be allocated for nothing). The format check put every range
  // inside staging_bytes. The plan's part, its phase count, needs every rank (passes/verify.h).
  void declared() {
    Bytes used = 0, received = 0;
    for (const Step& s : rs_.steps) {
      if (s.buffer != Buffer::stage) continue;
      used = std::max(used, s.stage_offset + s.bytes);
      if (s.op == Op::recv) received = s.bytes > ~Bytes{0} - received ? ~Bytes{0} : received + s.bytes;
    }
    if (rs_.staging_bytes != used)
      problem(7, "/staging_bytes", "staging_bytes " + std::to_string(rs_.staging_bytes) + " but the steps use at most " + std::to_string(used));
    else if (used > received)
      problem(7, "/staging_bytes", "staging_bytes " + std::to_string(rs_.staging_bytes) + " but the staged receives bring only " +
                                       std::to_string(received) + " bytes (the staged ranges leave gaps)");
  }

  const RankSchedule& rs_;
  const RankCheckOptions& o_;
  std::vector<ScheduleProblem> problems_;
  std::optional<Listed> sends_, recvs_;   // once the lists are sound
};

}  // namespace

std::uint64_t rank_schedule_hash(const RankSchedule& r) {
  std::uint64_t h = 0x636f6d6d66697431ULL;   // "commfit1"
  for (std::uint64_t v : {std::uint64_t(r.rank), std::uint64_t(r.ranks), std::uint64_t(r.phases), r.staging_bytes,
                          std::uint64_t(r.max_outstanding), std::uint64_t(r.matrix_fingerprint.size())})
    h = hash_fold(h, v);
  for (unsigned char c : r.matrix_fingerprint) h = hash_fold(h, c);
  for (const auto* list : {&r.sends, &r.recvs}) {
    h = hash_fold(h, list->size());
    for (const PeerBytes& x : *list) h = hash_fold(hash_fold(h, std::uint64_t(x.peer)), x.bytes);
  }
  h = hash_fold(h, r.steps.size());
  for (const Step& s : r.steps)
    for (std::uint64_t v : {std::uint64_t(s.phase), std::uint64_t(s.op), std::uint64_t(s.buffer), std::uint64_t(s.peer),
                            std::uint64_t(s.src), std::uint64_t(s.dst), s.offset, s.bytes, s.stage_offset})
      h = hash_fold(h, v);
  // Folded only when present, so that a schedule without one hashes as it always has.
  if (!r.send_order.empty()) {
    h = hash_fold(h, 0x6f72646572000000ULL ^ r.send_order.size());   // "order"
    for (Rank peer : r.send_order) h = hash_fold(h, std::uint64_t(peer));
  }
  return h;
}

std::uint64_t plan_hash_term(std::uint64_t rank_hash, Rank r) { return hash_fold(rank_hash, 0x72616e6b00000000ULL ^ std::uint64_t(r)); }

std::uint64_t plan_hash(const std::vector<RankSchedule>& ranks) {
  PlanHash h;
  for (const RankSchedule& r : ranks) h.add(r);
  return h.value();
}

std::string plan_hash_text(std::uint64_t h) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "h64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::uint64_t parse_plan_hash(const std::string& text) {
  if (text.size() != 20 || text.rfind("h64:", 0) != 0 || text.find_first_not_of("0123456789abcdef", 4) != std::string::npos) return 0;
  return std::strtoull(text.c_str() + 4, nullptr, 16);
}

std::vector<ScheduleProblem> check_rank_schedule(const RankSchedule& rs, const RankCheckOptions& options) {
  return RankChecker(rs, options).run();
}

}  // namespace commfit
