// libFuzzer target: the verifier (passes/verify.h) on a matrix and a plan given in one input,
// parts separated by lines "====":
//   MATRIX JSON ==== MANIFEST JSON ==== RANK 0 JSON ==== RANK 1 JSON ...
// Parts that the readers refuse end the run (InputError is the right answer); once everything
// parses, the verifier must report problems, never crash, hang or allocate without bound. The
// matrix's true fingerprint is written into the manifest and the rank files, so that the fuzzer
// gets past the fingerprint check into rules 1-6. Seeds: tools/fuzz.sh makes them from plans.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "ir/topology.h"
#include "passes/verify.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const std::size_t sep = text.find("\n====\n", at);
    parts.push_back(text.substr(at, sep == std::string_view::npos ? std::string_view::npos : sep - at));
    if (sep == std::string_view::npos) break;
    at = sep + 6;
  }
  if (parts.size() < 3 || parts.size() > 2 + 64) return 0;
  try {
    const commfit::MatrixFile f = commfit::parse_matrix_json(parts[0], "fuzz.json");
    const std::string fp = commfit::matrix_fingerprint(f.matrix);
    commfit::Plan plan;
    plan.manifest = commfit::parse_manifest(parts[1], "manifest.json");
    if (plan.manifest.matrix_fingerprint.size() == fp.size()) plan.manifest.matrix_fingerprint = fp;
    for (std::size_t k = 2; k < parts.size(); ++k) {
      plan.ranks.push_back(commfit::parse_rank_schedule(parts[k], "rank.json"));
      if (plan.ranks.back().matrix_fingerprint.size() == fp.size()) plan.ranks.back().matrix_fingerprint = fp;
    }
    // The rules the plan claims, as `commfit verify` takes them from the manifest.
    commfit::VerifyRules rules;
    rules.memory = !f.matrix.memory.empty();
    const auto& o = plan.manifest.options;
    const std::string c = o.contains("contention") && o["contention"].is_string() ? o["contention"].get<std::string>() : "node";
    rules.contention = c == "none" ? commfit::Contention::none : c == "link" ? commfit::Contention::link : commfit::Contention::node;
    commfit::Topology topology;
    if (o.contains("topology") && o["topology"].is_string()) {
      try {
        topology = commfit::Topology::parse(o["topology"].get<std::string>());
        topology.check_ranks(f.matrix.ranks);
      } catch (const commfit::UsageError&) {
        return 0;
      }
    }
    rules.route = [&topology](commfit::Rank a, commfit::Rank b, std::vector<commfit::Link>& links) { topology.route(a, b, links); };
    (void)commfit::verify(plan, f.matrix, rules);
  } catch (const commfit::InputError&) {
  }
  return 0;
}
