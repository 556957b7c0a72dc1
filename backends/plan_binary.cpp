// The single-file binary plan (docs/FORMAT.md §3.3): header, index and slice encoding, the
// streaming writer, the readers of a whole plan, of one rank's slice and of the manifest. One
// file because writer and readers share the field offsets and the one canonical encoding that
// makes the same plan give the same bytes; the decoder refuses exactly what the encoder would not
// write, which is easiest to keep true with both side by side.
#include "backends/plan_binary.h"

#include "backends/atomic_output.h"
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/matrix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

// XXH3-64, the format's checksum, compiled into this file alone (Debian's libxxhash-dev, used as a
// header): nothing is linked, and no installed header needs xxhash.h.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace commfit {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'C', 'F', 'I', 'T', 'P', 'L', 'A', 'N'};
constexpr std::size_t kFingerprintField = 152;   // header bytes 84..235

// Header field offsets (docs/FORMAT.md §3.3).
enum : std::size_t {
  hVersion = 8, hHeaderBytes = 12, hRanks = 16, hPhases = 20, hEntryBytes = 24, hSliceEncoding = 28,
  hFileBytes = 32, hIndexOffset = 40, hManifestOffset = 48, hManifestBytes = 56,
  hManifestChecksum = 64, hStagingMax = 72, hFingerprintLen = 80, hFingerprint = 84, hIndexEntries = 236,
  hPlanHash = 240, hChecksum = 248,
};
// Index entry field offsets.
enum : std::size_t {
  eSliceOffset = 0, eSliceBytes = 8, eSteps = 16, eSends = 24, eRecvs = 28, eStaging = 32,
  eRank = 40, ePhases = 44, eWindow = 48, eEntryCheck = 52, eChecksum = 56,
};

// The fewest bytes a send or receive (peer gap, bytes) and a step (phase delta, code, peer,
// offset, bytes) take: a slice's counts are checked against its size before anything is allocated.
constexpr std::uint64_t kMinPeerBytes = 2, kMinStepBytes = 5;
// The most: a varint of 64 bits takes 10 bytes, of 32 bits 5; a phase delta is the zigzag of a
// difference of two 32-bit phases (33 bits, 5 bytes).
constexpr std::size_t kMaxPeerBytes = 5 + 10, kMaxStepBytes = 5 + 1 + 3 * 5 + 3 * 10;

// The writer hands the kernel about this much at a time; the whole-plan reader reads as much.
constexpr std::size_t kWriteBufferBytes = std::size_t{1} << 20;
constexpr std::size_t kReadBlockBytes = std::size_t{4} << 20;

// ---------------------------------------------------------------------------------------------
// Fixed-size integers (header and index entries) and varints (slices).

void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int k = 3; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

// Unsigned LEB128: seven bits a byte, low bits first, the high bit set on every byte but the last.
std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<std::uint8_t>(v | 0x80);
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}
// Signed values (a step's phase delta) as unsigned: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
std::int64_t unzigzag(std::uint64_t z) { return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1); }

// ---------------------------------------------------------------------------------------------
// The slice encoding (docs/FORMAT.md §3.3, "Slices").

// How a step gives its src or dst (bits 4-5 and 6-7 of its code byte).
enum Given : unsigned { kExplicit = 0, kThisRank = 1, kThePeer = 2 };

// The one canonical choice, so that the same plan always gives the same bytes: this rank before
// the peer before an explicit value.
unsigned given(Rank v, Rank me, Rank peer) { return v == me ? kThisRank : v == peer ? kThePeer : kExplicit; }

// Bytes that grow without zero-filling (std::vector::resize would write every byte twice).
class ByteBuffer {
 public:
  std::uint8_t* data() { return data_.get(); }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // Room for at least `more` bytes past the end; returns where they start.
  std::uint8_t* tail(std::size_t more) {
    if (more > cap_ - size_) {
      const std::size_t cap = std::max(2 * cap_, size_ + more);
      std::unique_ptr<std::uint8_t[]> bigger(new std::uint8_t[cap]);
      if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
      data_ = std::move(bigger);
      cap_ = cap;
    }
    return data_.get() + size_;
  }
  // The bytes up to `end` (inside the last tail()) are now part of the buffer.
  void commit(const std::uint8_t* end) { size_ = static_cast<std::size_t>(end - data_.get()); }

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

// sends or recvs: for each entry the gap to the previous peer (peer - previous - 1, the first
// entry's previous being -1) and the bytes. Peers strictly increase, so a gap is never negative.
std::uint8_t* encode_peers(std::uint8_t* p, const std::vector<PeerBytes>& list, Rank rank, const char* name) {
  std::int64_t previous = -1;
  for (const PeerBytes& x : list) {
    commfit_assert(x.peer > previous, "PlanBinaryWriter",
                   "rank " + std::to_string(rank) + "'s " + name + " are not in strictly increasing peer order");
    p = put_varint(p, static_cast<std::uint64_t>(x.peer - previous - 1));
    p = put_varint(p, x.bytes);
    previous = x.peer;
  }
  return p;
}

// One step: phase delta (zigzag), code byte, peer, src and dst when explicit, offset, bytes, and
// stage_offset for a staged step. Ranks are written as their 32-bit values, so whatever the
// schedule holds reaches the reader's range checks.
std::uint8_t* encode_step(std::uint8_t* p, const Step& s, Phase previous_phase, Rank me) {
  p = put_varint(p, zigzag(std::int64_t{s.phase} - std::int64_t{previous_phase}));
  const unsigned src = given(s.src, me, s.peer), dst = given(s.dst, me, s.peer);
  *p++ = static_cast<std::uint8_t>(static_cast<unsigned>(s.op) | static_cast<unsigned>(s.buffer) << 2 | src << 4 | dst << 6);
  p = put_varint(p, static_cast<std::uint32_t>(s.peer));
  if (src == kExplicit) p = put_varint(p, static_cast<std::uint32_t>(s.src));
  if (dst == kExplicit) p = put_varint(p, static_cast<std::uint32_t>(s.dst));
  p = put_varint(p, s.offset);
  p = put_varint(p, s.bytes);
  if (s.buffer == Buffer::stage) p = put_varint(p, s.stage_offset);
  return p;
}

// Appends rank `rs`'s slice to `out`: sends, recvs, the posting order when there is one (its
// length, then each peer), steps.
void encode_slice(const RankSchedule& rs, ByteBuffer& out) {
  std::uint8_t* p = out.tail((rs.sends.size() + rs.recvs.size()) * kMaxPeerBytes + (rs.send_order.size() + 1) * 5 +
                             rs.steps.size() * kMaxStepBytes);
  p = encode_peers(p, rs.sends, rs.rank, "sends");
  p = encode_peers(p, rs.recvs, rs.rank, "recvs");
  if (!rs.send_order.empty()) {
    p = put_varint(p, rs.send_order.size());
    for (Rank peer : rs.send_order) p = put_varint(p, static_cast<std::uint32_t>(peer));
  }
  Phase phase = 0;
  for (const Step& s : rs.steps) {
    p = encode_step(p, s, phase, rs.rank);
    phase = s.phase;
  }
  out.commit(p);
}

// Decodes one slice, refusing anything the encoder would not have written: a truncated or
// overlong varint, a value out of range, an unknown code, a src or dst given otherwise than the
// canonical way, bytes left over. Errors name the file, the rank and the entry or step.
class SliceDecoder {
 public:
  SliceDecoder(const std::string& file, Rank me, Rank ranks, const std::uint8_t* data, std::uint64_t size)
      : file_(file), me_(me), ranks_(static_cast<std::uint64_t>(ranks)), p_(data), end_(data + size) {}

  void peers(std::vector<PeerBytes>& out, std::uint64_t n, const char* list) {
    list_ = list;
    out.resize(n);
    std::uint64_t least = 0;   // the lowest peer this entry may name: the previous one's + 1
    for (item_ = 0; item_ < n; ++item_) {
      const std::uint64_t gap = varint("peer");
      if (gap >= ranks_ - least)   // least <= ranks_: the previous peer was below ranks_
        fail("peer " + std::to_string(least) + " + " + std::to_string(gap) + " out of range (ranks = " + std::to_string(ranks_) + ")");
      out[item_].peer = static_cast<Rank>(least + gap);
      out[item_].bytes = varint("bytes");
      least += gap + 1;
    }
    list_ = nullptr;
  }

  // The posting order: its length (at least 1, at most one peer per byte left), then each peer.
  void send_order(std::vector<Rank>& out) {
    list_ = "send_order";
    item_ = 0;
    const std::uint64_t n = varint("length");
    if (n == 0 || n > static_cast<std::uint64_t>(end_ - p_))
      fail("a posting order of " + std::to_string(n) + " peers (at least 1, and no more than the " +
           std::to_string(end_ - p_) + " bytes left in the slice)");
    out.resize(n);
    for (item_ = 0; item_ < n; ++item_) out[item_] = rank_field("peer");
    list_ = nullptr;
  }

  void steps(std::vector<Step>& out, std::uint64_t n) {
    list_ = "step";
    out.resize(n);
    std::int64_t phase = 0;
    for (item_ = 0; item_ < n; ++item_) {
      Step& s = out[item_];
      const std::uint64_t z = varint("phase");
      const std::int64_t next = z > (std::uint64_t{1} << 33) ? -1 : phase + unzigzag(z);
      if (next < 0 || next > std::int64_t{UINT32_MAX}) fail("the phase delta takes the phase out of range");
      s.phase = static_cast<Phase>(phase = next);
      const unsigned code = byte("code byte");
      const unsigned op = code & 3, buffer = code >> 2 & 3, src = code >> 4 & 3, dst = code >> 6;
      if (op == 3) fail(code_text(code) + ": unknown op 3 (0 send, 1 recv, 2 copy)");
      if (buffer == 3) fail(code_text(code) + ": unknown buffer 3 (0 send, 1 recv, 2 stage)");
      if (src == 3 || dst == 3) fail(code_text(code) + ": unknown way of giving " + (src == 3 ? "src" : "dst") + " (0 explicit, 1 this rank, 2 the peer)");
      s.op = static_cast<Op>(op);
      s.buffer = static_cast<Buffer>(buffer);
      s.peer = rank_field("peer");
      s.src = given_rank(src, s.peer, "src");
      s.dst = given_rank(dst, s.peer, "dst");
      s.offset = varint("offset");
      s.bytes = varint("bytes");
      s.stage_offset = s.buffer == Buffer::stage ? varint("stage_offset") : kNoStage;
    }
    list_ = nullptr;
  }

  // Every byte of the slice was used.
  void end() const {
    if (p_ != end_) fail(std::to_string(end_ - p_) + " bytes after the last step (the slice is longer than its counts say)");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const std::string at = "rank " + std::to_string(me_) + (list_ ? std::string(" ") + list_ + " " + std::to_string(item_) : std::string(" slice"));
    throw InputError(file_, at, what);
  }

  static std::string code_text(unsigned code) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "code byte 0x%02x", code);
    return buf;
  }

  unsigned byte(const char* field) {
    if (p_ == end_) fail(std::string("truncated: the slice ends inside the ") + field);
    return *p_++;
  }

  // A LEB128 varint of at most 64 bits, in its shortest form.
  std::uint64_t varint(const char* field) {
    if (p_ != end_ && *p_ < 0x80) return *p_++;   // most fields take one byte
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const unsigned b = byte(field);
      if (shift == 63 && b > 1) fail(std::string(field) + " does not fit in 64 bits (varint too long)");
      v |= std::uint64_t{b & 0x7f} << shift;
      if (b < 0x80) {
        if (b == 0 && shift > 0) fail(std::string(field) + ": overlong varint (not the shortest encoding)");
        return v;
      }
    }
  }

  Rank rank_field(const char* field) {
    const std::uint64_t v = varint(field);
    if (v >= ranks_) fail(std::string(field) + " " + std::to_string(v) + " out of range");
    return static_cast<Rank>(v);
  }

  // src or dst, given as the code byte says; only the canonical way (given()) is accepted.
  Rank given_rank(unsigned how, Rank peer, const char* field) {
    if (how == kThisRank) return me_;
    if (how == kThePeer) {
      if (peer == me_) fail(std::string(field) + " is given as the peer, which is this rank (not the canonical encoding)");
      return peer;
    }
    const Rank v = rank_field(field);
    if (v == me_ || v == peer)
      fail(std::string(field) + " " + std::to_string(v) + " is given explicitly but is " + (v == me_ ? "this rank" : "the peer") +
           " (not the canonical encoding)");
    return v;
  }

  const std::string& file_;
  Rank me_;
  std::uint64_t ranks_;
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  const char* list_ = nullptr;   // what is being read: "sends", "recvs", "step", or the slice itself
  std::uint64_t item_ = 0;
};

// A schedule the index leaves out (idle_rank gives it back exactly).
bool is_idle(const RankSchedule& r) {
  return r.sends.empty() && r.recvs.empty() && r.steps.empty() && r.staging_bytes == 0 && r.max_outstanding == 0;
}

// The low 32 bits of the checksum of an entry's first 52 bytes, stored at eEntryCheck: a reader
// looking for its rank trusts every entry it visits on the way, not only the one it stops at.
std::uint32_t entry_check(const std::uint8_t* e) {
  return static_cast<std::uint32_t>(plan_binary_checksum(e, eEntryCheck));
}

// The checksum stored at eChecksum: the slice's, seeded with that of the entry's first 56 bytes.
std::uint64_t slice_checksum(const std::uint8_t* e, const std::uint8_t* slice, std::uint64_t bytes) {
  return plan_binary_checksum(slice, bytes, plan_binary_checksum(e, eChecksum));
}

// ---------------------------------------------------------------------------------------------
// Reading.

// An open file; reads are exact or an InputError naming the file.
class InFile {
 public:
  explicit InFile(const fs::path& path) : name_(path.string()) {
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer (it is refused below).
    fd_ = ::open(name_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) throw InputError(name_, "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw InputError(name_, "", "not a regular file (a FIFO, device, socket or directory is refused)");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~InFile() { ::close(fd_); }
  InFile(const InFile&) = delete;
  InFile& operator=(const InFile&) = delete;

  const std::string& name() const { return name_; }
  std::uint64_t size() const { return size_; }

  void read(void* out, std::uint64_t bytes, std::uint64_t offset, const std::string& place) const {
    auto* p = static_cast<char*>(out);
    while (bytes > 0) {
      ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw InputError(name_, place, n < 0 ? std::string("read failed: ") + std::strerror(errno)
                                             : "unexpected end of file (truncated)");
      p += n;
      bytes -= static_cast<std::uint64_t>(n);
      offset += static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::string name_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

struct Header {
  std::uint32_t ranks = 0, phases = 0;
  std::uint32_t entries = 0;   // index entries: one per rank whose schedule is not empty, by rank
  std::uint64_t file_bytes = 0, index_offset = 0, manifest_offset = 0, manifest_bytes = 0;
  std::uint64_t manifest_checksum = 0, staging_max = 0, plan_hash = 0;
  std::string fingerprint;

  // Slices lie end to end in [kPlanBinaryHeaderBytes, index_offset).
  std::uint64_t index_end() const { return index_offset + std::uint64_t{entries} * kPlanBinaryIndexEntryBytes; }
};

// The version check comes before the checksum's, so that an old file is named as such.
void check_version(const InFile& f, std::uint32_t version) {
  if (version == kPlanBinaryVersion) return;
  std::string what = "unsupported version " + std::to_string(version) + " (this build reads version " + std::to_string(kPlanBinaryVersion) + ")";
  if (version > 0 && version < kPlanBinaryVersion)
    what += ": plan the matrix again, or convert the file to a plan directory with the commfit that wrote it";
  throw InputError(f.name(), "header", what);
}

// The regions lie end to end: header, slices, index, manifest, and nothing after.
void check_layout(const InFile& f, const Header& h) {
  const std::uint64_t header = kPlanBinaryHeaderBytes;
  if (h.index_offset < header || h.index_offset > h.file_bytes || h.index_end() > h.file_bytes)
    throw InputError(f.name(), "header", "index of " + std::to_string(h.entries) + " entries at byte " + std::to_string(h.index_offset) +
                                             " does not fit in the file");
  if (h.manifest_offset != h.index_end() || h.manifest_bytes != h.file_bytes - h.manifest_offset)
    throw InputError(f.name(), "header", "the manifest does not lie between the index's end (byte " + std::to_string(h.index_end()) +
                                             ") and the end of the file");
}

Header read_header(const InFile& f) {
  const std::string& name = f.name();
  if (f.size() < kPlanBinaryHeaderBytes)
    throw InputError(name, "header", "truncated: the file has " + std::to_string(f.size()) +
                                         " bytes, a binary plan has at least " +
                                         std::to_string(kPlanBinaryHeaderBytes));
  std::uint8_t b[kPlanBinaryHeaderBytes];
  f.read(b, sizeof b, 0, "header");
  if (std::memcmp(b, kMagic, sizeof kMagic) != 0)
    throw InputError(name, "header", "not a commfit binary plan (bad magic)");
  check_version(f, get_u32(b + hVersion));
  if (plan_binary_checksum(b, hChecksum) != get_u64(b + hChecksum))
    throw InputError(name, "header", "checksum mismatch (file corrupted)");
  if (get_u32(b + hHeaderBytes) != kPlanBinaryHeaderBytes || get_u32(b + hEntryBytes) != kPlanBinaryIndexEntryBytes)
    throw InputError(name, "header", "unexpected header or index entry size");
  if (get_u32(b + hSliceEncoding) != kPlanBinarySliceEncoding)
    throw InputError(name, "header", "unknown slice encoding " + std::to_string(get_u32(b + hSliceEncoding)));
  Header h;
  h.ranks = get_u32(b + hRanks);
  h.phases = get_u32(b + hPhases);
  h.file_bytes = get_u64(b + hFileBytes);
  h.index_offset = get_u64(b + hIndexOffset);
  h.manifest_offset = get_u64(b + hManifestOffset);
  h.manifest_bytes = get_u64(b + hManifestBytes);
  h.manifest_checksum = get_u64(b + hManifestChecksum);
  h.staging_max = get_u64(b + hStagingMax);
  h.plan_hash = get_u64(b + hPlanHash);
  h.entries = get_u32(b + hIndexEntries);
  const std::uint32_t fp_len = get_u32(b + hFingerprintLen);
  if (h.file_bytes != f.size())
    throw InputError(name, "header", "the header says the file has " + std::to_string(h.file_bytes) +
                                         " bytes but it has " + std::to_string(f.size()) +
                                         " (truncated or appended to)");
  if (h.ranks == 0 || h.ranks > kMaxRanks)
    throw InputError(name, "header", "rank count " + std::to_string(h.ranks) + " out of range (1 to 2^24)");
  if (h.phases > kMaxPhases)
    throw InputError(name, "header", "phase count " + std::to_string(h.phases) + " is over the limit of " + std::to_string(kMaxPhases));
  if (fp_len > kFingerprintField)
    throw InputError(name, "header", "fingerprint length " + std::to_string(fp_len) + " too long");
  h.fingerprint.assign(reinterpret_cast<const char*>(b + hFingerprint), fp_len);
  if (h.entries > h.ranks)
    throw InputError(name, "header", std::to_string(h.entries) + " index entries for " + std::to_string(h.ranks) + " ranks");
  check_layout(f, h);
  return h;
}

// The schedule of a rank the index has no entry for: it neither sends, receives nor stages.
RankSchedule idle_rank(const Header& h, Rank rank) {
  RankSchedule r;
  r.rank = rank;
  r.ranks = static_cast<Rank>(h.ranks);
  r.phases = h.phases;
  r.matrix_fingerprint = h.fingerprint;
  return r;
}

std::string entry_place(std::uint32_t k) { return "index entry " + std::to_string(k); }

// Checks index entry `k` (its 64 bytes at `e`) alone; returns the rank it holds.
Rank check_entry(const InFile& f, const Header& h, std::uint32_t k, const std::uint8_t* e) {
  if (entry_check(e) != get_u32(e + eEntryCheck)) throw InputError(f.name(), entry_place(k), "checksum mismatch (file corrupted)");
  const std::uint32_t rank = get_u32(e + eRank);
  if (rank >= h.ranks)
    throw InputError(f.name(), entry_place(k), "holds rank " + std::to_string(rank) + " of a plan for " + std::to_string(h.ranks) + " ranks");
  return static_cast<Rank>(rank);
}

// Reads index entry `k` into `e` and checks it; returns the rank it holds.
Rank read_entry(const InFile& f, const Header& h, std::uint32_t k, std::uint8_t (&e)[kPlanBinaryIndexEntryBytes]) {
  f.read(e, sizeof e, h.index_offset + std::uint64_t{k} * kPlanBinaryIndexEntryBytes, entry_place(k));
  return check_entry(f, h, k, e);
}

// Where entry `k`'s slice lies, checked against the slices' region and its counts.
struct SliceRange {
  std::uint64_t offset = 0, bytes = 0;
};
SliceRange slice_range(const InFile& f, const Header& h, std::uint32_t k, const std::uint8_t* e) {
  const SliceRange s{get_u64(e + eSliceOffset), get_u64(e + eSliceBytes)};
  const std::uint64_t steps = get_u64(e + eSteps), peers = std::uint64_t{get_u32(e + eSends)} + get_u32(e + eRecvs);
  if (s.offset < kPlanBinaryHeaderBytes || s.offset > h.index_offset || s.bytes > h.index_offset - s.offset)
    throw InputError(f.name(), entry_place(k), "slice range does not fit in the file's slices");
  if (steps > s.bytes / kMinStepBytes || peers * kMinPeerBytes + steps * kMinStepBytes > s.bytes)
    throw InputError(f.name(), entry_place(k), "a slice of " + std::to_string(s.bytes) + " bytes cannot hold " + std::to_string(peers) +
                                                   " sends and recvs and " + std::to_string(steps) + " steps");
  if (get_u32(e + ePhases) != h.phases)   // the executor reads this slice alone: check it here
    throw InputError(f.name(), entry_place(k), "phase count " + std::to_string(get_u32(e + ePhases)) + " differs from the header's " + std::to_string(h.phases));
  return s;
}

// Checked, decoded form of the slice `s` of index entry `k` (at `e`, holding `rank`).
RankSchedule decode_slice(const InFile& f, const Header& h, std::uint32_t k, const std::uint8_t* e, Rank rank, const std::uint8_t* s) {
  const std::uint64_t bytes = get_u64(e + eSliceBytes);
  if (slice_checksum(e, s, bytes) != get_u64(e + eChecksum))
    throw InputError(f.name(), "rank " + std::to_string(rank) + " slice", "checksum mismatch (file corrupted)");
  RankSchedule r = idle_rank(h, rank);
  r.staging_bytes = get_u64(e + eStaging);
  const std::uint32_t window = get_u32(e + eWindow);
  r.max_outstanding = window & ~kPlanBinaryListedOrder;   // checked with the rest (check_rank_schedule)
  SliceDecoder d(f.name(), rank, static_cast<Rank>(h.ranks), s, bytes);
  d.peers(r.sends, get_u32(e + eSends), "sends");
  d.peers(r.recvs, get_u32(e + eRecvs), "recvs");
  if (window & kPlanBinaryListedOrder) d.send_order(r.send_order);
  d.steps(r.steps, get_u64(e + eSteps));
  d.end();
  if (is_idle(r)) throw InputError(f.name(), entry_place(k), "holds an idle rank (an idle rank has no entry)");
  // What the fields say together (ir/plan.h), as the plan directory's reader checks it.
  if (const auto problems = check_rank_schedule(r, kFormatOnly); !problems.empty())
    throw InputError(f.name(), "rank " + std::to_string(rank) + " slice " + problems[0].place, problems[0].what);
  return r;
}

// Rank `rank`'s schedule alone: a binary search of the index (O(log entries) small reads, each
// entry checked), then one read of its slice; a rank without an entry is idle.
RankSchedule read_rank(const InFile& f, const Header& h, Rank rank) {
  if (rank < 0 || static_cast<std::uint32_t>(rank) >= h.ranks)
    throw InputError(f.name(), "header", "the plan is for " + std::to_string(h.ranks) +
                                             " ranks, it has no rank " + std::to_string(rank));
  std::uint32_t lo = 0, hi = h.entries;
  std::uint8_t e[kPlanBinaryIndexEntryBytes];
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    const Rank at = read_entry(f, h, mid, e);
    if (at < rank) lo = mid + 1;
    else if (at > rank) hi = mid;
    else {
      const SliceRange s = slice_range(f, h, mid, e);
      std::vector<std::uint8_t> slice(s.bytes);
      f.read(slice.data(), s.bytes, s.offset, "rank " + std::to_string(rank) + " slice");
      return decode_slice(f, h, mid, e, rank, slice.data());
    }
  }
  return idle_rank(h, rank);
}

// The slices' region read front to back in blocks of kReadBlockBytes (or one slice, when larger),
// so that reading a whole plan takes one pread per few MiB, not one per rank.
class SliceStream {
 public:
  SliceStream(const InFile& f, std::uint64_t begin) : f_(f), at_(begin) {}

  // The next `bytes` bytes of the file (valid until the next call); the caller checked that they
  // lie inside the slices' region, which ends at `end`.
  const std::uint8_t* next(std::uint64_t bytes, std::uint64_t end, const std::string& place) {
    if (bytes > have_ - used_) {
      const std::size_t left = have_ - used_;
      const std::size_t cap = std::max<std::size_t>(kReadBlockBytes, bytes);
      if (cap > cap_) {
        std::unique_ptr<std::uint8_t[]> bigger(new std::uint8_t[cap]);
        if (left > 0) std::memcpy(bigger.get(), buf_.get() + used_, left);
        buf_ = std::move(bigger);
        cap_ = cap;
      } else if (left > 0) {
        std::memmove(buf_.get(), buf_.get() + used_, left);
      }
      const std::size_t more = static_cast<std::size_t>(std::min<std::uint64_t>(cap_ - left, end - at_));
      f_.read(buf_.get() + left, more, at_, place);
      at_ += more;
      used_ = 0;
      have_ = left + more;
    }
    const std::uint8_t* p = buf_.get() + used_;
    used_ += static_cast<std::size_t>(bytes);
    return p;
  }

 private:
  const InFile& f_;
  std::uint64_t at_;   // file offset of buf_[have_]
  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t cap_ = 0, used_ = 0, have_ = 0;
};

// The manifest's text, checked against its checksum and the header.
Manifest read_manifest(const InFile& f, const Header& h) {
  std::string text(h.manifest_bytes, '\0');
  f.read(text.data(), text.size(), h.manifest_offset, "manifest");
  if (plan_binary_checksum(text.data(), text.size()) != h.manifest_checksum)
    throw InputError(f.name(), "manifest", "checksum mismatch (file corrupted)");
  Manifest m = parse_manifest(text, f.name() + " (manifest)");
  if (m.ranks != static_cast<Rank>(h.ranks) || m.phases != h.phases ||
      m.matrix_fingerprint != h.fingerprint || m.staging_bytes_max != h.staging_max)
    throw InputError(f.name(), "manifest", "disagrees with the header");
  return m;
}

// ---------------------------------------------------------------------------------------------
// Writing.

void refuse_unless_plan_binary(const fs::path& file) {
  check_output_target(file, {"binary plan file", false, [](const fs::path& path, bool is_directory) {
                               if (is_directory) throw UsageError(path.string() + " is a directory: the binary form of a plan is one file");
                               if (!is_plan_binary(path)) throw UsageError(path.string() + " exists and is not a commfit binary plan: not replacing it");
                             }});
}

// Writes all of `data` at file offset `offset`.
void write_all(int fd, const void* data, std::size_t bytes, std::uint64_t offset, const std::string& name) {
  if (const int err = write_all_at(fd, data, bytes, offset); err != 0) throw UsageError("cannot write " + name + ": " + std::strerror(err));
}

// The header of a plan with manifest `m` whose index starts at `index_offset` and holds
// `entries` entries, followed by the manifest's text `manifest`.
void encode_header(std::uint8_t (&b)[kPlanBinaryHeaderBytes], const Manifest& m, std::uint64_t index_offset,
                   std::uint32_t entries, const std::string& manifest) {
  const std::uint64_t manifest_offset = index_offset + std::uint64_t{entries} * kPlanBinaryIndexEntryBytes;
  std::memset(b, 0, sizeof b);
  std::memcpy(b, kMagic, sizeof kMagic);
  put_u32(b + hVersion, kPlanBinaryVersion);
  put_u32(b + hHeaderBytes, kPlanBinaryHeaderBytes);
  put_u32(b + hRanks, static_cast<std::uint32_t>(m.ranks));
  put_u32(b + hPhases, m.phases);
  put_u32(b + hEntryBytes, kPlanBinaryIndexEntryBytes);
  put_u32(b + hSliceEncoding, kPlanBinarySliceEncoding);
  put_u64(b + hFileBytes, manifest_offset + manifest.size());
  put_u64(b + hIndexOffset, index_offset);
  put_u64(b + hManifestOffset, manifest_offset);
  put_u64(b + hManifestBytes, manifest.size());
  put_u64(b + hManifestChecksum, plan_binary_checksum(manifest.data(), manifest.size()));
  put_u64(b + hStagingMax, m.staging_bytes_max);
  put_u32(b + hFingerprintLen, static_cast<std::uint32_t>(m.matrix_fingerprint.size()));
  std::memcpy(b + hFingerprint, m.matrix_fingerprint.data(), m.matrix_fingerprint.size());
  put_u32(b + hIndexEntries, entries);
  put_u64(b + hPlanHash, m.plan_hash);
  put_u64(b + hChecksum, plan_binary_checksum(b, hChecksum));
}

}  // namespace

std::uint64_t plan_binary_checksum(const void* data, std::size_t bytes, std::uint64_t seed) {
  return XXH3_64bits_withSeed(data, bytes, seed);
}

bool is_plan_binary(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  char b[sizeof kMagic];
  const bool ok = ::pread(fd, b, sizeof b, 0) == static_cast<ssize_t>(sizeof b) &&
                  std::memcmp(b, kMagic, sizeof b) == 0;
  ::close(fd);
  return ok;
}

void check_plan_output(const std::filesystem::path& out) {
  if (out.extension() == ".cfp") refuse_unless_plan_binary(out);
  else check_plan_dir_output(out);
}

// The writer's state: the temporary file, the bytes not yet handed to the kernel, the index.
struct PlanBinaryWriter::Impl {
  std::string name;                     // the file, for messages
  std::optional<Directory> parent;      // the file's directory, open
  std::optional<TempSibling> tmp;       // removed unless finish() renames it over the file
  Rank ranks = 0;
  Phase phases = 0;
  std::string fingerprint;
  Rank next = 0;                        // add() takes ranks from here on
  std::uint64_t offset = 0;             // file offset of the next slice
  ByteBuffer out;                       // the file's bytes from `offset - out.size()` on
  std::vector<std::uint8_t> index;      // 64 bytes per entry
  bool finished = false;

  // Hands the buffered bytes to the kernel.
  void flush() {
    write_all(tmp->fd(), out.data(), out.size(), offset - out.size(), name);
    out.clear();
  }
};

PlanBinaryWriter::PlanBinaryWriter(const std::filesystem::path& file, Rank ranks, Phase phases, std::string fingerprint)
    : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  commfit_assert(ranks > 0, "PlanBinaryWriter", "a plan has at least one rank");
  commfit_assert(fingerprint.size() <= kFingerprintField, "PlanBinaryWriter", "fingerprint too long");
  w.name = file.string();
  w.ranks = ranks;
  w.phases = phases;
  w.fingerprint = std::move(fingerprint);
  refuse_unless_plan_binary(file);
  w.parent.emplace(Directory::parent_of(file));
  w.tmp.emplace(*w.parent, file.filename().string(), TempSibling::Kind::file, 0644);
  // The header's place: it is written last, once the index and the manifest are placed.
  std::uint8_t* p = w.out.tail(kPlanBinaryHeaderBytes);
  std::memset(p, 0, kPlanBinaryHeaderBytes);
  w.out.commit(p + kPlanBinaryHeaderBytes);
  w.offset = kPlanBinaryHeaderBytes;
}

PlanBinaryWriter::~PlanBinaryWriter() = default;

void PlanBinaryWriter::add(const RankSchedule& rs) {
  Impl& w = *impl_;
  commfit_assert(!w.finished && rs.rank >= w.next && rs.rank < w.ranks, "PlanBinaryWriter",
                 "rank schedule " + std::to_string(rs.rank) + " added out of order (ranks in increasing order, each once, below " +
                     std::to_string(w.ranks) + ")");
  commfit_assert(rs.ranks == w.ranks && rs.phases == w.phases && rs.matrix_fingerprint == w.fingerprint, "PlanBinaryWriter",
                 "rank schedule " + std::to_string(rs.rank) + " does not belong to the plan");
  w.next = rs.rank + 1;
  if (is_idle(rs)) return;   // no entry: the readers give the idle schedule back

  const std::size_t start = w.out.size();
  encode_slice(rs, w.out);
  const std::uint64_t bytes = w.out.size() - start;
  w.index.resize(w.index.size() + kPlanBinaryIndexEntryBytes);
  std::uint8_t* e = w.index.data() + w.index.size() - kPlanBinaryIndexEntryBytes;
  put_u64(e + eSliceOffset, w.offset);
  put_u64(e + eSliceBytes, bytes);
  put_u64(e + eSteps, rs.steps.size());
  put_u32(e + eSends, static_cast<std::uint32_t>(rs.sends.size()));
  put_u32(e + eRecvs, static_cast<std::uint32_t>(rs.recvs.size()));
  put_u64(e + eStaging, rs.staging_bytes);
  put_u32(e + eRank, static_cast<std::uint32_t>(rs.rank));
  put_u32(e + ePhases, rs.phases);
  put_u32(e + eWindow, rs.max_outstanding | (rs.send_order.empty() ? 0 : kPlanBinaryListedOrder));
  put_u32(e + eEntryCheck, entry_check(e));
  put_u64(e + eChecksum, slice_checksum(e, w.out.data() + start, bytes));
  w.offset += bytes;
  if (w.out.size() >= kWriteBufferBytes) w.flush();
}

void PlanBinaryWriter::finish(const Manifest& m) {
  Impl& w = *impl_;
  commfit_assert(!w.finished, "PlanBinaryWriter", "finish() called twice");
  commfit_assert(m.ranks == w.ranks && m.phases == w.phases && m.matrix_fingerprint == w.fingerprint, "PlanBinaryWriter",
                 "the manifest is not the plan's (ranks, phases or fingerprint differ)");
  const std::string manifest = manifest_json(m);
  const auto entries = static_cast<std::uint32_t>(w.index.size() / kPlanBinaryIndexEntryBytes);
  std::uint8_t header[kPlanBinaryHeaderBytes];
  encode_header(header, m, w.offset, entries, manifest);

  // Slices (the rest of them), index, manifest, then the header over its placeholder.
  w.flush();
  write_all(w.tmp->fd(), w.index.data(), w.index.size(), w.offset, w.name);
  write_all(w.tmp->fd(), manifest.data(), manifest.size(), w.offset + w.index.size(), w.name);
  write_all(w.tmp->fd(), header, sizeof header, 0, w.name);
  w.tmp->publish_file();
  w.finished = true;
}

void write_plan_binary(const Plan& plan, const std::filesystem::path& file) {
  const Manifest& m = plan.manifest;
  commfit_assert(m.ranks > 0 && plan.ranks.size() == static_cast<std::size_t>(m.ranks),
                 "write_plan_binary", "plan has no rank schedules or not one per rank");
  PlanBinaryWriter w(file, m.ranks, m.phases, m.matrix_fingerprint);
  for (const RankSchedule& rs : plan.ranks) w.add(rs);   // in rank order: add() checks that ranks[r].rank == r
  w.finish(m);
}

std::uint64_t read_plan_hash_binary(const std::filesystem::path& file) {
  InFile f(file);
  return read_header(f).plan_hash;
}

RankSchedule read_rank_schedule_binary(const std::filesystem::path& file, Rank rank) {
  InFile f(file);
  return read_rank(f, read_header(f), rank);
}

Manifest read_manifest_binary(const std::filesystem::path& file) {
  InFile f(file);
  return read_manifest(f, read_header(f));
}

Plan read_plan_binary(const std::filesystem::path& file, bool check_hash) {
  InFile f(file);
  const Header h = read_header(f);
  Plan plan;
  plan.manifest = read_manifest(f, h);   // before anything per rank is allocated: it caps the ranks
  std::vector<std::uint8_t> index(std::size_t{h.entries} * kPlanBinaryIndexEntryBytes);   // inside the file: read_header
  f.read(index.data(), index.size(), h.index_offset, "index");
  plan.ranks.reserve(h.ranks);
  SliceStream slices(f, kPlanBinaryHeaderBytes);
  std::uint64_t at = kPlanBinaryHeaderBytes;   // where the next slice must start: they lie end to end
  for (std::uint32_t k = 0; k < h.entries; ++k) {
    const std::uint8_t* e = index.data() + std::size_t{k} * kPlanBinaryIndexEntryBytes;
    const Rank r = check_entry(f, h, k, e);
    if (r < static_cast<Rank>(plan.ranks.size()))
      throw InputError(f.name(), entry_place(k), "holds rank " + std::to_string(r) + ", not after the previous entry's (the index is in rank order)");
    const SliceRange s = slice_range(f, h, k, e);
    if (s.offset != at)
      throw InputError(f.name(), entry_place(k), "slice at byte " + std::to_string(s.offset) + ", not at byte " + std::to_string(at) +
                                                     " where the previous one ends (slices lie end to end, in rank order)");
    while (static_cast<Rank>(plan.ranks.size()) < r) plan.ranks.push_back(idle_rank(h, static_cast<Rank>(plan.ranks.size())));
    const std::string place = "rank " + std::to_string(r) + " slice";
    plan.ranks.push_back(decode_slice(f, h, k, e, r, slices.next(s.bytes, h.index_offset, place)));
    check_rank_of_manifest(plan.manifest, plan.ranks[r], r, f.name() + ": " + place);
    at += s.bytes;
  }
  if (at != h.index_offset)
    throw InputError(f.name(), "header", "the slices end at byte " + std::to_string(at) + " but the index starts at byte " + std::to_string(h.index_offset));
  while (plan.ranks.size() < h.ranks) plan.ranks.push_back(idle_rank(h, static_cast<Rank>(plan.ranks.size())));
  if (h.plan_hash != plan.manifest.plan_hash)
    throw InputError(f.name(), "header", "plan hash " + plan_hash_text(h.plan_hash) + " differs from the manifest's " + plan_hash_text(plan.manifest.plan_hash));
  if (check_hash) check_plan_hash(plan, f.name(), "manifest");
  return plan;
}

void convert_plan_dir_to_binary(const std::filesystem::path& dir, const std::filesystem::path& file) {
  write_plan_binary(read_plan_dir(dir), file);   // read_plan_dir checks every file against the manifest
}

void convert_plan_binary_to_dir(const std::filesystem::path& file, const std::filesystem::path& dir) {
  write_plan_dir(read_plan_binary(file), dir);
}

}  // namespace commfit
