// Every file and directory commfit creates, and how it replaces an output path: a reader sees the
// old content or the new one, never a mix and never nothing; a crash leaves no debris the next
// write does not clean up; and nothing is ever written through a name someone else put there.
//
// A file is created only by create_file_at(): O_CREAT|O_EXCL|O_NOFOLLOW, relative to a directory
// opened once (Directory), so that an existing file or a symbolic link planted at the name is
// neither followed nor truncated. An output is written under a temporary sibling name and renamed
// over its own name when complete (rename replaces the name; it does not follow a link there).
//
// Temporary siblings are named ".NAME.tmp-HOST-PID" (HOST-PID: the writing process), so that the
// next write of NAME from the same host can tell a dead writer's leftovers from a live one's. When
// that name is taken (a leftover of this PID, or something planted to be written through), the
// writer takes ".NAME.tmp-HOST-PID.RANDOM" instead.
#pragma once

#include "backends/interrupt.h"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace commfit {

// A directory open for creating names in it (O_DIRECTORY, closed with the object). Names are
// resolved from the descriptor: moving or replacing a directory on its path afterwards does not
// move the files elsewhere.
class Directory {
 public:
  // The directory `target` goes in ("." when the path names none), as the user named it: links on
  // its path are followed. Missing, or not a directory: UsageError "cannot write TARGET: PARENT
  // does not exist" (or "is not a directory").
  static Directory parent_of(const std::filesystem::path& target);

  // A directory commfit writes into on its own account (COMMFIT_RECORD, keep=DIR). Made with mode
  // 0700 when missing (a link at its name is not followed: then it exists). A link to a directory
  // is resolved once, and the directory it names is opened with O_NOFOLLOW and checked: refused
  // (UsageError "DIR: what is wrong") when it is owned by another user than this one or root, or
  // when others may write in it and its sticky bit is not set, unless `force`.
  static Directory private_dir(const std::filesystem::path& dir, bool force);

  Directory(Directory&& other) noexcept;
  Directory& operator=(Directory&&) = delete;
  ~Directory();
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }   // for messages, and paths below it

 private:
  friend class TempSibling;
  Directory(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
};

// Creates `name` in `dir` for writing, O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC with `mode` (less the
// umask): a new file or nothing. Returns the descriptor, or -1 with errno (EEXIST: the name is
// taken, by whatever it is). The one way commfit creates a file.
int create_file_at(const Directory& dir, const std::string& name, mode_t mode);

// What may stand at an output path before it is replaced (check_output_target).
struct OutputRule {
  std::string noun;         // "file", "binary plan file", "plan directory": "give the NOUN a name"
  bool directory = false;   // the output is a directory (a link's advice names one)
  // Called with what stands at the path (not a link): throws UsageError to refuse replacing it.
  std::function<void(const std::filesystem::path&, bool is_directory)> existing;
};

// Refuses an output path that commfit would not replace: one without a file name, one whose
// directory is missing, a symbolic link (live or dangling), and what `rule.existing` refuses.
// Every refusal is a UsageError naming the path and the reason. The one overwrite guard.
void check_output_target(const std::filesystem::path& target, const OutputRule& rule);

// .NAME.tmp-HOST-PID: the first name this process tries for a temporary sibling of `target`.
std::filesystem::path temp_sibling(const std::filesystem::path& target);

// Removes the temporary siblings of `target` in `dir` left by processes of this host that no
// longer run, when they belong to this user. A directory is emptied with unlinkat relative to a
// descriptor opened with O_NOFOLLOW, so that nothing outside it is removed. Best effort.
void clean_stale_temps(const Directory& dir, const std::string& target);

// Where the file system has no RENAME_EXCHANGE, a directory output is replaced in two renames: the
// old one moved aside to .NAME.old-HOST-PID, then the new one renamed in. Between the two the name
// is missing, and a reader that finds it missing, or loses files under it, asks whether it was
// replaced meanwhile rather than report it gone.
//
// What a name referred to when a read began.
struct NameState {
  bool named = false;   // false: the name was missing
  bool unlinked = false;   // an open file or directory that no name refers to any more
  dev_t dev = 0;
  ino_t ino = 0;
};
NameState name_state(const std::filesystem::path& target);
NameState name_state(int fd);   // the file or directory a read holds open

// Whether `target` was replaced since it referred to `before`: it now refers to something else (an
// unlinked `before` counts as something else whatever its inode number, which the file system may
// already have given the replacement), or it is missing while a replacement is under way (waited
// for up to half a second). Each check is
// made after the one it depends on, so a replacement that completes between them still counts.
bool replaced_since(const std::filesystem::path& target, const NameState& before);

// A temporary sibling of `target` in `dir`, created new by this process (create_file_at, or
// mkdirat for a directory) and removed by the destructor unless published: while it lives, an
// interrupt removes it too (backends/interrupt.h). Cleans the stale siblings first.
class TempSibling {
 public:
  enum class Kind { file, directory };
  TempSibling(const Directory& dir, const std::string& target, Kind kind, mode_t mode);
  ~TempSibling();
  TempSibling(const TempSibling&) = delete;
  TempSibling& operator=(const TempSibling&) = delete;

  // A file: open for writing. A directory: open (O_DIRECTORY) for create_file_at.
  int fd() const { return fd_; }
  const Directory& directory() const { return *inner_; }   // a directory sibling's
  std::filesystem::path path() const { return dir_.path() / name_; }
  const std::string& name() const { return name_; }

  // A file: synced, closed and renamed over the target (rename replaces the name itself, a link
  // there included, without following it).
  void publish_file();

  // A directory, complete, moved to the target. A missing target is created by one rename; an
  // existing one is first passed to `check_replaceable` (which throws UsageError to refuse it) and
  // then exchanged with the temporary in one step (renameat2 RENAME_EXCHANGE), so that the target
  // names a whole directory at every instant; the displaced directory is checked again (another
  // process may have put something else there meanwhile: it is then swapped back and refused) and
  // removed. On file systems without RENAME_EXCHANGE the old directory is moved aside first and
  // the target is missing between the two renames. Every failure is a UsageError naming the path
  // and the reason.
  void publish_directory(const std::function<void(const std::filesystem::path&)>& check_replaceable);

 private:
  const Directory& dir_;
  std::string target_, name_;
  Kind kind_;
  int fd_ = -1;
  std::optional<Directory> inner_;   // a directory sibling, open
  std::optional<TempPathGuard> guard_;
  bool published_ = false;
};

// Writes `text` to `file`: a temporary sibling, written and synced, renamed over `file` once
// complete, so that a reader sees the old file or the new one. Refuses a directory, a symbolic
// link and a missing parent (check_output_target). Every failure is a UsageError naming the path
// and the reason.
void write_file_atomic(std::string_view text, const std::filesystem::path& file);

// The same, as `name` in `dir`, created with `mode`.
void write_file_atomic(std::string_view text, const Directory& dir, const std::string& name, mode_t mode);

// Writes all of `bytes` at `data` to `fd` at file offset `offset`; 0 or an errno.
int write_all_at(int fd, const void* data, std::size_t bytes, std::uint64_t offset);

}  // namespace commfit
