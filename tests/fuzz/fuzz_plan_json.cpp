// libFuzzer target: the plan readers (manifest and rank schedule) accept or throw InputError.
// An accepted rank schedule is run through the verifier against a matrix made of its own
// sends/recvs, which must report problems rather than crash.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "passes/verify.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)commfit::parse_manifest(text, "manifest.json");
  } catch (const commfit::InputError&) {
  }
  try {
    const commfit::RankSchedule r = commfit::parse_rank_schedule(text, "rank.json");
    if (r.ranks <= 64) {
      std::vector<commfit::Message> msgs;
      for (const auto& s : r.sends) msgs.push_back({r.rank, s.peer, s.bytes});
      for (const auto& c : r.recvs)
        if (c.peer != r.rank) msgs.push_back({c.peer, r.rank, c.bytes});
      std::sort(msgs.begin(), msgs.end(), [](const auto& a, const auto& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
      msgs.erase(std::unique(msgs.begin(), msgs.end(), [](const auto& a, const auto& b) { return a.src == b.src && a.dst == b.dst; }), msgs.end());
      const commfit::CommMatrix m = commfit::make_matrix(r.ranks, msgs);
      commfit::Plan plan;
      plan.manifest.ranks = r.ranks;
      plan.manifest.phases = r.phases;
      plan.manifest.matrix_fingerprint = r.matrix_fingerprint;
      for (commfit::Rank k = 0; k < r.ranks; ++k) {
        commfit::RankSchedule empty;
        empty.rank = k;
        empty.ranks = r.ranks;
        empty.phases = r.phases;
        plan.ranks.push_back(k == r.rank ? r : empty);
      }
      (void)commfit::verify(plan, m, {});
    }
  } catch (const commfit::InputError&) {
  }
  return 0;
}
