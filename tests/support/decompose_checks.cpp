#include "support/decompose_checks.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace commfit::test {
namespace {

std::string where(const Transfer& t) {
  return "transfer " + std::to_string(t.from) + "->" + std::to_string(t.to) + " in phase " +
         std::to_string(t.phase) + ": ";
}

}  // namespace

std::string check_direct_schedule(const Schedule& s, const CommMatrix& m) {
  if (s.ranks != m.ranks) return "rank count differs from the matrix";
  if (s.copies != local_copies(m)) return "copies differ from local_copies(m)";
  const auto p = static_cast<std::size_t>(m.ranks);
  // Partial permutation: per phase each rank sends at most once and receives at most once.
  std::vector<std::int64_t> sent(p, -1), received(p, -1);
  std::vector<Message> seen;
  seen.reserve(s.transfers.size());
  for (std::size_t k = 0; k < s.transfers.size(); ++k) {
    const Transfer& t = s.transfers[k];
    if (k > 0) {
      const Transfer& a = s.transfers[k - 1];
      if (std::tie(a.phase, a.from, a.to, a.piece) >= std::tie(t.phase, t.from, t.to, t.piece))
        return where(t) + "transfers not in canonical order";
    }
    if (t.phase >= s.phases) return where(t) + "phase out of range";
    if (t.from < 0 || t.from >= m.ranks || t.to < 0 || t.to >= m.ranks)
      return where(t) + "rank out of range";
    if (t.from != t.piece.src || t.to != t.piece.dst) return where(t) + "not a direct transfer";
    if (t.from == t.to) return where(t) + "local copy scheduled as a transfer";
    if (t.piece.offset != 0) return where(t) + "message not sent whole";
    if (sent[t.from] == t.phase) return where(t) + "rank sends twice in one phase";
    if (received[t.to] == t.phase) return where(t) + "rank receives twice in one phase";
    sent[t.from] = received[t.to] = t.phase;
    seen.push_back({t.from, t.to, t.piece.bytes});
  }
  std::sort(seen.begin(), seen.end(), [](const Message& a, const Message& b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  std::vector<Message> want;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) want.push_back({i, j, b});
  });
  if (seen.size() != want.size())
    return std::to_string(seen.size()) + " transfers for " + std::to_string(want.size()) +
           " network messages";
  for (std::size_t k = 0; k < want.size(); ++k)
    if (!(seen[k] == want[k]))
      return "message " + std::to_string(want[k].src) + "->" + std::to_string(want[k].dst) +
             " missing, duplicated or with the wrong size";
  return {};
}

bool same_schedule(const Schedule& a, const Schedule& b) {
  return a.ranks == b.ranks && a.phases == b.phases && a.transfers == b.transfers && a.copies == b.copies;
}

}  // namespace commfit::test
