#include "backends/interrupt.h"

#include "ir/error.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace commfit {
namespace {

char g_path[4096];
std::atomic<bool> g_armed{false};

struct LinuxDirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

void remove_path(const char* path) {
  if (::unlink(path) == 0) return;
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);   // a link put in its place is not followed
  if (fd >= 0) {
    alignas(8) static char buf[8192];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
        if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) ::unlinkat(fd, d->d_name, 0);
        off += d->d_reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(path);
}

extern "C" void on_interrupt(int sig) {
  if (g_armed.exchange(false)) remove_path(g_path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_interrupt_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

TempPathGuard::TempPathGuard(const std::string& path) {
  commfit_assert(path.size() < sizeof g_path, "TempPathGuard", "temporary path too long");
  commfit_assert(!g_armed.load(), "TempPathGuard", "one temporary path at a time");
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  g_armed.store(true);
}

TempPathGuard::~TempPathGuard() { g_armed.store(false); }

}  // namespace commfit
