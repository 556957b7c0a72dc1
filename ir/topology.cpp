// Topology: specs, the JSON form, and routing on hypercubes, meshes, tori and dragonflies (fat
// trees are in ir/topology_fattree.cpp). One file because the spec parser, the JSON reader and the
// routers share TopologyBuilder and the dimension conventions each router depends on.
#include "ir/topology.h"

#include "ir/error.h"
#include "ir/topology_fattree.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <unordered_map>

namespace commfit {

// Builds topologies for parse/from_json (a friend, so Topology keeps no public setters).
struct TopologyBuilder {
  static Topology make(Topology::Kind kind, std::vector<std::int64_t> dims,
                       std::vector<std::vector<std::int64_t>> fattree, std::int64_t per_node,
                       const std::string& what) {
    auto fail = [&](const std::string& m) { throw UsageError("topology \"" + what + "\": " + m); };
    Topology t;
    t.kind_ = kind;
    std::int64_t nodes = 0;
    switch (kind) {
      case Topology::Kind::full:
        break;
      case Topology::Kind::hypercube:
        if (dims.size() != 1 || dims[0] < 0 || dims[0] > 24)
          fail("the dimension must be an integer from 0 to 24");
        nodes = std::int64_t{1} << dims[0];
        break;
      case Topology::Kind::mesh:
      case Topology::Kind::torus: {
        if (dims.empty()) fail("give at least one dimension size");
        nodes = 1;
        t.stride_.clear();
        for (std::int64_t d : dims) {
          if (d < 1) fail("every dimension size must be at least 1");
          t.stride_.push_back(nodes);
          if (d > kMaxTopologyNodes / nodes) fail("more than " + std::to_string(kMaxTopologyNodes) + " nodes");
          nodes *= d;
        }
        break;
      }
      case Topology::Kind::fattree: {
        auto ft = std::make_shared<detail::FatTree>(fattree.at(0), fattree.at(1), fattree.at(2), what);
        nodes = ft->hosts();
        t.fattree_ = std::move(ft);
        break;
      }
      case Topology::Kind::dragonfly: {
        if (dims.size() != 7) fail("a dragonfly is G,b;C,k;B,g;N (SimGrid's DRAGONFLY topo_parameters)");
        for (std::int64_t d : dims)
          if (d < 1 || d > kMaxTopologyNodes) fail("every count must be an integer from 1 to " + std::to_string(kMaxTopologyNodes));
        const std::int64_t groups = dims[0], chassis = dims[2], blades = dims[4], per_blade = dims[6];
        // SimGrid's routing reaches group j through blade j of chassis 0 (and comes back through
        // blade i): with more groups than blades it would read past a chassis.
        if (groups > blades) fail("SimGrid's dragonfly routing needs at most as many groups (" + std::to_string(groups) + ") as blades per chassis (" + std::to_string(blades) + ")");
        nodes = 1;
        for (std::int64_t d : {groups, chassis, blades, per_blade}) {
          if (d > kMaxTopologyNodes / nodes) fail("more than " + std::to_string(kMaxTopologyNodes) + " nodes");
          nodes *= d;
        }
        const std::int64_t routers = groups * chassis * blades;
        const std::int64_t cables = nodes + routers * (blades - 1) / 2 + routers * (chassis - 1) / 2 + groups * (groups - 1) / 2;
        if (routers > kMaxFatTreeCables || chassis > kMaxFatTreeCables || blades > kMaxFatTreeCables || cables > kMaxFatTreeCables)
          fail("more than " + std::to_string(kMaxFatTreeCables) + " cables");
        break;
      }
    }
    t.dims_ = std::move(dims);
    if (per_node < 1) fail("ranks per node must be at least 1");
    if (per_node > kMaxTopologyRanks || (nodes > 0 && per_node > kMaxTopologyRanks / nodes))
      fail("more than " + std::to_string(kMaxTopologyRanks) + " ranks");
    t.nodes_ = static_cast<Rank>(nodes);
    t.per_node_ = static_cast<Rank>(per_node);
    return t;
  }
};

namespace {

using Kind = Topology::Kind;

// A non-negative decimal integer (digits only) below 2^40, or -1.
std::int64_t parse_count(std::string_view s) {
  if (s.empty() || s.size() > 12) return -1;
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s[0] == '+' || s[0] == '-') return -1;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t k = s.find(sep, start);
    out.push_back(s.substr(start, k == std::string_view::npos ? std::string_view::npos : k - start));
    if (k == std::string_view::npos) return out;
    start = k + 1;
  }
}

std::string join(const std::vector<std::int64_t>& v, const char* sep) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? sep : "") + std::to_string(v[k]);
  return s;
}

// The LIST of +map:LIST: node numbers, "n*k" for k ranks on node n. At most kMaxNodeMapRanks
// entries in all, counted before anything is allocated.
template <class Fail>
std::vector<Rank> parse_node_map(std::string_view list, Fail fail) {
  const std::vector<std::string_view> items = split(list, ',');
  std::int64_t total = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (std::string_view item : items) {
    const std::size_t star = item.find('*');
    const std::int64_t node = parse_count(item.substr(0, star));
    const std::int64_t k = star == std::string_view::npos ? 1 : parse_count(item.substr(star + 1));
    if (node < 0 || node >= kMaxTopologyRanks || k < 1)
      fail("\"" + std::string(item) + "\" in +map: is not a node number or n*k (k >= 1 ranks on node n)");
    if (k > kMaxNodeMapRanks - total) fail("+map: places more than " + std::to_string(kMaxNodeMapRanks) + " ranks");
    total += k;
    runs.emplace_back(node, k);
  }
  std::vector<Rank> map;
  map.reserve(static_cast<std::size_t>(total));
  for (const auto& [node, k] : runs) map.insert(map.end(), static_cast<std::size_t>(k), static_cast<Rank>(node));
  return map;
}

const char* const kSpecHelp =
    "expected full, hypercube:D, mesh:AxB..., torus:AxB..., fattree:L;m1,..;w1,..;p1,.. or "
    "dragonfly:G,b;C,k;B,g;N ('/' may replace ';'), optionally followed by +nodeN or +map:LIST";

// The JSON object form of a dragonfly: its dims in order.
constexpr const char* kDragonflyFields[] = {"groups", "blue_links", "chassis", "black_links", "blades", "green_links", "nodes_per_blade"};
bool is_dragonfly_field(const std::string& key) {
  return std::find(std::begin(kDragonflyFields), std::end(kDragonflyFields), key) != std::end(kDragonflyFields);
}

// A dragonfly's cables in SimGrid's creation order (its uniqueId): the local cables, router by
// router and node by node; the green ones, chassis by chassis, blade pairs (j < k) in order; the
// black ones, group by group, chassis pairs in order, blade by blade; the blue ones, group pairs
// in order. Link id = 2 cable + 1 for the cable's _DOWN direction.
struct Dragonfly {
  std::int64_t groups, blue, chassis, black, blades, green, per_blade;
  explicit Dragonfly(const std::vector<std::int64_t>& d)
      : groups(d[0]), blue(d[1]), chassis(d[2]), black(d[3]), blades(d[4]), green(d[5]), per_blade(d[6]) {}
  static std::int64_t pairs(std::int64_t n) { return n * (n - 1) / 2; }
  static std::int64_t pair(std::int64_t j, std::int64_t k, std::int64_t n) { return j * n - j * (j + 1) / 2 + (k - j - 1); }
  std::int64_t routers() const { return groups * chassis * blades; }
  std::int64_t router(std::int64_t g, std::int64_t c, std::int64_t b) const { return (g * chassis + c) * blades + b; }
  std::int64_t green_base() const { return routers() * per_blade; }
  std::int64_t black_base() const { return green_base() + groups * chassis * pairs(blades); }
  std::int64_t blue_base() const { return black_base() + groups * pairs(chassis) * blades; }
  std::int64_t cables() const { return blue_base() + pairs(groups); }
  // The directed link from index a to index b over the cable of pair (min, max): _UP when a < b.
  static std::int64_t directed(std::int64_t cable_of_pair, std::int64_t a, std::int64_t b) { return 2 * cable_of_pair + (a < b ? 0 : 1); }
  std::int64_t local(std::int64_t router_id, std::int64_t node, bool down) const { return 2 * (router_id * per_blade + node) + (down ? 1 : 0); }
  std::int64_t green_link(std::int64_t g, std::int64_t c, std::int64_t from, std::int64_t to) const {
    return directed(green_base() + (g * chassis + c) * pairs(blades) + pair(std::min(from, to), std::max(from, to), blades), from, to);
  }
  std::int64_t black_link(std::int64_t g, std::int64_t blade, std::int64_t from, std::int64_t to) const {
    return directed(black_base() + (g * pairs(chassis) + pair(std::min(from, to), std::max(from, to), chassis)) * blades + blade, from, to);
  }
  std::int64_t blue_link(std::int64_t from, std::int64_t to) const {
    return directed(blue_base() + pair(std::min(from, to), std::max(from, to), groups), from, to);
  }
};

}  // namespace

Topology::Topology() = default;

const char* Topology::kind_name(Kind k) {
  switch (k) {
    case Kind::full: return "full";
    case Kind::hypercube: return "hypercube";
    case Kind::mesh: return "mesh";
    case Kind::torus: return "torus";
    case Kind::fattree: return "fattree";
    case Kind::dragonfly: return "dragonfly";
  }
  return "?";
}

Topology Topology::parse(const std::string& spec) {
  auto fail = [&](const std::string& m) { throw UsageError("topology \"" + spec + "\": " + m); };
  std::string_view s = spec;
  std::int64_t per_node = 1;
  std::optional<std::vector<Rank>> map;
  if (const std::size_t plus = s.find('+'); plus != std::string_view::npos) {
    const std::string_view suffix = s.substr(plus + 1);
    if (suffix.substr(0, 4) == "map:") map = parse_node_map(suffix.substr(4), fail);
    else if (suffix.substr(0, 4) != "node" || (per_node = parse_count(suffix.substr(4))) < 1)
      fail("the suffix must be +nodeN with N >= 1 ranks per node, or +map:LIST");
    s = s.substr(0, plus);
  }
  if (map) {
    const Topology base = parse(std::string(s));
    try {
      return base.with_node_map(std::move(*map));
    } catch (const UsageError& e) {
      fail(std::string("+map: ") + e.what());
    }
  }
  const std::size_t colon = s.find(':');
  const std::string_view name = s.substr(0, colon);
  const std::string_view params = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);
  auto counts = [&](std::string_view list, const char* seps, const char* what) {
    std::vector<std::int64_t> out;
    std::vector<std::string_view> parts;
    // Dimension lists accept "x" (4x4) or "," (SimGrid's 4,4) as separator.
    const char sep = list.find(seps[0]) != std::string_view::npos ? seps[0] : seps[1];
    for (std::string_view p : split(list, sep)) {
      const std::int64_t v = parse_count(p);
      if (v < 0) fail(std::string("\"") + std::string(p) + "\" is not a valid " + what);
      out.push_back(v);
    }
    return out;
  };
  if (name == "full") {
    if (colon != std::string_view::npos) fail("full takes no parameters");
    return TopologyBuilder::make(Kind::full, {}, {}, per_node, spec);
  }
  if (colon == std::string_view::npos || params.empty()) {
    if (name == "hypercube" || name == "mesh" || name == "torus" || name == "fattree" || name == "dragonfly")
      fail(std::string(name) + " needs parameters after a colon");
    fail(kSpecHelp);
  }
  if (name == "hypercube") {
    const std::int64_t d = parse_count(params);
    if (d < 0) fail("the dimension must be an integer from 0 to 24");
    return TopologyBuilder::make(Kind::hypercube, {d}, {}, per_node, spec);
  }
  if (name == "mesh" || name == "torus")
    return TopologyBuilder::make(name == "mesh" ? Kind::mesh : Kind::torus,
                                 counts(params, "x,", "dimension size"), {}, per_node, spec);
  // Fat trees and dragonflies separate their groups by ';' (SimGrid's spelling) or '/' (the
  // same without quotes in a shell).
  const char group = params.find('/') != std::string_view::npos ? '/' : ';';
  if (name == "fattree") {
    const auto parts = split(params, group);
    if (parts.size() != 4)
      fail("a fat tree is L;m1,...,mL;w1,...,wL;p1,...,pL or L/m1,.../w1,.../p1,... (levels; down-links, up-links "
           "and parallel links per level), as SimGrid's FAT_TREE topo_parameters");
    const std::int64_t levels = parse_count(parts[0]);
    if (levels < 1 || levels > 16) fail("the number of levels must be an integer from 1 to 16");
    std::vector<std::vector<std::int64_t>> lists;
    const char* what[] = {"down-link count", "up-link count", "parallel-link count"};
    for (int k = 0; k < 3; ++k) {
      lists.push_back(counts(parts[k + 1], ",,", what[k]));
      if (static_cast<std::int64_t>(lists.back().size()) != levels)
        fail(std::string("the ") + what[k] + " list has " + std::to_string(lists.back().size()) +
             " entries for " + std::to_string(levels) + " levels");
    }
    return TopologyBuilder::make(Kind::fattree, {}, std::move(lists), per_node, spec);
  }
  if (name == "dragonfly") {
    const auto parts = split(params, group);
    const char* shape = "a dragonfly is G,b;C,k;B,g;N or G,b/C,k/B,g/N (groups and blue links between two groups; chassis per group "
                        "and black links; blades per chassis and green links; nodes per blade), as SimGrid's "
                        "DRAGONFLY topo_parameters";
    if (parts.size() != 4) fail(shape);
    std::vector<std::int64_t> d;
    for (std::size_t k = 0; k < 4; ++k) {
      const auto fields = split(parts[k], ',');
      if (fields.size() != (k < 3 ? 2u : 1u)) fail(shape);
      for (std::string_view f : fields) {
        const std::int64_t v = parse_count(f);
        if (v < 0) fail("\"" + std::string(f) + "\" is not a valid count");
        d.push_back(v);
      }
    }
    return TopologyBuilder::make(Kind::dragonfly, std::move(d), {}, per_node, spec);
  }
  throw UsageError("topology \"" + spec + "\": " + kSpecHelp);
}

Topology Topology::from_json(const nlohmann::json& j) {
  if (j.is_string()) return parse(j.get<std::string>());
  if (!j.is_object()) throw UsageError("expected a topology spec string or an object");
  auto fail = [](const std::string& place, const std::string& m) { throw UsageError(place + ": " + m); };
  if (j.contains("node_map")) {
    const nlohmann::json& v = j.at("node_map");
    if (!v.is_array() || v.empty() || v.size() > static_cast<std::size_t>(kMaxNodeMapRanks))
      fail("/node_map", "expected an array of 1 to " + std::to_string(kMaxNodeMapRanks) + " node numbers, one per rank");
    if (j.contains("ranks_per_node")) fail("/node_map", "give ranks_per_node or node_map, not both");
    std::vector<Rank> map(v.size());
    for (std::size_t r = 0; r < v.size(); ++r) {
      if (!v[r].is_number_integer() || v[r].get<std::int64_t>() < 0 || v[r].get<std::int64_t>() >= kMaxTopologyRanks)
        fail("/node_map/" + std::to_string(r), "expected a node number from 0 to " + std::to_string(kMaxTopologyRanks - 1));
      map[r] = static_cast<Rank>(v[r].get<std::int64_t>());
    }
    nlohmann::json rest = j;
    rest.erase("node_map");
    const Topology base = from_json(rest);
    try {
      return base.with_node_map(std::move(map));
    } catch (const UsageError& e) {
      fail("/node_map", e.what());
    }
  }
  for (const auto& [key, value] : j.items())
    if (key != "kind" && key != "dimension" && key != "dims" && key != "levels" && key != "down" &&
        key != "up" && key != "parallel" && key != "ranks_per_node" && !is_dragonfly_field(key))
      fail("/" + key, "unknown field");
  auto count = [&](const nlohmann::json& v, const std::string& place, std::int64_t lo, std::int64_t hi) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      fail(place, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v.get<std::int64_t>();
  };
  auto list = [&](const char* key, std::int64_t lo) {
    if (!j.contains(key)) fail(std::string("/") + key, "missing");
    const nlohmann::json& v = j.at(key);
    if (!v.is_array() || v.empty() || v.size() > 16) fail(std::string("/") + key, "expected an array of 1 to 16 integers");
    std::vector<std::int64_t> out;
    for (std::size_t k = 0; k < v.size(); ++k)
      out.push_back(count(v[k], std::string("/") + key + "/" + std::to_string(k), lo, kMaxTopologyNodes));
    return out;
  };
  if (!j.contains("kind") || !j.at("kind").is_string())
    fail("/kind", "expected one of \"full\", \"hypercube\", \"mesh\", \"torus\", \"fattree\", \"dragonfly\"");
  const std::string kind = j.at("kind").get<std::string>();
  const std::int64_t per_node = j.contains("ranks_per_node") ? count(j.at("ranks_per_node"), "/ranks_per_node", 1, kMaxTopologyRanks) : 1;
  auto only = [&](std::initializer_list<const char*> allowed) {
    for (const auto& [key, value] : j.items()) {
      bool ok = key == "kind" || key == "ranks_per_node";
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) fail("/" + key, "not a field of a " + kind + " topology");
    }
  };
  if (kind == "full") {
    only({});
    return TopologyBuilder::make(Kind::full, {}, {}, per_node, "full");
  }
  if (kind == "hypercube") {
    only({"dimension"});
    if (!j.contains("dimension")) fail("/dimension", "missing");
    return TopologyBuilder::make(Kind::hypercube, {count(j.at("dimension"), "/dimension", 0, 24)}, {}, per_node, "hypercube");
  }
  if (kind == "mesh" || kind == "torus") {
    only({"dims"});
    return TopologyBuilder::make(kind == "mesh" ? Kind::mesh : Kind::torus, list("dims", 1), {}, per_node, kind);
  }
  if (kind == "fattree") {
    only({"levels", "down", "up", "parallel"});
    std::vector<std::vector<std::int64_t>> lists{list("down", 1), list("up", 1), list("parallel", 1)};
    if (j.contains("levels") && count(j.at("levels"), "/levels", 1, 16) != static_cast<std::int64_t>(lists[0].size()))
      fail("/levels", "differs from the length of \"down\"");
    for (int k = 1; k < 3; ++k)
      if (lists[k].size() != lists[0].size())
        fail(k == 1 ? "/up" : "/parallel", "needs one entry per level (" + std::to_string(lists[0].size()) + ")");
    return TopologyBuilder::make(Kind::fattree, {}, std::move(lists), per_node, "fattree");
  }
  if (kind == "dragonfly") {
    only({kDragonflyFields[0], kDragonflyFields[1], kDragonflyFields[2], kDragonflyFields[3], kDragonflyFields[4],
          kDragonflyFields[5], kDragonflyFields[6]});
    std::vector<std::int64_t> d;
    for (const char* key : kDragonflyFields) {
      if (!j.contains(key)) fail(std::string("/") + key, "missing");
      d.push_back(count(j.at(key), std::string("/") + key, 1, kMaxTopologyNodes));
    }
    return TopologyBuilder::make(Kind::dragonfly, std::move(d), {}, per_node, "dragonfly");
  }
  throw UsageError("/kind: unknown kind \"" + kind + "\" (choose from full, hypercube, mesh, torus, fattree, dragonfly)");
}

nlohmann::ordered_json Topology::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = kind_name(kind_);
  switch (kind_) {
    case Kind::full: break;
    case Kind::hypercube: j["dimension"] = dims_[0]; break;
    case Kind::mesh:
    case Kind::torus: j["dims"] = dims_; break;
    case Kind::fattree:
      j["levels"] = fattree_->down.size();
      j["down"] = fattree_->down;
      j["up"] = fattree_->up;
      j["parallel"] = fattree_->parallel;
      break;
    case Kind::dragonfly:
      for (std::size_t k = 0; k < dims_.size(); ++k) j[kDragonflyFields[k]] = dims_[k];
      break;
  }
  if (map_) j["node_map"] = *map_;
  else if (per_node_ != 1) j["ranks_per_node"] = per_node_;
  return j;
}

std::string Topology::spec() const {
  std::string s = kind_name(kind_);
  switch (kind_) {
    case Kind::full: break;
    case Kind::hypercube: s += ":" + std::to_string(dims_[0]); break;
    case Kind::mesh:
    case Kind::torus: s += ":" + join(dims_, "x"); break;
    case Kind::fattree:
      s += ":" + std::to_string(fattree_->down.size()) + ";" + join(fattree_->down, ",") + ";" +
           join(fattree_->up, ",") + ";" + join(fattree_->parallel, ",");
      break;
    case Kind::dragonfly:
      s += ":" + std::to_string(dims_[0]) + "," + std::to_string(dims_[1]) + ";" + std::to_string(dims_[2]) + "," +
           std::to_string(dims_[3]) + ";" + std::to_string(dims_[4]) + "," + std::to_string(dims_[5]) + ";" + std::to_string(dims_[6]);
      break;
  }
  if (map_) {
    s += "+map:";
    for (std::size_t r = 0; r < map_->size();) {
      std::size_t k = r;
      while (k < map_->size() && (*map_)[k] == (*map_)[r]) ++k;
      s += (r ? "," : "") + std::to_string((*map_)[r]) + (k - r > 1 ? "*" + std::to_string(k - r) : "");
      r = k;
    }
  } else if (per_node_ != 1) {
    s += "+node" + std::to_string(per_node_);
  }
  return s;
}

namespace {
const std::vector<std::int64_t> kNone;
}

const std::vector<std::int64_t>& Topology::fattree_down() const { return fattree_ ? fattree_->down : kNone; }
const std::vector<std::int64_t>& Topology::fattree_up() const { return fattree_ ? fattree_->up : kNone; }
const std::vector<std::int64_t>& Topology::fattree_parallel() const { return fattree_ ? fattree_->parallel : kNone; }

Topology placement_machine(std::span<const Rank> first) {
  const Rank size = static_cast<Rank>(first.size());
  const Rank per = static_cast<Rank>(std::count(first.begin(), first.end(), 0));
  Rank nodes = 0, most = 0;
  std::vector<Rank> count(first.size(), 0);
  for (Rank f : first)
    if (f >= 0 && f < size) {
      nodes += count[static_cast<std::size_t>(f)] == 0;
      most = std::max(most, ++count[static_cast<std::size_t>(f)]);
    }
  if (nodes < 2 || most < 2) return Topology();
  bool blocks = per > 1;
  for (Rank r = 0; r < size && blocks; ++r) blocks = first[static_cast<std::size_t>(r)] == r / per * per;
  if (blocks) return Topology::parse("full+node" + std::to_string(per));
  return Topology().with_node_map(std::vector<Rank>(first.begin(), first.end()));
}

Topology Topology::with_node_map(std::vector<Rank> node_of) const {
  auto fail = [&](const std::string& m) { throw UsageError(m); };
  if (per_node_ != 1 || map_) fail("the machine " + spec() + " already places its ranks: give +nodeN or a node map, not both");
  if (node_of.empty()) fail("it places no rank");
  if (static_cast<std::int64_t>(node_of.size()) > kMaxNodeMapRanks)
    fail("it places more than " + std::to_string(kMaxNodeMapRanks) + " ranks");
  Topology t = *this;
  if (kind_ == Kind::full) {   // no host has a place: number the nodes by first appearance
    std::unordered_map<Rank, Rank> number;
    for (Rank& n : node_of) {
      if (n < 0) fail("a node number is negative");
      n = number.try_emplace(n, static_cast<Rank>(number.size())).first->second;
    }
  } else {
    for (std::size_t r = 0; r < node_of.size(); ++r)
      if (node_of[r] < 0 || node_of[r] >= nodes_)
        fail("rank " + std::to_string(r) + " is on node " + std::to_string(node_of[r]) + ", but " + spec() + " has nodes 0 to " +
             std::to_string(nodes_ - 1));
  }
  std::vector<Rank> count;
  for (Rank n : node_of) {
    if (static_cast<std::size_t>(n) >= count.size()) count.resize(static_cast<std::size_t>(n) + 1, 0);
    t.per_node_ = std::max(t.per_node_, ++count[static_cast<std::size_t>(n)]);
  }
  t.map_nodes_ = static_cast<Rank>(count.size());
  t.map_ = std::make_shared<const std::vector<Rank>>(std::move(node_of));
  return t;
}

void Topology::check_ranks(Rank p) const {
  if (map_ && p != ranks())
    throw UsageError("the node map places " + std::to_string(ranks()) + " ranks but the matrix has " + std::to_string(p));
  if (kind_ != Kind::full && p > ranks())
    throw UsageError("topology " + spec() + " has " + std::to_string(ranks()) + " ranks (" +
                     std::to_string(nodes_) + " nodes x " + std::to_string(per_node_) +
                     " per node) but the matrix has " + std::to_string(p));
}

void Topology::route(Rank a, Rank b, std::vector<Link>& links) const {
  links.clear();
  commfit_assert(a >= 0 && b >= 0 && ((kind_ == Kind::full && !map_) || (a < ranks() && b < ranks())),
                 "Topology::route", "rank out of range for " + spec());
  route_nodes(node_of(a), node_of(b), links);
}

void Topology::route_nodes(Node from, Node to, std::vector<Link>& links) const {
  links.clear();
  if (from == to) return;
  const std::int64_t u = from.value(), v = to.value();
  switch (kind_) {
    case Kind::full: return;
    case Kind::hypercube: return route_hypercube(u, v, links);
    case Kind::mesh:
    case Kind::torus: return route_grid(u, v, links);
    case Kind::fattree: return fattree_->route(u, v, links);
    case Kind::dragonfly: return route_dragonfly(u, v, links);
  }
}

std::vector<Link> Topology::route(Rank a, Rank b) const {
  std::vector<Link> links;
  route(a, b, links);
  return links;
}

// e-cube: flip the differing address bits from least to most significant. The link leaving
// node x across bit k is x * D + k.
void Topology::route_hypercube(std::int64_t u, std::int64_t v, std::vector<Link>& links) const {
  const std::int64_t D = dims_[0];
  std::int64_t x = u;
  for (std::int64_t k = 0; k < D; ++k)
    if (((x ^ v) >> k) & 1) {
      links.push_back(Link{x * D + k});
      x ^= std::int64_t{1} << k;
    }
}

// Dimension-order routing, lowest dimension first. The link leaving node x in dimension k is
// 2 (x n + k) in the + direction and 2 (x n + k) + 1 in the - direction (n dimensions). On a
// torus the direction is SimGrid 3.32 TorusZone's: + when the target coordinate t is in
// (s, s + size/2] or, wrapping, when s > size/2 and t <= (s + size/2) mod size (s = source
// coordinate); else -. Ties (even size, distance size/2) therefore go +, except from
// s = size/2 to t = 0, which goes -.
void Topology::route_grid(std::int64_t u, std::int64_t v, std::vector<Link>& links) const {
  const auto n = static_cast<std::int64_t>(dims_.size());
  std::int64_t x = u;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t size = dims_[k], stride = stride_[k];
    const std::int64_t s = (u / stride) % size, t = (v / stride) % size;
    if (s == t) continue;
    bool plus;
    if (kind_ == Kind::mesh) {
      plus = t > s;
    } else {
      plus = (t > s && t <= s + size / 2) || (s > size / 2 && (s + size / 2) % size >= t);
    }
    for (std::int64_t c = s; c != t;) {
      links.push_back(Link{2 * (x * n + k) + (plus ? 0 : 1)});
      const std::int64_t next = plus ? (c + 1) % size : (c + size - 1) % size;
      x += (next - c) * stride;
      c = next;
    }
  }
}

// SimGrid 3.32 DragonflyZone::get_local_route, minimal routing, step for step. Its quirk is kept:
// after a green hop the current router is taken to be blade t of chassis 0 of the target group,
// whichever chassis the hop was in, so a route inside a group from chassis c != 0 to chassis 0 on
// another blade has no black hop (SimGrid simulates that route, so the planner prices it).
void Topology::route_dragonfly(std::int64_t u, std::int64_t v, std::vector<Link>& links) const {
  const Dragonfly d(dims_);
  auto coords = [&](std::int64_t x) {
    const std::int64_t node = x % d.per_blade, blade = x / d.per_blade % d.blades;
    const std::int64_t chassis = x / (d.per_blade * d.blades) % d.chassis, group = x / (d.per_blade * d.blades * d.chassis);
    return std::array<std::int64_t, 4>{group, chassis, blade, node};
  };
  const auto s = coords(u), t = coords(v);
  links.push_back(Link{d.local(d.router(s[0], s[1], s[2]), s[3], false)});
  std::int64_t g = s[0], c = s[1], b = s[2];   // the current router, as SimGrid holds it
  if (d.router(s[0], s[1], s[2]) != d.router(t[0], t[1], t[2])) {
    if (t[0] != g) {
      if (b != t[0]) {   // to the blade of our chassis that leads to the target group
        links.push_back(Link{d.green_link(g, c, b, t[0])});
        b = t[0];
      }
      if (c != 0) {   // to chassis 0, whose blade t[0] holds the blue link
        links.push_back(Link{d.black_link(g, b, c, 0)});
        c = 0;
      }
      links.push_back(Link{d.blue_link(g, t[0])});
      g = t[0], c = 0, b = s[0];   // router s[0] of the target group (blade s[0] of chassis 0)
    }
    if (t[2] != b) {
      links.push_back(Link{d.green_link(g, c, b, t[2])});
      c = 0, b = t[2];   // SimGrid's quirk: chassis 0, whatever chassis the hop was in
    }
    if (t[1] != c) links.push_back(Link{d.black_link(g, b, c, t[1])});
  }
  links.push_back(Link{d.local(d.router(t[0], t[1], t[2]), t[3], true)});
}

std::int64_t Topology::link_count() const {
  switch (kind_) {
    case Kind::full: return 0;
    case Kind::hypercube: return static_cast<std::int64_t>(nodes_) * dims_[0];
    case Kind::mesh:
    case Kind::torus: return 2 * static_cast<std::int64_t>(nodes_) * static_cast<std::int64_t>(dims_.size());
    case Kind::fattree: return fattree_->link_count();
    case Kind::dragonfly: return 2 * Dragonfly(dims_).cables();
  }
  return 0;
}

double Topology::link_width(Link link) const {
  if (kind_ != Kind::dragonfly) return 1;
  const Dragonfly d(dims_);
  const std::int64_t cable = link.value() / 2;
  if (cable < d.green_base()) return 1;
  if (cable < d.black_base()) return static_cast<double>(d.green);
  if (cable < d.blue_base()) return static_cast<double>(d.black);
  return static_cast<double>(d.blue);
}

std::string Topology::link_name(Link id) const {
  const std::int64_t link = id.value();
  commfit_assert(link >= 0 && link < link_count(), "Topology::link_name", "link id out of range");
  switch (kind_) {
    case Kind::full: break;
    case Kind::hypercube: {
      const std::int64_t x = link / dims_[0], k = link % dims_[0];
      return std::to_string(x) + "->" + std::to_string(x ^ (std::int64_t{1} << k)) + " (bit " + std::to_string(k) + ")";
    }
    case Kind::mesh:
    case Kind::torus: {
      const auto n = static_cast<std::int64_t>(dims_.size());
      const std::int64_t x = link / 2 / n, k = link / 2 % n;
      const bool plus = link % 2 == 0;
      const std::int64_t c = (x / stride_[k]) % dims_[k], size = dims_[k];
      const std::int64_t next = plus ? (c + 1) % size : (c + size - 1) % size;
      const std::int64_t y = x + (next - c) * stride_[k];
      if (kind_ == Kind::mesh)
        return std::to_string(x) + "->" + std::to_string(y) + " (dim " + std::to_string(k) + (plus ? " +)" : " -)");
      // SimGrid names the cable from a node to its + neighbour; "-" travels the neighbour's cable down.
      return plus ? "link_from_" + std::to_string(x) + "_to_" + std::to_string(y) + "_UP"
                  : "link_from_" + std::to_string(y) + "_to_" + std::to_string(x) + "_DOWN";
    }
    case Kind::fattree: return fattree_->link_name(id);
    case Kind::dragonfly: {
      // SimGrid's names: kind, the cable's place, its creation number, the direction.
      const Dragonfly d(dims_);
      std::int64_t cable = link / 2;
      const std::string uid = "_" + std::to_string(cable), dir = link % 2 ? "_DOWN" : "_UP";
      auto unpair = [](std::int64_t index, std::int64_t n) {   // inverse of Dragonfly::pair
        std::int64_t j = 0;
        while (index >= n - 1 - j) index -= n - 1 - j++;
        return std::pair<std::int64_t, std::int64_t>{j, j + 1 + index};
      };
      if (cable < d.green_base())
        return "local_link_from_router_" + std::to_string(cable / d.per_blade) + "_to_node_" + std::to_string(cable % d.per_blade) + uid + dir;
      if (cable < d.black_base()) {
        const std::int64_t k = cable - d.green_base(), chassis = k / Dragonfly::pairs(d.blades);
        const auto [j, l] = unpair(k % Dragonfly::pairs(d.blades), d.blades);
        return "green_link_in_chassis_" + std::to_string(chassis % d.chassis) + "_between_routers_" + std::to_string(j) + "_and_" + std::to_string(l) + uid + dir;
      }
      if (cable < d.blue_base()) {
        const std::int64_t k = cable - d.black_base(), blade = k % d.blades, rest = k / d.blades;
        const std::int64_t group = rest / Dragonfly::pairs(d.chassis);
        const auto [j, l] = unpair(rest % Dragonfly::pairs(d.chassis), d.chassis);
        return "black_link_in_group_" + std::to_string(group) + "_between_chassis_" + std::to_string(j) + "_and_" + std::to_string(l) +
               "_blade_" + std::to_string(blade) + uid + dir;
      }
      const auto [i, j] = unpair(cable - d.blue_base(), d.groups);
      return "blue_link_between_group_" + std::to_string(i) + "_and_" + std::to_string(j) + "_routers_" +
             std::to_string(i * d.blades * d.chassis + j) + "_and_" + std::to_string(j * d.blades * d.chassis + i) + uid + dir;
    }
  }
  return "?";
}

}  // namespace commfit
