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

MatrixColumns matrix_columns(const CommMatrix& m) {
  commfit_assert(m.com.isCompressed() && m.nnz() < (std::int64_t{1} << 32), "matrix_columns", "the matrix is not compressed or has 2^32 entries");
  const Rank p = m.ranks;
  const auto* row = m.com.outerIndexPtr();
  const auto* col = m.com.innerIndexPtr();
  MatrixColumns c;
  c.start.assign(static_cast<std::size_t>(p) + 1, 0);
  for (std::int64_t x = 0; x < m.nnz(); ++x) ++c.start[static_cast<std::size_t>(col[x]) + 1];
  for (Rank j = 0; j < p; ++j) c.start[j + 1] += c.start[j];
  c.src.resize(static_cast<std::size_t>(m.nnz()));
  c.message.resize(static_cast<std::size_t>(m.nnz()));
  std::vector<std::int64_t> next(c.start.begin(), c.start.end() - 1);
  for (Rank i = 0; i < p; ++i)
    for (std::int64_t x = row[i]; x < row[i + 1]; ++x) {
      const std::int64_t at = next[static_cast<std::size_t>(col[x])]++;
      c.src[static_cast<std::size_t>(at)] = i;
      c.message[static_cast<std::size_t>(at)] = static_cast<std::uint32_t>(x);
    }
  return c;
}

std::string matrix_fingerprint(const CommMatrix& m) {
  Sha256 sha;
  // Canonical text, fed in blocks so a 10^7-message matrix never exists as one string.
  constexpr std::size_t kBlock = std::size_t{1} << 16, kLine = 3 * 24;   // a line: three numbers and their separators
  std::vector<char> block(kBlock + kLine);
  const std::string head = "ranks " + std::to_string(m.ranks) + "\n";
  std::copy(head.begin(), head.end(), block.begin());
  char* at = block.data() + head.size();
  char* const flush_at = block.data() + kBlock;
  auto put = [&](std::uint64_t v, char end) {
    at = std::to_chars(at, at + 24, v).ptr;
    *at++ = end;
  };
  m.for_each([&](Rank i, Rank j, Bytes b) {
    put(static_cast<std::uint64_t>(i), ' ');
    put(static_cast<std::uint64_t>(j), ' ');
    put(b, '\n');
    if (at >= flush_at) {
      sha.update(std::string_view(block.data(), static_cast<std::size_t>(at - block.data())));
      at = block.data();
    }
  });
  sha.update(std::string_view(block.data(), static_cast<std::size_t>(at - block.data())));
  return "sha256:" + to_hex(sha.digest());
}

}  // namespace commfit
