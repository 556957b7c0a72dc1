// CommMatrix: the p x p communication matrix COM of the papers (Ranka-Wang §4,
// Transportation §2). COM(i, j) = bytes rank i sends to rank j; zero entries are absent.
// Stored as an Eigen row-major sparse matrix, so a row is the destinations of one rank in
// increasing order and the whole matrix iterates in (src, dst) order.
#pragma once

#include "ir/types.h"

#include <Eigen/SparseCore>

#include <cstdint>
#include <string>
#include <vector>

namespace commfit {

struct Message {
  Rank src = 0;
  Rank dst = 0;
  Bytes bytes = 0;
  friend bool operator==(const Message&, const Message&) = default;
};

using SparseCom = Eigen::SparseMatrix<Bytes, Eigen::RowMajor, std::int64_t>;

struct CommMatrix {
  Rank ranks = 0;
  SparseCom com;                 // ranks x ranks, compressed, only entries > 0 stored
  std::vector<Bytes> memory;     // free bytes per rank before the exchange; empty = unlimited
  std::string name;              // from the file's "name", or the file's stem
  std::string description;

  std::int64_t nnz() const { return com.nonZeros(); }

  // Calls f(src, dst, bytes) for every stored message, in (src, dst) order.
  template <class F>
  void for_each(F&& f) const {
    for (Eigen::Index i = 0; i < com.outerSize(); ++i)
      for (SparseCom::InnerIterator it(com, i); it; ++it)
        f(static_cast<Rank>(i), static_cast<Rank>(it.col()), it.value());
  }

  // Bytes of message src -> dst (0 when absent). O(log row length).
  Bytes at(Rank src, Rank dst) const;
};

// Builds a matrix from messages. Zero-byte messages are dropped. Duplicate (src, dst)
// pairs and out-of-range ranks are internal errors here: parsers reject them first.
CommMatrix make_matrix(Rank ranks, std::vector<Message> messages);

// All messages in (src, dst) order (a copy: use for_each on large matrices).
std::vector<Message> messages_of(const CommMatrix& m);

// Traffic parameters of Transportation §2 over network messages (src != dst):
// r_i = bytes sent, c_j = bytes received, f_i / g_j = messages sent / received,
// t = max(r, c), h = max(f, g). Local copies (src == dst) are counted apart.
struct TrafficStats {
  std::vector<Bytes> r, c;
  std::vector<std::int64_t> f, g;
  Bytes t = 0;
  std::int64_t h = 0;
  std::int64_t messages = 0;       // network messages
  std::int64_t local_copies = 0;   // src == dst entries
  Bytes total_bytes = 0;           // network bytes
  Bytes local_bytes = 0;
  Bytes max_message = 0;
};
TrafficStats traffic_stats(const CommMatrix& m);

// The matrix by column, for readers that need a rank's incoming messages (its column of COM): the
// entries in (dst, src) order, each with its source and its message number, the place of the
// entry in the row-major order of m.com. 8 bytes a message; message numbers fit 32 bits
// (kMaxMessages in ir/matrix_io.h is 2^27).
struct MatrixColumns {
  std::vector<std::int64_t> start;   // column j is [start[j], start[j + 1])
  std::vector<Rank> src;
  std::vector<std::uint32_t> message;
};
MatrixColumns matrix_columns(const CommMatrix& m);

// "sha256:<hex>" of the canonical text of docs/FORMAT.md §2: "ranks P\n" then "SRC DST BYTES\n"
// per nonzero entry in (src, dst) order.
std::string matrix_fingerprint(const CommMatrix& m);

}  // namespace commfit
