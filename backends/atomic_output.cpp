#include "backends/atomic_output.h"

#include "backends/interrupt.h"
#include "ir/error.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

fs::path parent_of(const fs::path& target) { return target.parent_path().empty() ? fs::path(".") : target.parent_path(); }

std::string failure(const std::string& what, const fs::path& path, int err) {
  return what + " " + path.string() + ": " + std::strerror(err);
}

// rename(2) with flags; 0 or an errno.
int rename_with(const fs::path& from, const fs::path& to, unsigned flags) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags) == 0) return 0;
  return errno;
}

bool unsupported(int err) { return err == EINVAL || err == ENOSYS || err == ENOTSUP; }

}  // namespace

fs::path temp_sibling(const fs::path& target) {
  static const std::string tag = host_name() + "-" + std::to_string(::getpid());
  return parent_of(target) / ("." + target.filename().string() + ".tmp-" + tag);
}

void clean_stale_temps(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".", host = host_name();
  std::error_code ec;
  fs::directory_iterator it(parent_of(target), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());   // tmp-HOST-PID or old-HOST-PID
    if (rest.rfind("tmp-", 0) != 0 && rest.rfind("old-", 0) != 0) continue;
    rest = rest.substr(4);
    const auto dash = rest.rfind('-');
    if (dash == std::string::npos || rest.substr(0, dash) != host) continue;   // another host's: alive or not, not ours to judge
    const std::string digits = rest.substr(dash + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;   // alive (or not ours to signal)
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

void publish_directory(const fs::path& tmp, const fs::path& dir, const std::function<void(const fs::path&)>& check_replaceable) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    // A new name: one rename that fails if another writer got there first.
    int err = rename_with(tmp, dir, RENAME_NOREPLACE);
    if (err == 0) return;
    if (unsupported(err)) {
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(dir, ec))) {
        if (std::rename(tmp.c_str(), dir.c_str()) == 0) return;
        err = errno;
        if (err != EEXIST && err != ENOTEMPTY) throw UsageError(failure("cannot rename " + tmp.string() + " to", dir, err));
      }
      err = EEXIST;
    }
    if (err != EEXIST) throw UsageError(failure("cannot rename " + tmp.string() + " to", dir, err));

    // An existing name: refuse it unless it is ours to replace, then swap in one step.
    check_replaceable(dir);
    err = rename_with(tmp, dir, RENAME_EXCHANGE);
    if (err == ENOENT) continue;   // removed meanwhile: try the new-name path again
    if (err == 0) {
      try {
        check_replaceable(tmp);   // what we displaced, which may not be what we checked
      } catch (...) {
        rename_with(tmp, dir, RENAME_EXCHANGE);
        throw;
      }
      std::error_code ec;
      fs::remove_all(tmp, ec);
      return;
    }
    if (!unsupported(err)) throw UsageError(failure("cannot replace", dir, err));
    // No RENAME_EXCHANGE here (some network file systems): move the old one aside first; a crash
    // between the two renames leaves it as .NAME.old-HOST-PID, which the next write removes.
    const std::string tag = temp_sibling(dir).filename().string().substr(1 + dir.filename().string().size() + 5);
    const fs::path old = parent_of(dir) / ("." + dir.filename().string() + ".old-" + tag);
    if (std::rename(dir.c_str(), old.c_str()) != 0) {
      if (errno == ENOENT) continue;
      throw UsageError(failure("cannot move aside", dir, errno));
    }
    if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
      const int e = errno;
      std::rename(old.c_str(), dir.c_str());
      throw UsageError(failure("cannot rename " + tmp.string() + " to", dir, e));
    }
    std::error_code ec;
    fs::remove_all(old, ec);
    return;
  }
  throw UsageError("cannot replace " + dir.string() + ": other processes keep replacing it");
}

void write_file_atomic(std::string_view text, const fs::path& file) {
  const std::string name = file.string();
  if (!file.has_filename() || file.filename() == "." || file.filename() == "..")
    throw UsageError("cannot write \"" + name + "\": give the file a name");
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (fs::is_symlink(st)) throw UsageError(name + " is a symbolic link: not replacing it (give the file it points to, or remove the link)");
  if (fs::is_directory(st)) throw UsageError(name + " is a directory: not replacing it");
  const fs::path parent = parent_of(file);
  if (!fs::is_directory(parent, ec))
    throw UsageError("cannot write " + name + ": " + parent.string() + (fs::exists(parent, ec) ? " is not a directory" : " does not exist"));
  clean_stale_temps(file);
  const fs::path tmp = temp_sibling(file);
  const TempPathGuard guard(tmp.string());   // from here an interrupt removes the partial file
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError(failure("cannot write", file, errno));
  int err = 0;
  for (std::size_t done = 0; done < text.size() && err == 0;) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    else done += static_cast<std::size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename_with(tmp, file, 0) != 0) err = errno;
  if (err != 0) {
    fs::remove(tmp, ec);
    throw UsageError(failure("cannot write", file, err));
  }
}

}  // namespace commfit
