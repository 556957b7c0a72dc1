#include "ir/comm_matrix.h"

#include "ir/error.h"
#include "ir/sha256.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace commfit {

Bytes CommMatrix::at(Rank src, Rank dst) const {
  const auto* begin = com.innerIndexPtr() + com.outerIndexPtr()[src];
  const auto* end = com.innerIndexPtr() + com.outerIndexPtr()[src + 1];
  const auto* it = std::lower_bound(begin, end, static_cast<std::int64_t>(dst));
  if (it == end || *it != dst) return 0;
  return com.valuePtr()[it - com.innerIndexPtr()];
}

CommMatrix make_matrix(Rank ranks, std::vector<Message> messages) {
  commfit_assert(ranks >= 0, "make_matrix", "negative rank count");
  std::erase_if(messages, [](const Message& x) { return x.bytes == 0; });
  // Readers and generators mostly give the messages in (src, dst) order already: one linear pass
  // spares the sort then (10^7 sorted messages: 0.01 s against 0.25 s). Without duplicates the
  // order is unique, so the result is the same either way; with one, the assertion below still
  // finds it.
  const auto less = [](const Message& a, const Message& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; };
  if (!std::is_sorted(messages.begin(), messages.end(), less)) std::sort(messages.begin(), messages.end(), less);
  CommMatrix m;
  m.ranks = ranks;
  m.com.resize(ranks, ranks);
  m.com.resizeNonZeros(static_cast<Eigen::Index>(messages.size()));
  auto* outer = m.com.outerIndexPtr();
  auto* inner = m.com.innerIndexPtr();
  auto* value = m.com.valuePtr();
  std::fill(outer, outer + ranks + 1, 0);
  for (std::size_t k = 0; k < messages.size(); ++k) {
    const Message& x = messages[k];
    commfit_assert(x.src >= 0 && x.src < ranks && x.dst >= 0 && x.dst < ranks, "make_matrix",
                   "rank out of range");
    commfit_assert(k == 0 || messages[k - 1].src != x.src || messages[k - 1].dst != x.dst,
                   "make_matrix", "duplicate (src, dst) pair");
    ++outer[x.src + 1];
    inner[k] = x.dst;
    value[k] = x.bytes;
  }
  for (Rank i = 0; i < ranks; ++i) outer[i + 1] += outer[i];
  return m;
}

std::vector<Message> messages_of(const CommMatrix& m) {
  std::vector<Message> out;
  out.reserve(static_cast<std::size_t>(m.nnz()));
  m.for_each([&](Rank i, Rank j, Bytes b) { out.push_back({i, j, b}); });
  return out;
}

TrafficStats traffic_stats(const CommMatrix& m) {
  TrafficStats s;
  const auto p = static_cast<std::size_t>(m.ranks);
  s.r.assign(p, 0);
  s.c.assign(p, 0);
  s.f.assign(p, 0);
  s.g.assign(p, 0);
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) {
      ++s.local_copies;
      s.local_bytes += b;
      return;
    }
    s.r[i] += b;
    s.c[j] += b;
    ++s.f[i];
    ++s.g[j];
    ++s.messages;
    s.total_bytes += b;
    s.max_message = std::max(s.max_message, b);
  });
  for (std::size_t i = 0; i < p; ++i) {
    s.t = std::max({s.t, s.r[i], s.c[i]});
    s.h = std::max({s.h, s.f[i], s.g[i]});
  }
  return s;
}

std::string matrix_fingerprint(const CommMatrix& m) {
  Sha256 sha;
  // Canonical text, fed in blocks so a 10^7-message matrix never exists as one string.
  std::string block;
  block.reserve(1 << 16);
  block += "ranks " + std::to_string(m.ranks) + "\n";
  char num[24];
  auto put = [&](std::uint64_t v, char end) {
    auto [p, ec] = std::to_chars(num, num + sizeof num, v);
    block.append(num, p);
    block.push_back(end);
  };
  m.for_each([&](Rank i, Rank j, Bytes b) {
    put(static_cast<std::uint64_t>(i), ' ');
    put(static_cast<std::uint64_t>(j), ' ');
    put(b, '\n');
    if (block.size() > (1 << 16) - 64) {
      sha.update(block);
      block.clear();
    }
  });
  sha.update(block);
  return "sha256:" + to_hex(sha.digest());
}

}  // namespace commfit
