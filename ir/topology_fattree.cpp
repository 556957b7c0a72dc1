// Fat tree construction and routing, mirroring SimGrid 3.32 FatTreeZone (see topology_fattree.h).
#include "ir/topology_fattree.h"

#include "ir/error.h"
#include "ir/topology.h"

#include <algorithm>

namespace commfit::detail {
namespace {

// a * b, or -1 when it exceeds `limit`.
std::int64_t mul_capped(std::int64_t a, std::int64_t b, std::int64_t limit) {
  if (a < 0 || b < 0) return -1;
  if (b != 0 && a > limit / b) return -1;
  return a * b <= limit ? a * b : -1;
}

}  // namespace

FatTree::FatTree(std::vector<std::int64_t> down_, std::vector<std::int64_t> up_,
                 std::vector<std::int64_t> parallel_, const std::string& spec)
    : down(std::move(down_)), up(std::move(up_)), parallel(std::move(parallel_)) {
  auto fail = [&](const std::string& what) {
    throw UsageError("topology \"" + spec + "\": " + what);
  };
  const std::size_t L = down.size();
  if (L == 0) fail("a fat tree needs at least one level");
  if (up.size() != L || parallel.size() != L)
    fail("the down-link, up-link and parallel-link lists must each have " + std::to_string(L) +
         " entries (one per level)");
  for (std::size_t l = 0; l < L; ++l)
    if (down[l] < 1 || up[l] < 1 || parallel[l] < 1) fail("every link count must be at least 1");

  // Nodes per level (SimGrid generate_switches): hosts = prod m; level l+1 has
  // prod_{j<=l} w_j * prod_{j>l} m_j switches.
  std::vector<std::int64_t> count(L + 1, 1);
  for (std::size_t j = 0; j < L; ++j) {
    count[0] = mul_capped(count[0], down[j], kMaxFatTreeHosts);
    if (count[0] < 0) fail("more than " + std::to_string(kMaxFatTreeHosts) + " hosts");
  }
  std::int64_t total = count[0], cable_total = 0;
  for (std::size_t l = 0; l < L; ++l) {
    std::int64_t c = 1;
    for (std::size_t j = 0; j < L && c >= 0; ++j) c = mul_capped(c, j <= l ? up[j] : down[j], kMaxFatTreeCables);
    // Cables between level l and l+1: every level-l node has w_l p_l of them.
    const std::int64_t ports = mul_capped(up[l], parallel[l], kMaxFatTreeCables);
    const std::int64_t cables = ports < 0 ? -1 : mul_capped(count[l], ports, kMaxFatTreeCables);
    if (c < 0 || cables < 0 || (cable_total += cables) > kMaxFatTreeCables)
      fail("more than " + std::to_string(kMaxFatTreeCables) + " cables or switches");
    count[l + 1] = c;
    total += c;
  }
  level_begin.assign(L + 2, 0);
  for (std::size_t l = 0; l <= L; ++l) level_begin[l + 1] = level_begin[l] + count[l];

  // Labels (SimGrid generate_labels): the position in mixed radix, digit 0 first.
  labels.assign(static_cast<std::size_t>(total) * L, 0);
  for (std::size_t l = 0; l <= L; ++l)
    for (std::int64_t pos = 0; pos < count[l]; ++pos) {
      std::int64_t rest = pos;
      for (std::size_t j = 0; j < L; ++j) {
        const std::int64_t radix = j >= l ? down[j] : up[j];
        labels[(level_begin[l] + pos) * L + j] = static_cast<std::int32_t>(rest % radix);
        rest /= radix;
      }
    }

  // Port tables: a level-l node (l < L) has w_l p_l parent ports; a level-l switch (l >= 1)
  // has m_{l-1} p_{l-1} child ports (0-based vectors).
  parent_base.assign(L + 1, 0);
  child_base.assign(L + 1, 0);
  std::int64_t parent_entries = 0, child_entries = 0;
  for (std::size_t l = 0; l <= L; ++l) {
    parent_base[l] = parent_entries;
    child_base[l] = child_entries;
    if (l < L) parent_entries += count[l] * up[l] * parallel[l];
    if (l >= 1) child_entries += count[l] * down[l - 1] * parallel[l - 1];
  }
  parent_port.assign(static_cast<std::size_t>(parent_entries), -1);
  child_port.assign(static_cast<std::size_t>(child_entries), -1);

  // Cables (SimGrid build_upper_levels / connect_node_to_parents / add_link): node by node in
  // global order; the related parents of a level-l node are its label with digit l replaced by
  // 0..w_l-1, which is their position order; p_l cables each. Child port of the parent:
  // child.label[l] + j m_l; parent port of the child: parent.label[l] + j w_l.
  cable_child.reserve(static_cast<std::size_t>(cable_total));
  cable_parent.reserve(static_cast<std::size_t>(cable_total));
  for (std::size_t l = 0; l < L; ++l) {
    std::vector<std::int64_t> stride(L, 1);   // position strides at level l + 1
    for (std::size_t j = 1; j < L; ++j) stride[j] = stride[j - 1] * (j - 1 <= l ? up[j - 1] : down[j - 1]);
    for (std::int64_t g = level_begin[l]; g < level_begin[l + 1]; ++g) {
      std::int64_t base = 0;   // parent position with digit l = 0
      for (std::size_t j = 0; j < L; ++j)
        if (j != l) base += labels[g * L + j] * stride[j];
      for (std::int64_t v = 0; v < up[l]; ++v) {
        const std::int64_t parent = level_begin[l + 1] + base + v * stride[l];
        commfit_assert(labels[parent * L + l] == v, "fattree", "parent label digit");
        for (std::int64_t j = 0; j < parallel[l]; ++j) {
          const auto cable = static_cast<std::int32_t>(cable_child.size());
          cable_child.push_back(static_cast<std::int32_t>(g));
          cable_parent.push_back(static_cast<std::int32_t>(parent));
          const std::int64_t cport = labels[g * L + l] + j * down[l];
          const std::int64_t pport = v + j * up[l];
          child_port[child_base[l + 1] + (parent - level_begin[l + 1]) * down[l] * parallel[l] + cport] = cable;
          parent_port[parent_base[l] + (g - level_begin[l]) * up[l] * parallel[l] + pport] = cable;
        }
      }
    }
  }
  commfit_assert(std::find(child_port.begin(), child_port.end(), -1) == child_port.end() &&
                     std::find(parent_port.begin(), parent_port.end(), -1) == parent_port.end(),
                 "fattree", "a port without a cable");
}

int FatTree::level_of(std::int64_t g) const {
  return static_cast<int>(std::upper_bound(level_begin.begin(), level_begin.end(), g) - level_begin.begin()) - 1;
}

std::int64_t FatTree::simgrid_id(std::int64_t g) const {
  return g < hosts() ? g : 3 * hosts() - 1 - g;   // switches count down from 2N - 1
}

std::int64_t FatTree::parent_cable(std::int64_t g, std::int64_t port) const {
  const int l = level_of(g);
  return parent_port[parent_base[l] + (g - level_begin[l]) * up[l] * parallel[l] + port];
}

std::int64_t FatTree::child_ports(std::int64_t g) const {
  const int l = level_of(g);
  return l == 0 ? 0 : down[l - 1] * parallel[l - 1];
}

std::int64_t FatTree::child_cable(std::int64_t g, std::int64_t port) const {
  const int l = level_of(g);
  return child_port[child_base[l] + (g - level_begin[l]) * child_ports(g) + port];
}

void FatTree::route(std::int64_t a, std::int64_t b, std::vector<Link>& links) const {
  const int L = levels();
  // Up: until b is in the current switch's subtree (its label agrees with b's on digits >= level).
  auto in_subtree = [&](std::int64_t g) {
    const int l = level_of(g);
    if (l == 0) return false;
    for (int j = l; j < L; ++j)
      if (label(g, j) != label(b, j)) return false;
    return true;
  };
  std::int64_t cur = a;
  while (!in_subtree(cur)) {
    const int l = level_of(cur);
    std::int64_t d = b;   // destination position, as in d-mod-k
    for (int i = 0; i < l; ++i) d /= up[i];   // (sic: not up[i] * parallel[i]) as in 3.32
    d %= up[l] * parallel[l];
    const std::int64_t cable = parent_cable(cur, d);
    links.push_back(Link{2 * cable});
    cur = cable_parent[cable];
  }
  // Down: SimGrid's loop, kept literally: the port index i runs on after a step down, against
  // the new node's ports and digit.
  while (cur != b) {
    const std::int64_t before = cur;
    const int l = level_of(cur);
    const std::int64_t d = a % parallel[l - 1];
    for (std::int64_t i = d * down[l - 1]; i < child_ports(cur); ++i) {
      const int cl = level_of(cur);
      if (i % down[cl - 1] == label(b, cl - 1)) {
        const std::int64_t cable = child_cable(cur, i);
        links.push_back(Link{2 * cable + 1});
        cur = cable_child[cable];
      }
    }
    commfit_assert(cur != before, "fattree", "no progress going down");
  }
}

std::string FatTree::link_name(Link id) const {
  const std::int64_t link = id.value(), cable = link / 2;
  return "link_from_" + std::to_string(simgrid_id(cable_child[cable])) + "_" +
         std::to_string(simgrid_id(cable_parent[cable])) + "_" + std::to_string(cable) +
         (link % 2 == 0 ? "_UP" : "_DOWN");
}

}  // namespace commfit::detail
