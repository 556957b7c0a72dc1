#include "passes/group_phases.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace commfit {

Schedule group_phases(const Schedule& s, int k) {
  if (k < 1) throw std::invalid_argument("group_phases: k must be at least 1");
  const std::vector<Bytes> largest = phase_max_piece(s);
  std::vector<Phase> order(s.phases);
  std::iota(order.begin(), order.end(), Phase{0});
  std::stable_sort(order.begin(), order.end(), [&](Phase a, Phase b) { return largest[a] > largest[b]; });
  std::vector<Phase> group(s.phases);
  for (std::size_t i = 0; i < order.size(); ++i) group[order[i]] = static_cast<Phase>(i / static_cast<std::size_t>(k));
  Schedule out = s;
  for (Transfer& t : out.transfers) t.phase = group[t.phase];
  out.phases = s.phases == 0 ? 0 : static_cast<Phase>((s.phases - 1) / static_cast<Phase>(k) + 1);
  canonicalize(out);
  drop_empty_phases(out);
  return out;
}

}  // namespace commfit
