// Interrupted writes leave nothing behind: while a plan (or any output) is being written to a
// temporary path, a SIGINT, SIGTERM or SIGHUP removes that path before the process dies with the
// signal. The handler uses async-signal-safe system calls only (getdents64, unlinkat, rmdir).
#pragma once

#include <string>

namespace commfit {

// Installs the handlers (once, at program start).
void install_interrupt_cleanup();

// While a TempPathGuard lives, an interrupt removes `path` (a file, or a directory of files).
class TempPathGuard {
 public:
  explicit TempPathGuard(const std::string& path);
  ~TempPathGuard();
  TempPathGuard(const TempPathGuard&) = delete;
  TempPathGuard& operator=(const TempPathGuard&) = delete;
};

}  // namespace commfit
