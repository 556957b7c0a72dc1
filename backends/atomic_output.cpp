#include "backends/atomic_output.h"

#include "backends/interrupt.h"
#include "ir/error.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace commfit {
namespace fs = std::filesystem;
namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string h(buf);
  for (char& c : h)
    if (c == '/' || c == '-') c = '_';   // the PID is what follows the last '-'
  return h;
}

// HOST-PID of this process (not cached: a forked child is another writer).
std::string process_tag() { return host_name() + "-" + std::to_string(::getpid()); }

// Hex digits no one can guess ahead, for a temporary name when the predictable one is taken.
// Without getrandom the clock serves: O_EXCL still refuses a planted name, the writer then only
// runs out of names sooner.
std::string random_suffix() {
  std::uint64_t x = 0;
  if (::getrandom(&x, sizeof x, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof x))
    x = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9e3779b97f4a7c15ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

std::string failure(const std::string& what, const fs::path& path, int err) {
  return what + " " + path.string() + ": " + std::strerror(err);
}

bool unsupported(int err) { return err == EINVAL || err == ENOSYS || err == ENOTSUP; }

// renameat2 within one directory; 0 or an errno.
int rename_in(const Directory& dir, const std::string& from, const std::string& to, unsigned flags) {
  return ::renameat2(dir.fd(), from.c_str(), dir.fd(), to.c_str(), flags) == 0 ? 0 : errno;
}

// Removes `name` in the directory open as `dfd`: a file or a link (never followed), or a directory
// of files, emptied through a descriptor opened with O_NOFOLLOW. Best effort.
void remove_at(int dfd, const std::string& name) {
  if (::unlinkat(dfd, name.c_str(), 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  const int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (DIR* d = ::fdopendir(fd)) {   // takes fd
    for (bool removed = true; removed;) {   // again from the start: removing while listing may skip names
      removed = false;
      ::rewinddir(d);
      while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) removed |= ::unlinkat(fd, e->d_name, 0) == 0;
    }
    ::closedir(d);
  } else {
    ::close(fd);
  }
  ::unlinkat(dfd, name.c_str(), AT_REMOVEDIR);
}

// The check_output_target of `name` in `dir`, once the name and the directory are known good.
void check_output_name(const Directory& dir, const std::string& name, const OutputRule& rule) {
  const fs::path shown = dir.path() / name;
  struct stat st {};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    throw UsageError(failure("cannot inspect", shown, errno));
  }
  if (S_ISLNK(st.st_mode))
    throw UsageError(shown.string() + " is a symbolic link: not replacing it (give the " + (rule.directory ? "directory" : "file") +
                     " it points to, or remove the link)");
  if (rule.existing) rule.existing(shown, S_ISDIR(st.st_mode));
}

const OutputRule kPlainFile{"file", false, [](const fs::path& path, bool is_directory) {
                              if (is_directory) throw UsageError(path.string() + " is a directory: not replacing it");
                            }};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Directories.

Directory Directory::parent_of(const fs::path& target) {
  const fs::path parent = target.parent_path();
  const fs::path opened = parent.empty() ? fs::path(".") : parent;
  const int fd = ::open(opened.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string why = err == ENOENT ? " does not exist" : err == ENOTDIR ? " is not a directory" : std::string(": ") + std::strerror(err);
    throw UsageError("cannot write " + target.string() + ": " + opened.string() + why);
  }
  return Directory(fd, parent);
}

Directory Directory::private_dir(const fs::path& dir, bool force) {
  const std::string name = dir.string();
  if (name.empty()) throw UsageError("a directory must be named");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw UsageError(failure("cannot inspect", dir, errno));
    std::error_code ec;
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);   // a failure shows at mkdir
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throw UsageError(failure("cannot create", dir, errno));
  }
  // A link (a scratch directory reached through one, say) is resolved once; from here on the
  // directory is the descriptor, whatever happens to the names on its path.
  std::error_code ec;
  const fs::path real = fs::canonical(dir, ec);
  if (ec) throw UsageError(name + ": " + ec.message());
  fs::path given = fs::absolute(dir, ec).lexically_normal();
  if (!given.has_filename()) given = given.parent_path();   // "rec/"
  const std::string shown = real == given ? name : name + " (" + real.string() + ")";
  const int fd = ::open(real.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw UsageError(shown + ": " + (errno == ENOTDIR ? std::string("not a directory") : std::strerror(errno)));
  Directory d(fd, real);
  if (::fstat(fd, &st) != 0) throw UsageError(failure("cannot inspect", dir, errno));
  if (force) return d;
  // Another user's directory is theirs to read and to change after us; one others may write in
  // without the sticky bit lets them rename or replace what we put there.
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    throw UsageError(shown + ": owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(::geteuid()) + ")");
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw UsageError(shown + ": anyone may write in it (mode " + mode + ", no sticky bit)");
  }
  return d;
}

Directory::Directory(Directory&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

Directory::~Directory() {
  if (fd_ >= 0) ::close(fd_);
}

int create_file_at(const Directory& dir, const std::string& name, mode_t mode) {
  commfit_assert(!name.empty() && name.find('/') == std::string::npos, "create_file_at", "\"" + name + "\" is not a name in a directory");
  return ::openat(dir.fd(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

void check_output_target(const fs::path& target, const OutputRule& rule) {
  const std::string base = target.filename().string();
  if (base.empty() || base == "." || base == "..")
    throw UsageError("cannot write \"" + target.string() + "\": give the " + rule.noun + " a name");
  check_output_name(Directory::parent_of(target), base, rule);
}

// ---------------------------------------------------------------------------------------------
// Temporary siblings.

fs::path temp_sibling(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + ".tmp-" + process_tag());
}

void clean_stale_temps(const Directory& dir, const std::string& target) {
  const std::string prefix = "." + target + ".", host = host_name();
  std::vector<std::string> stale;
  const int fd = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!d) {
    if (fd >= 0) ::close(fd);
    return;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());   // tmp-HOST-PID[.RANDOM] or old-HOST-PID[.RANDOM]
    if (rest.rfind("tmp-", 0) != 0 && rest.rfind("old-", 0) != 0) continue;
    rest = rest.substr(4);
    const auto dash = rest.rfind('-');
    if (dash == std::string::npos || rest.substr(0, dash) != host) continue;   // another host's: alive or not, not ours to judge
    std::string digits = rest.substr(dash + 1);
    if (const auto dot = digits.find('.'); dot != std::string::npos) {
      if (digits.find_first_not_of("0123456789abcdef", dot + 1) != std::string::npos) continue;
      digits.resize(dot);
    }
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;   // alive (or not ours to signal)
    struct stat st {};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != ::geteuid()) continue;   // someone else's
    stale.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : stale) remove_at(dir.fd(), name);
}

namespace {

bool replacement_under_way(const fs::path& target) {
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + ".old-";
  DIR* d = ::opendir(parent.c_str());
  if (!d) return false;
  bool found = false;
  while (const dirent* e = ::readdir(d))
    if (std::string_view(e->d_name).starts_with(prefix)) {
      found = true;
      break;
    }
  ::closedir(d);
  return found;
}

}  // namespace

NameState name_state(const fs::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return {};
  return {true, false, st.st_dev, st.st_ino};
}

NameState name_state(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  return {true, st.st_nlink == 0, st.st_dev, st.st_ino};
}

bool replaced_since(const fs::path& target, const NameState& before) {
  for (int waited_ms = 0; waited_ms < 500; ++waited_ms) {
    // The name first, then the aside name: a replacement that ends between the two leaves the name
    // back, which the next round sees.
    const NameState now = name_state(target);
    if (now.named) return !before.named || before.unlinked || now.dev != before.dev || now.ino != before.ino;
    if (!replacement_under_way(target)) {
      if (name_state(target).named) continue;   // completed between the two looks
      return false;                             // removed, not replaced
    }
    ::usleep(1000);
  }
  return true;   // still under way: the caller's next attempt asks again
}

TempSibling::TempSibling(const Directory& dir, const std::string& target, Kind kind, mode_t mode) : dir_(dir), target_(target), kind_(kind) {
  clean_stale_temps(dir, target);
  // Interrupts wait while the temporary is created and its guard armed (a signal between the two
  // would leave it behind); a pending one is delivered when the constructor returns or throws.
  struct BlockInterrupts {
    sigset_t old;
    BlockInterrupts() {
      sigset_t block;
      sigemptyset(&block);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
      pthread_sigmask(SIG_BLOCK, &block, &old);
    }
    ~BlockInterrupts() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
  } const blocked;
  const std::string first = "." + target + ".tmp-" + process_tag();
  constexpr int kTries = 16;
  for (int attempt = 0; attempt < kTries && fd_ < 0; ++attempt) {
    name_ = attempt == 0 ? first : first + "." + random_suffix();
    if (kind == Kind::file) {
      fd_ = create_file_at(dir, name_, mode);
    } else if (::mkdirat(dir.fd(), name_.c_str(), mode) == 0) {
      fd_ = ::openat(dir.fd(), name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd_ < 0) {   // replaced between the two calls: not ours any more
        const int err = errno;
        throw UsageError(failure("cannot open the new directory", path(), err));
      }
      inner_.emplace(Directory(fd_, path()));
    }
    if (fd_ < 0 && errno != EEXIST) throw UsageError(failure("cannot write", dir.path() / target, errno));
  }
  if (fd_ < 0)
    throw UsageError("cannot write " + (dir.path() / target).string() + ": " + std::to_string(kTries) +
                     " temporary names beside it are taken (" + first + " and random ones)");
  guard_.emplace(path().string());   // from here an interrupt removes the temporary
}

TempSibling::~TempSibling() {
  guard_.reset();
  if (kind_ == Kind::file && fd_ >= 0) ::close(fd_);
  inner_.reset();   // closes a directory's descriptor
  if (!published_ && !name_.empty()) remove_at(dir_.fd(), name_);
}

void TempSibling::publish_file() {
  commfit_assert(kind_ == Kind::file && !published_ && fd_ >= 0, "TempSibling", "publish_file() of a directory, or twice");
  const fs::path target = dir_.path() / target_;
  const int fd = fd_;
  fd_ = -1;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0) err = rename_in(dir_, name_, target_, 0);   // replaces the name itself, whatever stands there
  if (err != 0) throw UsageError(failure("cannot write", target, err));
  published_ = true;
}

void TempSibling::publish_directory(const std::function<void(const fs::path&)>& check_replaceable) {
  commfit_assert(kind_ == Kind::directory && !published_, "TempSibling", "publish_directory() of a file, or twice");
  const fs::path target = dir_.path() / target_;
  for (int attempt = 0; attempt < 16; ++attempt) {
    // A new name: one rename that fails if another writer got there first.
    int err = rename_in(dir_, name_, target_, RENAME_NOREPLACE);
    if (err == 0) return void(published_ = true);
    if (unsupported(err)) {
      struct stat st {};
      if (::fstatat(dir_.fd(), target_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
        err = rename_in(dir_, name_, target_, 0);
        if (err == 0) return void(published_ = true);
        if (err != EEXIST && err != ENOTEMPTY) throw UsageError(failure("cannot rename " + path().string() + " to", target, err));
      }
      err = EEXIST;
    }
    if (err != EEXIST) throw UsageError(failure("cannot rename " + path().string() + " to", target, err));

    // An existing name: refuse it unless it is ours to replace, then swap in one step.
    check_replaceable(target);
    err = rename_in(dir_, name_, target_, RENAME_EXCHANGE);
    if (err == ENOENT) continue;   // removed meanwhile: try the new-name path again
    if (err == 0) {
      try {
        check_replaceable(path());   // what we displaced, which may not be what we checked
      } catch (...) {
        rename_in(dir_, name_, target_, RENAME_EXCHANGE);
        throw;
      }
      published_ = true;
      remove_at(dir_.fd(), name_);   // the displaced directory
      return;
    }
    if (!unsupported(err)) throw UsageError(failure("cannot replace", target, err));
    // No RENAME_EXCHANGE here (some network file systems): move the old one aside first; a crash
    // between the two renames leaves it as .NAME.old-HOST-PID[.RANDOM], which the next write
    // removes. A directory is not renamed over a file or a link planted at that name: then this fails.
    const std::string old = "." + target_ + ".old-" + name_.substr(target_.size() + 6);
    if (const int e = rename_in(dir_, target_, old, 0); e != 0) {
      if (e == ENOENT) continue;
      throw UsageError(failure("cannot move aside", target, e));
    }
    if (const int e = rename_in(dir_, name_, target_, 0); e != 0) {
      if (e == EEXIST || e == ENOTEMPTY) {   // another writer filled the gap: ours replaces theirs
        remove_at(dir_.fd(), old);
        continue;
      }
      rename_in(dir_, old, target_, 0);
      throw UsageError(failure("cannot rename " + path().string() + " to", target, e));
    }
    published_ = true;
    remove_at(dir_.fd(), old);
    return;
  }
  throw UsageError("cannot replace " + target.string() + ": other processes keep replacing it");
}

// ---------------------------------------------------------------------------------------------
// Whole files.

int write_all_at(int fd, const void* data, std::size_t bytes, std::uint64_t offset) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return 0;
}

void write_file_atomic(std::string_view text, const fs::path& file) {
  const std::string base = file.filename().string();
  if (base.empty() || base == "." || base == "..") throw UsageError("cannot write \"" + file.string() + "\": give the file a name");
  write_file_atomic(text, Directory::parent_of(file), base, 0644);
}

void write_file_atomic(std::string_view text, const Directory& dir, const std::string& name, mode_t mode) {
  check_output_name(dir, name, kPlainFile);
  TempSibling tmp(dir, name, TempSibling::Kind::file, mode);
  if (const int err = write_all_at(tmp.fd(), text.data(), text.size(), 0); err != 0)
    throw UsageError(failure("cannot write", dir.path() / name, err));
  tmp.publish_file();
}

}  // namespace commfit
