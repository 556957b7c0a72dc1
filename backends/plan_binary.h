// The single-file binary plan (docs/FORMAT.md §3.3): the same content
// as a plan directory, laid out so that each rank reads only its own slice: the header, a binary
// search of the index (O(log ranks) reads of 64 bytes) and one pread of its slice. Meant for large
// p, where p JSON files are slow to open and parse.
//
// Layout (all integers little-endian, docs/EXECUTOR.md has the table):
//   header   256 bytes: magic "CFITPLAN", version, ranks, phases, file size, offsets, the matrix
//            fingerprint, the manifest's JSON text location and checksum; checksummed itself.
//   index    64 bytes per rank that sends, receives or stages (in rank order; a rank without an
//            entry is idle): the offset and size of its slice, its counts (sends, recvs, steps),
//            staging bytes, phases, a check of the entry and a checksum over entry and slice.
//   manifest the manifest as JSON text (manifest_json), read only by convert and tools.
//   slices   per rank: sends and recvs (16 bytes each), then the steps (48 bytes each).
// Every reader checks sizes and offsets against the real file size before it allocates, and
// every checksum, so a truncated or corrupted file is an InputError, never a crash.
#pragma once

#include "ir/plan.h"

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace commfit {

inline constexpr std::uint32_t kPlanBinaryVersion = 2;   // 2: the index has entries only for ranks with a schedule
inline constexpr std::size_t kPlanBinaryHeaderBytes = 256;
inline constexpr std::size_t kPlanBinaryIndexEntryBytes = 64;
inline constexpr std::size_t kPlanBinaryPeerBytes = 16;
inline constexpr std::size_t kPlanBinaryStepBytes = 48;

// True when the file starts with the binary plan's magic (false when unreadable).
bool is_plan_binary(const std::filesystem::path& file);

// Writes the plan atomically (a temporary sibling renamed over `file` when complete). Replaces
// only a binary plan (not a symbolic link, a directory or any other file).
void write_plan_binary(const Plan& plan, const std::filesystem::path& file);

// The checks the writers make before they replace `out` (a binary plan when it ends in .cfp,
// else a plan directory: refuse_unless_plan_dir), made early so that nothing is planned or
// read in vain. Throws UsageError.
void check_plan_output(const std::filesystem::path& out);

// Reads and checks rank `rank`'s slice only (header, the index entries its search visits, one slice).
RankSchedule read_rank_schedule_binary(const std::filesystem::path& file, Rank rank);

// The plan hash in the header (0: none), the header checked.
std::uint64_t read_plan_hash_binary(const std::filesystem::path& file);

// Reads the manifest stored in the file.
Manifest read_manifest_binary(const std::filesystem::path& file);

// Reads the whole plan (every slice checked).
Plan read_plan_binary(const std::filesystem::path& file, bool check_hash = true);

// `commfit convert`: plan directory -> binary file, and back. Both check that every rank file
// carries the manifest's fingerprint, rank count and phase count.
void convert_plan_dir_to_binary(const std::filesystem::path& dir, const std::filesystem::path& file);
void convert_plan_binary_to_dir(const std::filesystem::path& file, const std::filesystem::path& dir);

// 64-bit FNV-1a, the checksum of the format (exposed for tests that corrupt files on purpose).
std::uint64_t plan_binary_checksum(const void* data, std::size_t bytes,
                                   std::uint64_t seed = 0xcbf29ce484222325ULL);

}  // namespace commfit
