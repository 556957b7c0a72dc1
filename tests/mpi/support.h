// Helpers of the MPI executor tests: seeded patterns, Alltoallv arguments with gaps and shuffled
// segments, send data that encodes (src, dst, offset, iteration) byte by byte, the MPI_Alltoallv
// reference, and a tiny checker whose verdict is agreed over all ranks.
#pragma once

// COMMFIT_TEST_ASAN: built with AddressSanitizer (GCC says so with __SANITIZE_ADDRESS__, clang with
// __has_feature), where the resident set is no measure of what the code allocates.
#if defined(__SANITIZE_ADDRESS__)
#define COMMFIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMMFIT_TEST_ASAN 1
#endif
#endif

#include "backends/exec/commfit_exec.hpp"
#include "ir/comm_matrix.h"
#include "ir/random.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace commfit::mpitest {

// A fresh temporary directory, made by rank 0 and named to every rank (collective).
inline std::filesystem::path shared_scratch(const char* prefix) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[256] = {};
  if (rank == 0) {
    std::snprintf(path, sizeof path, "%s/%s-XXXXXX", std::filesystem::temp_directory_path().c_str(), prefix);
    if (!mkdtemp(path)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

// Byte `offset` of message src -> dst in iteration `iter`: any misplaced byte shows.
inline unsigned char pattern_byte(Rank src, Rank dst, Bytes offset, std::uint64_t iter) {
  const std::uint64_t h = splitmix64((std::uint64_t(src) << 42) ^ (std::uint64_t(dst) << 21) ^
                                   (iter << 56) ^ (offset >> 3));
  return static_cast<unsigned char>(h >> (8 * (offset & 7)));
}

// pattern_byte for bytes [0, n) of message src -> dst, one hash per 8 bytes (the tests fill and
// check megabytes of these).
inline void fill_pattern(unsigned char* out, Bytes n, Rank src, Rank dst, std::uint64_t iter) {
  const std::uint64_t key = (std::uint64_t(src) << 42) ^ (std::uint64_t(dst) << 21) ^ (iter << 56);
  for (Bytes o = 0; o < n; o += 8) {
    const std::uint64_t h = splitmix64(key ^ (o >> 3));
    for (Bytes k = 0; k < 8 && o + k < n; ++k) out[o + k] = static_cast<unsigned char>(h >> (8 * k));
  }
}
// The first offset in [0, n) where `seg` is not message src -> dst's pattern, or n.
inline Bytes first_off_pattern(const unsigned char* seg, Bytes n, Rank src, Rank dst, std::uint64_t iter) {
  const std::uint64_t key = (std::uint64_t(src) << 42) ^ (std::uint64_t(dst) << 21) ^ (iter << 56);
  for (Bytes o = 0; o < n; o += 8) {
    const std::uint64_t h = splitmix64(key ^ (o >> 3));
    for (Bytes k = 0; k < 8 && o + k < n; ++k)
      if (seg[o + k] != static_cast<unsigned char>(h >> (8 * k))) return o + k;
  }
  return n;
}

struct Pattern {
  std::string name;
  CommMatrix matrix;
};

// Sizes drawn log-uniformly in [0, max_bytes] (0 = absent).
inline Bytes log_uniform(std::mt19937_64& g, Bytes max_bytes) {
  std::uniform_real_distribution<double> u(0.0, std::log2(double(max_bytes) + 1));
  return static_cast<Bytes>(std::exp2(u(g))) - 1;
}

inline CommMatrix random_matrix(Rank p, double density, Bytes max_bytes, std::uint64_t seed,
                                bool self, bool log_sizes = false) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<Bytes> size(1, max_bytes);
  std::vector<Message> msgs;
  for (Rank i = 0; i < p; ++i)
    for (Rank j = 0; j < p; ++j) {
      if (i == j && !self) continue;
      if (coin(g) >= density) continue;
      msgs.push_back({i, j, log_sizes ? log_uniform(g, max_bytes) : size(g)});
    }
  return make_matrix(p, std::move(msgs));
}

// The patterns every executor test runs: random sparse, dense, zero rows and columns, self only,
// empty, a hot rank; with `large` instead: sizes from 0 B to 8 MiB, and a ring of 8 MiB messages.
inline std::vector<Pattern> patterns(Rank p, bool large) {
  std::vector<Pattern> out;
  if (large) {
    out.push_back({"sizes-0B-8MiB", random_matrix(p, 0.5, Bytes{8} << 20, 14, true, true)});
    std::vector<Message> msgs;   // a ring of 8 MiB messages plus tiny ones back
    for (Rank i = 0; i < p; ++i) {
      msgs.push_back({i, (i + 1) % p, Bytes{8} << 20});
      if (p > 2) msgs.push_back({(i + 1) % p, i, Bytes(1 + i)});
    }
    out.push_back({"ring-8MiB", make_matrix(p, std::move(msgs))});
    return out;
  }
  out.push_back({"random-sparse", random_matrix(p, 0.35, 4096, 11, true)});
  out.push_back({"dense", random_matrix(p, 1.0, 2048, 12, true)});
  {
    CommMatrix m = random_matrix(p, 0.6, 3000, 13, true);
    std::vector<Message> msgs;
    for (const Message& x : messages_of(m))   // rank 0 sends nothing, rank p-1 receives nothing
      if (x.src != 0 && x.dst != p - 1 && x.dst != 1 % p) msgs.push_back(x);
    out.push_back({"zero-rows-cols", make_matrix(p, std::move(msgs))});
  }
  {
    std::vector<Message> msgs;
    for (Rank i = 0; i < p; ++i) msgs.push_back({i, i, Bytes(1000 + 17 * i)});
    out.push_back({"self-only", make_matrix(p, std::move(msgs))});
  }
  out.push_back({"empty", make_matrix(p, {})});
  {
    std::vector<Message> msgs;   // one sender to all, all to one: a hot receiver
    for (Rank i = 1; i < p; ++i) {
      msgs.push_back({i, 0, Bytes(100 * i + 1)});
      msgs.push_back({0, i, Bytes(50 * i + 3)});
    }
    out.push_back({"hot-rank", make_matrix(p, std::move(msgs))});
  }
  return out;
}

// One rank's MPI_Alltoallv arguments for matrix m, in bytes. Segments are laid out in reverse peer
// order with gaps of a few bytes, so a wrong displacement cannot go unnoticed.
struct Buffers {
  std::vector<int> sc, sd, rc, rd;
  std::vector<unsigned char> send, recv, ref;
};

inline Buffers make_buffers(const CommMatrix& m, Rank rank, Bytes unit = 1) {
  const Rank p = m.ranks;
  Buffers b;
  b.sc.assign(p, 0);
  b.sd.assign(p, 0);
  b.rc.assign(p, 0);
  b.rd.assign(p, 0);
  std::int64_t soff = 3, roff = 5;
  for (Rank q = p - 1; q >= 0; --q) {
    b.sc[q] = static_cast<int>(m.at(rank, q) / unit);
    b.rc[q] = static_cast<int>(m.at(q, rank) / unit);
    b.sd[q] = static_cast<int>(soff);
    b.rd[q] = static_cast<int>(roff);
    soff += b.sc[q] + 2;
    roff += b.rc[q] + 3;
  }
  b.send.assign(static_cast<std::size_t>(soff * std::int64_t(unit)), 0xA5);
  b.recv.assign(static_cast<std::size_t>(roff * std::int64_t(unit)), 0xEE);
  b.ref = b.recv;
  return b;
}

inline void fill_send(Buffers& b, Rank rank, std::uint64_t iter, Bytes unit = 1) {
  for (Rank q = 0; q < static_cast<Rank>(b.sc.size()); ++q) {
    fill_pattern(b.send.data() + std::size_t(b.sd[q]) * unit, Bytes(b.sc[q]) * unit, rank, q, iter);
  }
  std::fill(b.recv.begin(), b.recv.end(), 0xEE);
  std::fill(b.ref.begin(), b.ref.end(), 0xEE);
}

inline void reference(Buffers& b, MPI_Comm comm, Bytes unit = 1) {
  MPI_Datatype t = MPI_BYTE;
  if (unit != 1) {
    MPI_Type_contiguous(static_cast<int>(unit), MPI_BYTE, &t);
    MPI_Type_commit(&t);
  }
  MPI_Alltoallv(b.send.data(), b.sc.data(), b.sd.data(), t, b.ref.data(), b.rc.data(), b.rd.data(), t, comm);
  if (unit != 1) MPI_Type_free(&t);
}

// Empty when recv == ref byte for byte (gaps included) and ref holds the expected pattern.
inline std::string compare(const Buffers& b, Rank rank, std::uint64_t iter, Bytes unit = 1) {
  for (Rank q = 0; q < static_cast<Rank>(b.rc.size()); ++q) {
    const Bytes n = Bytes(b.rc[q]) * unit;
    if (const Bytes o = first_off_pattern(b.ref.data() + std::size_t(b.rd[q]) * unit, n, q, rank, iter); o < n)
      return "MPI_Alltoallv reference itself is wrong at message " + std::to_string(q) + " -> " +
             std::to_string(rank) + " byte " + std::to_string(o);
  }
  if (b.recv == b.ref) return {};
  std::size_t k = 0;
  while (b.recv[k] == b.ref[k]) ++k;
  for (Rank q = 0; q < static_cast<Rank>(b.rc.size()); ++q) {
    const std::size_t lo = std::size_t(b.rd[q]) * unit, hi = lo + std::size_t(b.rc[q]) * unit;
    if (k >= lo && k < hi)
      return "receive buffer differs from MPI_Alltoallv at byte " + std::to_string(k - lo) +
             " of message " + std::to_string(q) + " -> " + std::to_string(rank);
  }
  return "receive buffer differs from MPI_Alltoallv at byte " + std::to_string(k) + " (a gap)";
}

// Counts failures; finish() agrees over all ranks and returns the exit status.
struct Checker {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  long checks = 0, failures = 0;
  explicit Checker(MPI_Comm c) : comm(c) { MPI_Comm_rank(c, &rank); }
  void check(bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    if (++failures <= 20) std::fprintf(stderr, "FAIL rank %d: %s\n", rank, what.c_str());
  }
  int finish(const char* name) {
    long mine[2] = {checks, failures}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, comm);
    int size = 0;
    MPI_Comm_size(comm, &size);
    if (rank == 0)
      std::printf("%s: %d ranks, %ld checks, %ld failures\n", name, size, all[0], all[1]);
    return all[1] == 0 ? 0 : 1;
  }
};

// Every protocol and option combination the executor has. Pieces are split into messages of
// about 1000 bytes times `chunk_scale` (keep the message count sane on 8 MiB patterns).
struct Config {
  std::string name;
  exec::Options options;
};

inline std::vector<Config> configs(std::uint64_t chunk_scale = 1) {
  using exec::Protocol;
  std::vector<Config> out;
  auto add = [&](std::string name, auto f) {
    exec::Options o;
    f(o);
    out.push_back({std::move(name), o});
  };
  add("post-all", [](exec::Options&) {});
  add("post-all+barrier", [](exec::Options& o) { o.barrier = true; });
  add("post-all-nopair", [](exec::Options& o) { o.pairwise = false; });
  add("handshake", [](exec::Options& o) { o.protocol = Protocol::handshake; });
  add("handshake+barrier", [](exec::Options& o) { o.protocol = Protocol::handshake; o.barrier = true; });
  add("handshake-nopair", [](exec::Options& o) { o.protocol = Protocol::handshake; o.pairwise = false; });
  add("cap2", [](exec::Options& o) { o.max_outstanding = 2; });
  add("cap3", [](exec::Options& o) { o.max_outstanding = 3; });
  add("first-call-check", [](exec::Options& o) { o.count_check = exec::CountCheck::first_call; });
  add("persistent", [](exec::Options& o) { o.persistent = true; });
  add("persistent-nopair", [](exec::Options& o) { o.persistent = true; o.pairwise = false; });
  add("no-coalesce", [](exec::Options& o) { o.coalesce = 0; });
  const std::uint64_t k = chunk_scale;
  add("chunks-of-1000", [k](exec::Options& o) { o.max_message = 1000 * k; });
  add("handshake-chunks", [k](exec::Options& o) { o.protocol = Protocol::handshake; o.max_message = 777 * k; });
  add("cap2-chunks", [k](exec::Options& o) { o.max_outstanding = 2; o.max_message = 1500 * k; });
  add("persistent-chunks", [k](exec::Options& o) { o.persistent = true; o.max_message = 900 * k; });
  return out;
}

}  // namespace commfit::mpitest
