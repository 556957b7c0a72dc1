// Replacing an output path so that a reader sees the old content or the new one, never a mix and
// never nothing, and so that a crash leaves no debris the next write does not clean up.
//
// Temporary siblings are named ".NAME.tmp-HOST-PID" (HOST-PID: the writing process), so that the
// next write of NAME from the same host can tell a dead writer's leftovers from a live one's.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace commfit {

// parent/.NAME.tmp-HOST-PID for this process.
std::filesystem::path temp_sibling(const std::filesystem::path& target);

// Removes the temporary siblings of `target` left by processes of this host that no longer run.
// Best effort: what cannot be removed is left alone.
void clean_stale_temps(const std::filesystem::path& target);

// Writes `text` to `file`: a temporary sibling, written and synced, renamed over `file` once
// complete (an interrupt removes the temporary, backends/interrupt.h), so that a reader sees the
// old file or the new one. Refuses a directory, a symbolic link and a missing parent. Every
// failure is a UsageError naming the path and the reason.
void write_file_atomic(std::string_view text, const std::filesystem::path& file);

// Moves the complete directory `tmp` to `dir`. A missing `dir` is created by one rename; an
// existing one is first passed to `check_replaceable` (which throws UsageError to refuse it) and
// then exchanged with `tmp` in one step (renameat2 RENAME_EXCHANGE), so that `dir` names a whole
// directory at every instant; the displaced directory is checked again (another process may
// have put something else there meanwhile: it is then swapped back and refused) and removed.
// On file systems without RENAME_EXCHANGE the old directory is moved aside first and `dir` is
// missing between the two renames. Every failure is a UsageError naming the path and the reason.
void publish_directory(const std::filesystem::path& tmp, const std::filesystem::path& dir,
                       const std::function<void(const std::filesystem::path&)>& check_replaceable);

}  // namespace commfit
