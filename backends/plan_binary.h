// The single-file binary plan (docs/FORMAT.md §3.3): the same content as a plan directory, laid
// out so that each rank reads only its own slice: the header, a binary search of the index
// (O(log ranks) reads of 64 bytes) and one pread of its slice. Meant for large p, where p JSON
// files are slow to open and parse.
//
// Layout, version 3 (all fixed-size integers little-endian; docs/FORMAT.md §3.3 has every byte):
//   header   256 bytes: magic "CFITPLAN", version, ranks, phases, file size, where the index and
//            the manifest are, the matrix fingerprint, the plan hash; checksummed itself.
//   slices   per rank with an index entry, in rank order, end to end: sends and recvs, the
//            posting order when the rank has one, then the steps, in LEB128 varints (about 8
//            bytes a direct step instead of version 2's 48).
//   index    64 bytes per rank that sends, receives or stages (in rank order; a rank without an
//            entry is idle): the offset and size of its slice, its counts (sends, recvs, steps),
//            staging bytes, phases, a check of the entry and a checksum over entry and slice.
//   manifest the manifest as JSON text (manifest_json), read only by convert and tools.
// The header is written last, so that one forward pass writes the file (PlanBinaryWriter):
// the slices as the ranks come, then the index and the manifest, then the header at offset 0.
// Every reader checks sizes and offsets against the real file size before it allocates, and
// every checksum (XXH3-64), so a truncated or corrupted file is an InputError, never a crash.
#pragma once

#include "ir/plan.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace commfit {

// 3: varint slices before the index, XXH3-64 checksums. 2: fixed 48-byte steps after the
// manifest, FNV-1a. 1: an index entry for every rank. Older versions are refused by name.
inline constexpr std::uint32_t kPlanBinaryVersion = 3;
inline constexpr std::size_t kPlanBinaryHeaderBytes = 256;
inline constexpr std::size_t kPlanBinaryIndexEntryBytes = 64;
// Header bytes 28..31: how slices are encoded. 1 = the varints of docs/FORMAT.md §3.3 (version 2
// had its fixed step size, 48, there).
inline constexpr std::uint32_t kPlanBinarySliceEncoding = 1;
// Index entry bytes 48..51 hold the request window (max_outstanding, at most 2^20) and, in this
// bit, that the slice carries the rank's posting order (RankSchedule::send_order).
inline constexpr std::uint32_t kPlanBinaryListedOrder = std::uint32_t{1} << 31;

// True when the file starts with the binary plan's magic (false when unreadable), whatever its
// version: such a file may be replaced by a new plan.
bool is_plan_binary(const std::filesystem::path& file);

// Writes a binary plan in one forward pass, rank by rank, holding only the index (64 bytes per
// rank with a schedule) and a write buffer of about 1 MiB, never the plan:
//
//   PlanBinaryWriter w(file, ranks, phases, fingerprint);
//   for (each rank r in increasing order) w.add(schedule of r);   // idle ranks may be skipped
//   w.finish(manifest);                                            // the file appears only now
//
// The file is written to a temporary sibling (backends/atomic_output.h) and renamed over `file`
// by finish(), so a reader sees the old file or the new one. A writer destroyed without
// finish() (an exception, an error mid-plan) removes its temporary and leaves nothing behind; an
// interrupt does the same (backends/interrupt.h). Failures to write are UsageErrors naming the
// file; a schedule that does not belong to the plan is an internal error.
class PlanBinaryWriter {
 public:
  // Refuses to replace anything but a binary plan (a symbolic link, a directory, any other file:
  // UsageError, as check_plan_output), removes temporaries of dead writers and opens the temporary.
  PlanBinaryWriter(const std::filesystem::path& file, Rank ranks, Phase phases, std::string fingerprint);
  // A rank schedule of this plan (same ranks, phases and fingerprint), ranks in increasing order.
  // An idle one (no sends, receives, steps, staging or window) gets no index entry. A slice holds
  // what the rank file holds: stage_offset only on staged steps, as rank_schedule_json writes it.
  void add(const RankSchedule& rs);
  // Writes the index, the manifest and the header, syncs and renames over `file`. m's ranks,
  // phases and fingerprint must be the writer's (checked: an internal error otherwise). Its
  // staging_bytes_max and plan_hash must agree with the schedules added and are written as
  // given: recomputing the hash would hash every step a second time (make_plan has just done it),
  // and every plan reader checks it against the slices.
  void finish(const Manifest& m);
  ~PlanBinaryWriter();

  PlanBinaryWriter(const PlanBinaryWriter&) = delete;
  PlanBinaryWriter& operator=(const PlanBinaryWriter&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes the plan atomically through PlanBinaryWriter (one rank schedule per rank, in order).
// Replaces only a binary plan (not a symbolic link, a directory or any other file).
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

// Reads the whole plan (every slice checked), the index in one read and the slices in large
// sequential blocks.
Plan read_plan_binary(const std::filesystem::path& file, bool check_hash = true);

// `commfit convert`: plan directory -> binary file, and back. Both check that every rank file
// carries the manifest's fingerprint, rank count and phase count.
void convert_plan_dir_to_binary(const std::filesystem::path& dir, const std::filesystem::path& file);
void convert_plan_binary_to_dir(const std::filesystem::path& file, const std::filesystem::path& dir);

// XXH3-64 with `seed`, the checksum of the format (exposed for tests and the fuzzer, which
// corrupt files on purpose and recompute it).
std::uint64_t plan_binary_checksum(const void* data, std::size_t bytes, std::uint64_t seed = 0);

}  // namespace commfit
