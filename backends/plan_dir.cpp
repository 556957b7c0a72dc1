#include "backends/plan_dir.h"

#include "backends/atomic_output.h"
#include "ir/error.h"
#include "ir/json_fields.h"
#include "ir/json_input.h"
#include "ir/matrix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace commfit {
namespace {

// Ordered: a manifest's options keep the writer's key order (a plan read back is written back byte
// for byte), and an unknown field is named in file order.
using OrderedJson = nlohmann::ordered_json;

// Strict reading of one JSON object: every field is named once, unknown fields are errors.
using Fields = JsonFields;

// Closes a descriptor at the end of its scope (none when negative).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

const char* fingerprint_problem(const std::string& fp) {
  if (fp.size() != 71 || fp.rfind("sha256:", 0) != 0) return "expected \"sha256:\" and 64 hex digits";
  for (std::size_t k = 7; k < fp.size(); ++k)
    if (!std::isxdigit(static_cast<unsigned char>(fp[k])) || std::isupper(static_cast<unsigned char>(fp[k])))
      return "expected \"sha256:\" and 64 lower-case hex digits";
  return nullptr;
}

std::vector<PeerBytes> peer_list(const OrderedJson& v, const std::string& file, const std::string& place, Rank ranks, const Fields& f) {
  if (!v.is_array()) throw InputError(file, place, "expected an array of [peer, bytes]");
  std::vector<PeerBytes> out;
  out.reserve(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::string at = place + "/" + std::to_string(k);
    if (!v[k].is_array() || v[k].size() != 2) throw InputError(file, at, "expected [peer, bytes]");
    const auto peer = static_cast<Rank>(f.as_uint(v[k][0], at + "/0", static_cast<std::uint64_t>(ranks) - 1));
    out.push_back({peer, f.as_uint(v[k][1], at + "/1", kMaxMessageBytes)});
  }
  return out;
}

// A new file `name` in `dir` (a plan directory being written), holding `text`.
void write_file(const Directory& dir, const std::string& name, const std::string& text) {
  const int fd = create_file_at(dir, name, 0644);
  if (fd < 0) throw UsageError("cannot create " + (dir.path() / name).string() + ": " + std::strerror(errno));
  int err = write_all_at(fd, text.data(), text.size(), 0);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) throw UsageError("cannot write " + (dir.path() / name).string() + ": " + std::strerror(err));
}

}  // namespace

std::string rank_file_name(Rank rank, Rank ranks) {
  int digits = 5;
  for (std::int64_t cap = 99999; ranks - 1 > cap; cap = cap * 10 + 9) ++digits;
  std::string num = std::to_string(rank);
  if (static_cast<int>(num.size()) < digits) num.insert(0, static_cast<std::size_t>(digits) - num.size(), '0');
  return "rank-" + num + ".json";
}

std::string manifest_json(const Manifest& m) {
  nlohmann::ordered_json j;
  j["format"] = "commfit-plan";
  j["version"] = 1;
  j["ranks"] = m.ranks;
  j["phases"] = m.phases;
  j["strategy"] = m.strategy;
  j["options"] = contract_json(m.contract, m.options);
  j["matrix_fingerprint"] = m.matrix_fingerprint;
  j["cost"] = {{"tau_s", m.cost.tau_s}, {"bandwidth_Bps", m.cost.bandwidth_Bps},
               {"estimate_s", m.cost.estimate_s}, {"lower_bound_s", m.cost.lower_bound_s}};
  j["staging_bytes_max"] = m.staging_bytes_max;
  j["planner"] = m.planner;
  if (m.plan_hash != 0) j["plan_hash"] = plan_hash_text(m.plan_hash);
  return j.dump(1) + "\n";
}

std::string rank_schedule_json(const RankSchedule& r) {
  std::string out;
  out.reserve(256 + r.steps.size() * 128);
  out += "{\"format\": \"commfit-rank-schedule\", \"version\": 1, \"rank\": " + std::to_string(r.rank) +
         ", \"ranks\": " + std::to_string(r.ranks) + ", \"phases\": " + std::to_string(r.phases) + ",\n";
  out += " \"matrix_fingerprint\": \"" + r.matrix_fingerprint + "\", \"staging_bytes\": " + std::to_string(r.staging_bytes) + ",\n";
  if (r.max_outstanding > 0) out += " \"max_outstanding\": " + std::to_string(r.max_outstanding) + ",\n";
  auto list = [&](const char* name, const std::vector<PeerBytes>& v) {
    out += std::string(" \"") + name + "\": [";
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k) out += ", ";
      out += "[" + std::to_string(v[k].peer) + ", " + std::to_string(v[k].bytes) + "]";
    }
    out += "]";
  };
  list("sends", r.sends);
  out += ",";
  list("recvs", r.recvs);
  if (!r.send_order.empty()) {
    out += ",\n \"send_order\": [";
    for (std::size_t k = 0; k < r.send_order.size(); ++k) out += (k ? ", " : "") + std::to_string(r.send_order[k]);
    out += "]";
  }
  out += ",\n \"steps\": [";
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    const Step& s = r.steps[k];
    out += k ? ",\n  {" : "\n  {";
    out += "\"phase\": " + std::to_string(s.phase) + ", \"op\": \"" + to_string(s.op) + "\", \"peer\": " + std::to_string(s.peer) +
           ", \"src\": " + std::to_string(s.src) + ", \"dst\": " + std::to_string(s.dst) + ", \"offset\": " + std::to_string(s.offset) +
           ", \"bytes\": " + std::to_string(s.bytes) + ", \"buffer\": \"" + to_string(s.buffer) + "\"";
    if (s.buffer == Buffer::stage) out += ", \"stage_offset\": " + std::to_string(s.stage_offset);
    out += "}";
  }
  out += r.steps.empty() ? "]}\n" : "\n ]}\n";
  return out;
}

namespace {

Manifest manifest_from(const OrderedJson& j, const std::string& file) {
  Fields f(j, file, "");
  Manifest m;
  f.expect("format", "commfit-plan");
  f.version();
  m.ranks = static_cast<Rank>(f.uint("ranks", kMaxRanks));
  if (m.ranks == 0) throw InputError(file, "/ranks", "rank count must be at least 1");
  m.phases = static_cast<Phase>(f.uint("phases", kMaxPhases));
  m.strategy = f.string("strategy");
  m.contract = read_contract(f.need("options"), file, m.options);
  m.matrix_fingerprint = f.string("matrix_fingerprint");
  if (const char* bad = fingerprint_problem(m.matrix_fingerprint)) throw InputError(file, "/matrix_fingerprint", bad);
  {
    Fields c(f.need("cost"), file, "/cost");
    m.cost.tau_s = c.number("tau_s");
    m.cost.bandwidth_Bps = c.number("bandwidth_Bps");
    m.cost.estimate_s = c.number("estimate_s");
    m.cost.lower_bound_s = c.number("lower_bound_s");
    if (!(m.cost.bandwidth_Bps > 0)) throw InputError(file, "/cost/bandwidth_Bps", "expected a positive number");
    for (auto [key, v] : {std::pair{"tau_s", m.cost.tau_s}, {"estimate_s", m.cost.estimate_s}, {"lower_bound_s", m.cost.lower_bound_s}})
      if (v < 0) throw InputError(file, std::string("/cost/") + key, "expected a non-negative number");
    c.no_others();
  }
  m.staging_bytes_max = f.uint("staging_bytes_max");
  m.planner = f.string("planner");
  if (const OrderedJson* h = f.maybe("plan_hash")) {
    m.plan_hash = h->is_string() ? parse_plan_hash(h->get<std::string>()) : 0;
    if (m.plan_hash == 0) throw InputError(file, "/plan_hash", "expected \"h64:\" and 16 lower-case hex digits, got " + h->dump());
  }
  f.no_others();
  return m;
}

RankSchedule rank_schedule_from(const OrderedJson& j, const std::string& file) {
  Fields f(j, file, "");
  RankSchedule r;
  f.expect("format", "commfit-rank-schedule");
  f.version();
  r.ranks = static_cast<Rank>(f.uint("ranks", kMaxRanks));
  if (r.ranks == 0) throw InputError(file, "/ranks", "rank count must be at least 1");
  r.rank = static_cast<Rank>(f.uint("rank", static_cast<std::uint64_t>(r.ranks) - 1));
  r.phases = static_cast<Phase>(f.uint("phases", kMaxPhases));
  r.matrix_fingerprint = f.string("matrix_fingerprint");
  if (const char* bad = fingerprint_problem(r.matrix_fingerprint)) throw InputError(file, "/matrix_fingerprint", bad);
  r.staging_bytes = f.uint("staging_bytes");
  if (const OrderedJson* w = f.maybe("max_outstanding"))
    r.max_outstanding = static_cast<std::uint32_t>(f.as_uint(*w, "/max_outstanding", kMaxWindow));
  r.sends = peer_list(f.need("sends"), file, "/sends", r.ranks, f);
  r.recvs = peer_list(f.need("recvs"), file, "/recvs", r.ranks, f);
  if (const OrderedJson* order = f.maybe("send_order")) {
    if (!order->is_array() || order->empty()) throw InputError(file, "/send_order", "expected a non-empty array of ranks");
    r.send_order.reserve(order->size());
    for (std::size_t k = 0; k < order->size(); ++k)
      r.send_order.push_back(static_cast<Rank>(f.as_uint((*order)[k], "/send_order/" + std::to_string(k), static_cast<std::uint64_t>(r.ranks) - 1)));
  }
  const OrderedJson& steps = f.need("steps");
  if (!steps.is_array()) throw InputError(file, "/steps", "expected an array");
  r.steps.reserve(steps.size());
  const std::uint64_t max_rank = static_cast<std::uint64_t>(r.ranks) - 1;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string place = "/steps/" + std::to_string(k);
    Fields s(steps[k], file, place);
    Step st;
    st.phase = static_cast<Phase>(s.uint("phase", 0xffffffffu));
    const std::string op = s.string("op");
    if (op == "send") st.op = Op::send;
    else if (op == "recv") st.op = Op::recv;
    else if (op == "copy") st.op = Op::copy;
    else throw InputError(file, place + "/op", "expected \"send\", \"recv\" or \"copy\", got \"" + op + "\"");
    st.peer = static_cast<Rank>(s.uint("peer", max_rank));
    st.src = static_cast<Rank>(s.uint("src", max_rank));
    st.dst = static_cast<Rank>(s.uint("dst", max_rank));
    st.offset = s.uint("offset", kMaxMessageBytes);
    st.bytes = s.uint("bytes", kMaxMessageBytes);
    const std::string buffer = s.string("buffer");
    if (buffer == "send") st.buffer = Buffer::send;
    else if (buffer == "recv") st.buffer = Buffer::recv;
    else if (buffer == "stage") st.buffer = Buffer::stage;
    else throw InputError(file, place + "/buffer", "expected \"send\", \"recv\" or \"stage\", got \"" + buffer + "\"");
    if (const OrderedJson* so = s.maybe("stage_offset")) {
      if (st.buffer != Buffer::stage) throw InputError(file, place + "/stage_offset", "only steps with buffer \"stage\" have a stage_offset");
      st.stage_offset = s.as_uint(*so, place + "/stage_offset", r.staging_bytes);
    } else if (st.buffer == Buffer::stage) {
      throw InputError(file, place, "missing required field \"stage_offset\" (buffer is \"stage\")");
    }
    s.no_others();
    r.steps.push_back(st);
  }
  f.no_others();
  // What the fields say together (ir/plan.h); the rule checks are the verifier's, so that
  // `commfit verify` can name the rule a readable plan breaks.
  if (const auto problems = check_rank_schedule(r, kFormatOnly); !problems.empty())
    throw InputError(file, problems[0].place, problems[0].what);
  return r;
}

}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& file) { return manifest_from(parse_strict_json(text, file), file); }

RankSchedule parse_rank_schedule(std::string_view text, const std::string& file) {
  return rank_schedule_from(parse_strict_json(text, file), file);
}

namespace {

// Reads and parses the open regular file `fd` of `size` bytes as it goes (ir/json_input.h),
// closing it: white space costs no memory.
OrderedJson read_json_fd(int fd, std::uint64_t size, const std::string& shown) {
  const FdCloser closer{fd};
  FileChunks in(fd_source(fd), shown, size);
  return parse_strict_json(in, shown);
}

OrderedJson read_json_file(const std::filesystem::path& path) {
  std::uint64_t size = 0;
  const int fd = open_regular_file(path.string(), kMaxInputBytes, size);
  return read_json_fd(fd, size, path.string());
}

}  // namespace

void check_plan_hash(const Plan& plan, const std::string& file, const std::string& place) {
  if (plan.manifest.plan_hash == 0) return;
  const std::uint64_t h = plan_hash(plan.ranks);
  if (h != plan.manifest.plan_hash)
    throw InputError(file, place, "the rank schedules hash to " + plan_hash_text(h) + ", not to the " +
                                      plan_hash_text(plan.manifest.plan_hash) + " the plan was written with: a rank file was edited, "
                                      "replaced or comes from another plan");
}

namespace {

Manifest read_manifest_once(const std::filesystem::path& dir) {
  const auto path = dir / "manifest.json";
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec)) {
    if (std::filesystem::file_size(dir, ec) == 0) throw InputError(dir.string(), "", "file is empty");
    throw InputError(dir.string(), "byte 0", "neither a plan directory nor a binary plan (no \"CFITPLAN\" magic)");
  }
  if (!std::filesystem::is_directory(dir, ec)) throw InputError(dir.string(), "", "not a plan directory");
  if (!std::filesystem::exists(path, ec)) throw InputError(dir.string(), "", "not a plan directory (no manifest.json)");
  return manifest_from(read_json_file(path), path.string());
}

}  // namespace

// How often a read starts again because the plan was replaced under it: each attempt follows a
// replacement seen, so only writers that replace it without pause use them all.
constexpr int kReadAttempts = 32;

// A plan directory being replaced where RENAME_EXCHANGE is missing is absent for a moment
// (backends/atomic_output.h): the read waits for the new one.
Manifest read_manifest(const std::filesystem::path& dir) {
  for (int attempt = 1;; ++attempt) {
    const NameState before = name_state(dir);
    try {
      return read_manifest_once(dir);
    } catch (const InputError&) {
      if (attempt == kReadAttempts || !replaced_since(dir, before)) throw;
    }
  }
}

RankSchedule read_rank_schedule(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw InputError(file.string(), "", "rank schedule is missing");
  return rank_schedule_from(read_json_file(file), file.string());
}

namespace {

// Reads the plan in the open directory `dir_fd` (named `dir` in messages).
Plan read_plan_at(const std::filesystem::path& dir, int dir_fd, bool check_hash) {
  auto read_at = [&](const std::string& name) {
    const std::string shown = (dir / name).string();
    std::uint64_t size = 0;
    int fd = -1;
    try {
      fd = open_regular_file_at(dir_fd, name, shown, kMaxInputBytes, size);
    } catch (const InputError& e) {
      if (name != "manifest.json" && e.problem().ends_with(std::strerror(ENOENT))) throw InputError(shown, "", "rank schedule is missing");
      throw;
    }
    return read_json_fd(fd, size, shown);
  };
  Plan plan;
  plan.manifest = manifest_from(read_at("manifest.json"), (dir / "manifest.json").string());
  plan.ranks.reserve(static_cast<std::size_t>(plan.manifest.ranks));
  for (Rank r = 0; r < plan.manifest.ranks; ++r) {
    const std::string name = rank_file_name(r, plan.manifest.ranks);
    const auto path = dir / name;
    RankSchedule rs = rank_schedule_from(read_at(name), path.string());
    check_rank_of_manifest(plan.manifest, rs, r, path.string());
    plan.ranks.push_back(std::move(rs));
  }
  if (check_hash) check_plan_hash(plan, (dir / "manifest.json").string(), "/plan_hash");
  return plan;
}

}  // namespace

// Every file is read relative to one open directory, so that a plan swapped in at `dir` while we
// read (backends/atomic_output.h) is never mixed with the old one. The writer removes the old
// directory after the swap, so a read can lose files under it: if `dir` then names another
// directory than the one read, or no longer exists while a replacement is under way, the read
// starts again on the new one.
Plan read_plan_dir(const std::filesystem::path& dir, bool check_hash) {
  read_manifest(dir);   // the messages for what is not a plan directory
  for (int attempt = 1;; ++attempt) {
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      const int err = errno;
      if (err == ENOENT && attempt < kReadAttempts && replaced_since(dir, NameState{})) continue;   // missing for a moment
      throw InputError(dir.string(), "", std::string("cannot open the plan directory: ") + std::strerror(err));
    }
    const FdCloser closer{dir_fd};
    try {
      return read_plan_at(dir, dir_fd, check_hash);
    } catch (const InputError&) {
      if (attempt == kReadAttempts || !replaced_since(dir, name_state(dir_fd))) throw;   // a real problem, or a plan replaced without pause
    }
  }
}

namespace {

bool is_rank_file_name(const std::string& name) {
  if (name.size() < 15 || name.rfind("rank-", 0) != 0 || !name.ends_with(".json")) return false;
  return name.find_first_not_of("0123456789", 5) == name.size() - 5;
}

}  // namespace

namespace {

void refuse_unless_plan_dir_once(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const std::string name = dir.string();
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw UsageError("cannot inspect " + name + ": " + ec.message());
  if (!fs::exists(st)) return;
  if (fs::is_symlink(st))
    throw UsageError(name + " is a symbolic link: not replacing it (give the directory it points to, or remove the link)");
  if (!fs::is_directory(st)) throw UsageError(name + " exists and is not a commfit plan directory: not replacing it");
  const std::string refuse = name + " is not a commfit plan directory";
  const std::string advice = ": not replacing it (remove it yourself or choose another -o)";
  bool manifest = false;
  std::string foreign;   // the first in name order, so that the message does not depend on the listing's
  std::size_t foreigners = 0;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw UsageError("cannot list " + name + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw UsageError("cannot list " + name + ": " + ec.message());
    const std::string entry = it->path().filename().string();
    const bool regular = it->symlink_status(ec).type() == fs::file_type::regular;
    if (regular && entry == "manifest.json") {
      manifest = true;
    } else if (!(regular && is_rank_file_name(entry))) {
      if (foreigners++ == 0 || entry < foreign) foreign = entry;
    }
  }
  if (ec) throw UsageError("cannot list " + name + ": " + ec.message());
  if (foreigners > 0)
    throw UsageError(refuse + " (it holds " + foreign +
                     (foreigners > 1 ? " and " + std::to_string(foreigners - 1) + " more that are not plan files" : "") + ")" + advice);
  if (!manifest) throw UsageError(refuse + " (no manifest.json)" + advice);
  std::string text;
  try {
    text = read_text_file(dir / "manifest.json", std::size_t{64} << 20);
  } catch (const InputError& e) {
    throw UsageError(refuse + " (" + e.problem() + " in manifest.json)" + advice);
  }
  const OrderedJson j = OrderedJson::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("format") || j["format"] != "commfit-plan")
    throw UsageError(refuse + " (its manifest.json is not a commfit plan manifest)" + advice);
}

}  // namespace

// Another writer may swap a new plan in and remove the old directory while we list it: a refusal
// stands only if `dir` still names the directory that was inspected. A directory is held open while
// it is inspected and compared as the reader compares it (replaced_since): removed meanwhile, it
// counts as replaced, and held, its inode number cannot pass to the directory swapped in. What
// cannot be opened as a directory (a link, a file, nothing) is compared by lstat before and after.
void refuse_unless_plan_dir(const std::filesystem::path& dir) {
  for (int attempt = 1;; ++attempt) {
    struct stat before {};
    const bool had = ::lstat(dir.c_str(), &before) == 0;
    const FdCloser held{had && S_ISDIR(before.st_mode) ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1};
    try {
      refuse_unless_plan_dir_once(dir);
      return;
    } catch (const UsageError&) {
      bool same = false;
      if (held.fd >= 0) {
        const NameState inspected = name_state(held.fd);
        same = !inspected.unlinked && !replaced_since(dir, inspected);
      } else {
        struct stat after {};
        const bool has = ::lstat(dir.c_str(), &after) == 0;
        same = had == has && (!had || (before.st_ino == after.st_ino && before.st_dev == after.st_dev));
      }
      if (same || attempt == kReadAttempts) throw;
    }
  }
}

std::filesystem::path check_plan_dir_output(const std::filesystem::path& dir_in) {
  namespace fs = std::filesystem;
  const fs::path dir = dir_in.has_filename() || !dir_in.has_parent_path() ? dir_in : dir_in.parent_path();   // "x.plan/": x.plan
  check_output_target(dir, {"plan directory", true, [](const fs::path& path, bool) { refuse_unless_plan_dir(path); }});
  return dir;
}

class PlanDirWriter::Impl {
 public:
  Impl(const std::filesystem::path& dir_in, Rank ranks, unsigned threads)
      : dir_(check_plan_dir_output(dir_in)),   // checked again at the swap
        parent_(Directory::parent_of(dir_)),
        tmp_(parent_, dir_.filename().string(), TempSibling::Kind::directory, 0755),
        ranks_(ranks) {
    // Threads only pay for many ranks: a few dozen files are written faster by one.
    const Rank writers = std::clamp<Rank>(ranks / 64, 1, static_cast<Rank>(std::max(threads, 1u)));
    for (Rank k = 1; k < writers; ++k) workers_.emplace_back([this] { work(); });
  }

  ~Impl() {
    if (!published_) {   // abandoned: the schedules still queued are not written
      std::lock_guard lock(mutex_);
      queue_.clear();
    }
    stop();   // the temporary directory goes with tmp_ unless published
  }

  void add(RankSchedule&& rs) {
    if (workers_.empty()) return write(rs);
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return queue_.size() < kQueued || error_; });
    if (error_) std::rethrow_exception(error_);
    queue_.push_back(std::move(rs));
    ready_.notify_one();
  }

  void finish(const Manifest& m) {
    stop();
    if (error_) std::rethrow_exception(error_);
    write_file(tmp_.directory(), "manifest.json", manifest_json(m));
    tmp_.publish_directory(refuse_unless_plan_dir);
    published_ = true;
  }

 private:
  static constexpr std::size_t kQueued = 64;   // schedules waiting for a writing thread, at most

  void write(const RankSchedule& rs) { write_file(tmp_.directory(), rank_file_name(rs.rank, ranks_), rank_schedule_json(rs)); }

  // A writing thread: schedules from the queue until stop(); the first error stops the writing.
  void work() {
    for (;;) {
      RankSchedule item;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
        room_.notify_one();
      }
      try {
        write(item);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        room_.notify_all();
      }
    }
  }

  // Lets the threads drain the queue and end.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    workers_.clear();   // joins
  }

  std::filesystem::path dir_;
  Directory parent_;   // dir_'s
  TempSibling tmp_;    // the plan being written, removed unless published
  Rank ranks_;
  bool published_ = false;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<RankSchedule> queue_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::jthread> workers_;
};

PlanDirWriter::PlanDirWriter(const std::filesystem::path& dir, Rank ranks, unsigned threads) : impl_(std::make_unique<Impl>(dir, ranks, threads)) {}
PlanDirWriter::~PlanDirWriter() = default;
void PlanDirWriter::add(RankSchedule&& rs) { impl_->add(std::move(rs)); }
void PlanDirWriter::finish(const Manifest& m) { impl_->finish(m); }

void write_plan_dir(const Plan& plan, const std::filesystem::path& dir, unsigned threads) {
  PlanDirWriter writer(dir, plan.manifest.ranks, threads);
  for (const RankSchedule& rs : plan.ranks) writer.add(RankSchedule(rs));
  writer.finish(plan.manifest);
}

void check_rank_of_manifest(const Manifest& m, const RankSchedule& rs, Rank r, const std::string& file) {
  if (rs.rank != r) throw InputError(file, "/rank", "the schedule of rank " + std::to_string(r) + " holds rank " + std::to_string(rs.rank));
  if (rs.ranks != m.ranks) throw InputError(file, "/ranks", "rank count differs from the manifest's " + std::to_string(m.ranks));
  if (rs.matrix_fingerprint != m.matrix_fingerprint) throw InputError(file, "/matrix_fingerprint", "differs from the manifest's: the files come from different plans");
  if (rs.phases != m.phases) throw InputError(file, "/phases", "phase count differs from the manifest's " + std::to_string(m.phases));
}

}  // namespace commfit
