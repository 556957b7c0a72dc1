// Preloaded into commfit by a test, this makes the file system look like one without
// renameat2's flags (some network file systems): RENAME_NOREPLACE and RENAME_EXCHANGE fail with
// EINVAL, so that a plan directory is replaced in two renames. The moment between them, when the
// name is missing, is stretched to 2 ms so that concurrent readers and writers meet it.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, unsigned int flags) {
  if (flags != 0) {
    errno = EINVAL;
    return -1;
  }
  const int r = (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, 0u);
  if (r == 0 && strstr(newpath, ".old-") != NULL) usleep(2000);
  return r;
}
