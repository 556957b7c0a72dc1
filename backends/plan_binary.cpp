#include "backends/plan_binary.h"

#include "backends/atomic_output.h"
#include "backends/interrupt.h"
#include "backends/plan_dir.h"
#include "ir/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace commfit {
namespace {

constexpr char kMagic[8] = {'C', 'F', 'I', 'T', 'P', 'L', 'A', 'N'};
constexpr std::size_t kFingerprintField = 152;   // header bytes 84..235 (version 1 had 156, up to 239)

// Header field offsets.
enum : std::size_t {
  hVersion = 8, hHeaderBytes = 12, hRanks = 16, hPhases = 20, hEntryBytes = 24, hStepBytes = 28,
  hFileBytes = 32, hIndexOffset = 40, hManifestOffset = 48, hManifestBytes = 56,
  hManifestChecksum = 64, hStagingMax = 72, hFingerprintLen = 80, hFingerprint = 84, hIndexEntries = 236,
  hPlanHash = 240, hChecksum = 248,
};
// Index entry field offsets.
enum : std::size_t {
  eSliceOffset = 0, eSliceBytes = 8, eSteps = 16, eSends = 24, eRecvs = 28, eStaging = 32,
  eRank = 40, ePhases = 44, eWindow = 48, eEntryCheck = 52, eChecksum = 56,
};

// The low 32 bits of the checksum of an entry's first 52 bytes, stored at eEntryCheck: a reader
// looking for its rank trusts every entry it visits on the way, not only the one it stops at.
std::uint32_t entry_check(const std::uint8_t* e) {
  return static_cast<std::uint32_t>(plan_binary_checksum(e, eEntryCheck));
}

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

// An open file; reads are exact or an InputError naming the file.
class InFile {
 public:
  explicit InFile(const std::filesystem::path& path) : name_(path.string()) {
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
};

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
  if (get_u32(b + hVersion) != kPlanBinaryVersion)
    throw InputError(name, "header", "unsupported version " + std::to_string(get_u32(b + hVersion)) +
                                         " (this build reads version " +
                                         std::to_string(kPlanBinaryVersion) + ")");
  if (plan_binary_checksum(b, hChecksum) != get_u64(b + hChecksum))
    throw InputError(name, "header", "checksum mismatch (file corrupted)");
  if (get_u32(b + hHeaderBytes) != kPlanBinaryHeaderBytes ||
      get_u32(b + hEntryBytes) != kPlanBinaryIndexEntryBytes ||
      get_u32(b + hStepBytes) != kPlanBinaryStepBytes)
    throw InputError(name, "header", "unexpected header, index entry or step size");
  Header h;
  h.ranks = get_u32(b + hRanks);
  h.phases = get_u32(b + hPhases);
  h.file_bytes = get_u64(b + hFileBytes);
  h.index_offset = get_u64(b + hIndexOffset);
  h.manifest_offset = get_u64(b + hManifestOffset);
  h.manifest_bytes = get_u64(b + hManifestBytes);
  h.manifest_checksum = get_u64(b + hManifestChecksum);
  h.staging_max = get_u64(b + hStagingMax);
  const std::uint32_t fp_len = get_u32(b + hFingerprintLen);
  if (h.file_bytes != f.size())
    throw InputError(name, "header", "the header says the file has " + std::to_string(h.file_bytes) +
                                         " bytes but it has " + std::to_string(f.size()) +
                                         " (truncated or appended to)");
  if (h.ranks == 0 || h.ranks > static_cast<std::uint32_t>(INT32_MAX))
    throw InputError(name, "header", "rank count " + std::to_string(h.ranks) + " out of range");
  if (h.phases > kMaxPhases)
    throw InputError(name, "header", "phase count " + std::to_string(h.phases) + " is over the limit of " + std::to_string(kMaxPhases));
  if (fp_len > kFingerprintField)
    throw InputError(name, "header", "fingerprint length " + std::to_string(fp_len) + " too long");
  h.fingerprint.assign(reinterpret_cast<const char*>(b + hFingerprint), fp_len);
  h.plan_hash = get_u64(b + hPlanHash);
  h.entries = get_u32(b + hIndexEntries);
  if (h.entries > h.ranks)
    throw InputError(name, "header", std::to_string(h.entries) + " index entries for " + std::to_string(h.ranks) + " ranks");
  const std::uint64_t index_end = h.index_offset + std::uint64_t{h.entries} * kPlanBinaryIndexEntryBytes;
  if (h.index_offset != kPlanBinaryHeaderBytes || index_end > h.file_bytes)
    throw InputError(name, "header", "index of " + std::to_string(h.entries) +
                                         " entries does not fit in the file");
  if (h.manifest_offset < index_end || h.manifest_bytes > h.file_bytes ||
      h.manifest_offset > h.file_bytes - h.manifest_bytes)
    throw InputError(name, "header", "manifest range does not fit in the file");
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

std::uint64_t index_end(const Header& h) {
  return h.index_offset + std::uint64_t{h.entries} * kPlanBinaryIndexEntryBytes;
}

// Reads index entry `k` and checks what it says alone; returns the rank it holds.
Rank read_entry(const InFile& f, const Header& h, std::uint32_t k, std::uint8_t (&e)[kPlanBinaryIndexEntryBytes]) {
  const std::string place = "index entry " + std::to_string(k);
  f.read(e, sizeof e, h.index_offset + std::uint64_t(k) * kPlanBinaryIndexEntryBytes, place);
  if (entry_check(e) != get_u32(e + eEntryCheck)) throw InputError(f.name(), place, "checksum mismatch (file corrupted)");
  const std::uint32_t rank = get_u32(e + eRank);
  if (rank >= h.ranks)
    throw InputError(f.name(), place, "holds rank " + std::to_string(rank) + " of a plan for " + std::to_string(h.ranks) + " ranks");
  return static_cast<Rank>(rank);
}

// Checked, decoded form of the slice of index entry `k` (already read into `e`, holding `rank`).
RankSchedule read_slice(const InFile& f, const Header& h, std::uint32_t k, const std::uint8_t (&e)[kPlanBinaryIndexEntryBytes], Rank rank) {
  const std::string& name = f.name();
  const std::string entry_place = "index entry " + std::to_string(k);
  const std::string slice_place = "rank " + std::to_string(rank) + " slice";
  const std::uint64_t off = get_u64(e + eSliceOffset), bytes = get_u64(e + eSliceBytes);
  const std::uint64_t nsteps = get_u64(e + eSteps);
  const std::uint64_t nsends = get_u32(e + eSends), nrecvs = get_u32(e + eRecvs);
  if (off < index_end(h) || bytes > h.file_bytes || off > h.file_bytes - bytes)
    throw InputError(name, entry_place, "slice range does not fit in the file");
  if (nsteps > h.file_bytes / kPlanBinaryStepBytes ||
      bytes != (nsends + nrecvs) * kPlanBinaryPeerBytes + nsteps * kPlanBinaryStepBytes)
    throw InputError(name, entry_place, "slice size does not match its counts");
  if (get_u32(e + ePhases) != h.phases)   // the executor reads this slice alone: check it here
    throw InputError(name, entry_place, "phase count " + std::to_string(get_u32(e + ePhases)) + " differs from the header's " + std::to_string(h.phases));

  std::vector<std::uint8_t> s(bytes);
  f.read(s.data(), bytes, off, slice_place);
  std::uint64_t sum = plan_binary_checksum(e, eChecksum);
  sum = plan_binary_checksum(s.data(), s.size(), sum);
  if (sum != get_u64(e + eChecksum))
    throw InputError(name, slice_place, "checksum mismatch (file corrupted)");

  RankSchedule r = idle_rank(h, rank);
  r.staging_bytes = get_u64(e + eStaging);
  r.max_outstanding = get_u32(e + eWindow);   // checked with the rest (check_rank_schedule)
  const std::uint8_t* p = s.data();
  auto check_rank = [&](std::uint32_t v, const std::string& place, const char* what) {
    if (v >= h.ranks)
      throw InputError(name, place, std::string(what) + " " + std::to_string(v) + " out of range");
    return static_cast<Rank>(v);
  };
  auto peers = [&](std::uint64_t n, std::vector<PeerBytes>& out, const char* list) {
    out.resize(n);
    for (std::uint64_t j = 0; j < n; ++j, p += kPlanBinaryPeerBytes) {
      const std::string place = slice_place + " " + list + " " + std::to_string(j);
      out[j].peer = check_rank(get_u32(p), place, "peer");
      out[j].bytes = get_u64(p + 8);
    }
  };
  peers(nsends, r.sends, "sends");
  peers(nrecvs, r.recvs, "recvs");
  r.steps.resize(nsteps);
  for (std::uint64_t j = 0; j < nsteps; ++j, p += kPlanBinaryStepBytes) {
    const std::string place = "rank " + std::to_string(rank) + " step " + std::to_string(j);
    Step& st = r.steps[j];
    st.phase = get_u32(p);
    if (p[4] > 2 || p[5] > 2) throw InputError(name, place, "unknown op or buffer code");
    st.op = static_cast<Op>(p[4]);
    st.buffer = static_cast<Buffer>(p[5]);
    st.peer = check_rank(get_u32(p + 8), place, "peer");
    st.src = check_rank(get_u32(p + 12), place, "src");
    st.dst = check_rank(get_u32(p + 16), place, "dst");
    st.offset = get_u64(p + 24);
    st.bytes = get_u64(p + 32);
    st.stage_offset = get_u64(p + 40);
  }
  // What the fields say together (ir/plan.h), as the plan directory's reader checks it.
  if (const auto problems = check_rank_schedule(r, kFormatOnly); !problems.empty())
    throw InputError(name, slice_place + " " + problems[0].place, problems[0].what);
  return r;
}

// Rank `rank`'s schedule alone: a binary search of the index (O(log entries) small reads, each
// entry checked), then its slice; a rank without an entry is idle.
RankSchedule read_rank(const InFile& f, const Header& h, Rank rank) {
  if (rank < 0 || static_cast<std::uint32_t>(rank) >= h.ranks)
    throw InputError(f.name(), "header", "the plan is for " + std::to_string(h.ranks) +
                                             " ranks, it has no rank " + std::to_string(rank));
  std::uint32_t lo = 0, hi = h.entries;
  std::uint8_t e[kPlanBinaryIndexEntryBytes];
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    const Rank at = read_entry(f, h, mid, e);
    if (at == rank) return read_slice(f, h, mid, e, rank);
    if (at < rank) lo = mid + 1;
    else hi = mid;
  }
  return idle_rank(h, rank);
}

// A schedule the index leaves out (idle_rank gives it back exactly).
bool is_idle(const RankSchedule& r) {
  return r.sends.empty() && r.recvs.empty() && r.steps.empty() && r.staging_bytes == 0 && r.max_outstanding == 0;
}

std::vector<std::uint8_t> encode_slice(const RankSchedule& r) {
  std::vector<std::uint8_t> s((r.sends.size() + r.recvs.size()) * kPlanBinaryPeerBytes +
                              r.steps.size() * kPlanBinaryStepBytes);
  std::uint8_t* p = s.data();
  for (const auto* list : {&r.sends, &r.recvs})
    for (const PeerBytes& x : *list) {
      put_u32(p, static_cast<std::uint32_t>(x.peer));
      put_u64(p + 8, x.bytes);
      p += kPlanBinaryPeerBytes;
    }
  for (const Step& st : r.steps) {
    put_u32(p, st.phase);
    p[4] = static_cast<std::uint8_t>(st.op);
    p[5] = static_cast<std::uint8_t>(st.buffer);
    put_u32(p + 8, static_cast<std::uint32_t>(st.peer));
    put_u32(p + 12, static_cast<std::uint32_t>(st.src));
    put_u32(p + 16, static_cast<std::uint32_t>(st.dst));
    put_u64(p + 24, st.offset);
    put_u64(p + 32, st.bytes);
    put_u64(p + 40, st.stage_offset);
    p += kPlanBinaryStepBytes;
  }
  return s;
}

void write_all(int fd, const void* data, std::size_t bytes, std::uint64_t offset, const std::string& name) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw UsageError("cannot write " + name + ": " + std::strerror(errno));
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

// The fingerprint, rank count and phase count every rank file must share with the manifest.
void check_rank_matches_manifest(const Plan& plan, Rank r, const std::string& file) {
  const RankSchedule& rs = plan.ranks[r];
  if (rs.rank != r) throw InputError(file, "/rank", "is " + std::to_string(rs.rank));
  if (rs.ranks != plan.manifest.ranks)
    throw InputError(file, "/ranks", "differs from the manifest's " + std::to_string(plan.manifest.ranks));
  if (rs.phases != plan.manifest.phases)
    throw InputError(file, "/phases", "differs from the manifest's " + std::to_string(plan.manifest.phases));
  if (rs.matrix_fingerprint != plan.manifest.matrix_fingerprint)
    throw InputError(file, "/matrix_fingerprint", "differs from the manifest's");
}

}  // namespace

std::uint64_t plan_binary_checksum(const void* data, std::size_t bytes, std::uint64_t seed) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint64_t h = seed;
  for (std::size_t k = 0; k < bytes; ++k) {
    h ^= p[k];
    h *= 0x100000001b3ULL;
  }
  return h;
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

namespace {

void refuse_unless_plan_binary(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  const std::string name = file.string();
  if (!file.has_filename() || file.filename() == "." || file.filename() == "..")
    throw UsageError("cannot write a binary plan to \"" + name + "\": give the file a name");
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) {
    const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    if (!fs::is_directory(parent, ec))
      throw UsageError("cannot write " + name + ": " + parent.string() + (fs::exists(parent, ec) ? " is not a directory" : " does not exist"));
    return;
  }
  if (fs::is_symlink(st))
    throw UsageError(name + " is a symbolic link: not replacing it (give the file it points to, or remove the link)");
  if (fs::is_directory(st)) throw UsageError(name + " is a directory: the binary form of a plan is one file");
  if (!is_plan_binary(file)) throw UsageError(name + " exists and is not a commfit binary plan: not replacing it");
}

}  // namespace

void check_plan_output(const std::filesystem::path& out) {
  if (out.extension() == ".cfp") refuse_unless_plan_binary(out);
  else check_plan_dir_output(out);
}

void write_plan_binary(const Plan& plan, const std::filesystem::path& file) {
  const Manifest& m = plan.manifest;
  commfit_assert(m.ranks > 0 && plan.ranks.size() == static_cast<std::size_t>(m.ranks),
                 "write_plan_binary", "plan has no rank schedules or not one per rank");
  commfit_assert(m.matrix_fingerprint.size() <= kFingerprintField, "write_plan_binary",
                 "fingerprint too long");
  const std::string manifest = manifest_json(m);
  std::uint32_t entries = 0;
  for (const RankSchedule& rs : plan.ranks) entries += is_idle(rs) ? 0 : 1;
  const std::uint64_t index_end = kPlanBinaryHeaderBytes + std::uint64_t(entries) * kPlanBinaryIndexEntryBytes;
  std::uint64_t offset = index_end + manifest.size();

  const std::string name = file.string();
  std::error_code ec;
  refuse_unless_plan_binary(file);
  clean_stale_temps(file);
  const std::filesystem::path tmp = temp_sibling(file);
  const TempPathGuard guard(tmp.string());   // from here an interrupt removes the partial file
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("cannot create " + tmp.string() + ": " + std::strerror(errno));
  try {
    std::vector<std::uint8_t> index(std::size_t(entries) * kPlanBinaryIndexEntryBytes, 0);
    std::uint8_t* e = index.data();
    for (Rank r = 0; r < m.ranks; ++r) {
      const RankSchedule& rs = plan.ranks[r];
      commfit_assert(rs.rank == r && rs.matrix_fingerprint == m.matrix_fingerprint && rs.phases == m.phases,
                     "write_plan_binary", "rank schedule " + std::to_string(r) + " does not belong to the plan");
      if (is_idle(rs)) continue;
      std::vector<std::uint8_t> slice = encode_slice(rs);
      put_u64(e + eSliceOffset, offset);
      put_u64(e + eSliceBytes, slice.size());
      put_u64(e + eSteps, rs.steps.size());
      put_u32(e + eSends, static_cast<std::uint32_t>(rs.sends.size()));
      put_u32(e + eRecvs, static_cast<std::uint32_t>(rs.recvs.size()));
      put_u64(e + eStaging, rs.staging_bytes);
      put_u32(e + eWindow, rs.max_outstanding);
      put_u32(e + eRank, static_cast<std::uint32_t>(r));
      put_u32(e + ePhases, rs.phases);
      put_u32(e + eEntryCheck, entry_check(e));
      std::uint64_t sum = plan_binary_checksum(e, eChecksum);
      put_u64(e + eChecksum, plan_binary_checksum(slice.data(), slice.size(), sum));
      write_all(fd, slice.data(), slice.size(), offset, name);
      offset += slice.size();
      e += kPlanBinaryIndexEntryBytes;
    }
    write_all(fd, index.data(), index.size(), kPlanBinaryHeaderBytes, name);
    write_all(fd, manifest.data(), manifest.size(), index_end, name);

    std::uint8_t b[kPlanBinaryHeaderBytes] = {};
    std::memcpy(b, kMagic, sizeof kMagic);
    put_u32(b + hVersion, kPlanBinaryVersion);
    put_u32(b + hHeaderBytes, kPlanBinaryHeaderBytes);
    put_u32(b + hRanks, static_cast<std::uint32_t>(m.ranks));
    put_u32(b + hPhases, m.phases);
    put_u32(b + hEntryBytes, kPlanBinaryIndexEntryBytes);
    put_u32(b + hStepBytes, kPlanBinaryStepBytes);
    put_u64(b + hFileBytes, offset);
    put_u64(b + hIndexOffset, kPlanBinaryHeaderBytes);
    put_u64(b + hManifestOffset, index_end);
    put_u64(b + hManifestBytes, manifest.size());
    put_u64(b + hManifestChecksum, plan_binary_checksum(manifest.data(), manifest.size()));
    put_u64(b + hStagingMax, m.staging_bytes_max);
    put_u32(b + hFingerprintLen, static_cast<std::uint32_t>(m.matrix_fingerprint.size()));
    std::memcpy(b + hFingerprint, m.matrix_fingerprint.data(), m.matrix_fingerprint.size());
    put_u32(b + hIndexEntries, entries);
    put_u64(b + hPlanHash, m.plan_hash);
    put_u64(b + hChecksum, plan_binary_checksum(b, hChecksum));
    write_all(fd, b, sizeof b, 0, name);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
      fd = -1;
      throw UsageError("cannot write " + name + ": " + std::strerror(errno));
    }
    fd = -1;
    std::filesystem::rename(tmp, file, ec);
    if (ec) throw UsageError("cannot rename " + tmp.string() + " to " + name + ": " + ec.message());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    std::filesystem::remove(tmp, ec);
    throw;
  }
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
  const Header h = read_header(f);
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

Plan read_plan_binary(const std::filesystem::path& file, bool check_hash) {
  Plan plan;
  plan.manifest = read_manifest_binary(file);
  InFile f(file);
  const Header h = read_header(f);
  plan.ranks.reserve(h.ranks);
  std::uint8_t e[kPlanBinaryIndexEntryBytes];
  for (std::uint32_t k = 0; k < h.entries; ++k) {
    const Rank r = read_entry(f, h, k, e);
    if (r < static_cast<Rank>(plan.ranks.size()))
      throw InputError(f.name(), "index entry " + std::to_string(k), "holds rank " + std::to_string(r) + ", not after the previous entry's (the index is in rank order)");
    while (static_cast<Rank>(plan.ranks.size()) < r) plan.ranks.push_back(idle_rank(h, static_cast<Rank>(plan.ranks.size())));
    plan.ranks.push_back(read_slice(f, h, k, e, r));
    check_rank_matches_manifest(plan, r, f.name() + ": rank " + std::to_string(r) + " slice");
  }
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
