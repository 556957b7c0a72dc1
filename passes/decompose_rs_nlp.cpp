#include "passes/decompose_rs_nlp.h"

#include "ir/error.h"
#include "passes/ranka_wang_detail.h"

#include <optional>

namespace commfit {

Schedule decompose_rs_nlp(const CompressedMatrix& ccom, const CommMatrix& m, const Topology& topo,
                          const RsNlpOptions& options, RsNlpReport* report) {
  topo.check_ranks(m.ranks);
  Schedule s;
  s.ranks = m.ranks;
  s.copies = local_copies(m);
  detail::RsState state(ccom, m, detail::RsState::Order::ccom);
  std::optional<detail::LinkClaims> links;
  if (options.link_check) links.emplace(topo);
  Rng rng(options.seed ^ detail::kRsStartRowSalt);
  std::int64_t pairs = 0;
  for (std::uint32_t iteration = 1; !state.done(); ++iteration) {
    const auto x = static_cast<Rank>(rng.below(static_cast<std::uint64_t>(m.ranks)));   // Fig. 4 (b)
    const Phase phase = iteration - 1;
    for (const detail::Pick& p : state.iterate(x, options.pairwise, links ? &*links : nullptr, iteration)) {
      const Bytes b = state.remaining(p.msg);
      s.transfers.push_back({phase, state.src(p.msg), state.dst(p.msg), {state.src(p.msg), state.dst(p.msg), 0, b}});
      state.send_bytes(p.msg, b);
      state.complete(p.msg);
      pairs += p.paired;
    }
    state.end_iteration();
    s.phases = iteration;
  }
  if (report) report->pairs_located = pairs / 2;
  canonicalize(s);
  return s;
}

const char* rs_nlp_name(const RsNlpOptions& o) {
  return o.link_check ? (o.pairwise ? "rs_nlp" : "rs_nl") : (o.pairwise ? "rs_np" : "rs_n");
}

}  // namespace commfit
