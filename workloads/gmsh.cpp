#include "workloads/gmsh.h"

#include "workloads/text_lines.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace commfit {
namespace {

// Nodes and dimension of gmsh's element types 1 .. 31 (gmsh reference manual, "MSH file format").
struct ElementType {
  int nodes;
  int dim;
};
constexpr std::array<ElementType, 32> kTypes{{
    {0, -1}, {2, 1},  {3, 2},  {4, 2},  {4, 3},  {8, 3},  {6, 3},  {5, 3},  {3, 1},  {6, 2},  {9, 2},
    {10, 3}, {27, 3}, {18, 3}, {14, 3}, {1, 0},  {8, 2},  {20, 3}, {15, 3}, {13, 3}, {9, 2},  {10, 2},
    {12, 2}, {15, 2}, {15, 2}, {21, 2}, {4, 1},  {5, 1},  {6, 1},  {20, 3}, {35, 3}, {56, 3},
}};
constexpr std::int64_t kMaxTag = std::int64_t{1} << 62;
// Directed vertex pairs the element lists may produce (8 bytes each): 2 GiB.
constexpr std::int64_t kMaxPairs = std::int64_t{1} << 28;

struct Reader {
  explicit Reader(TokenReader r) : in(std::move(r)) {}
  TokenReader in;
  bool v4 = false;
  std::string version;
  std::vector<std::int64_t> node_tags;   // sorted once $Nodes is read
  bool have_nodes = false, have_elements = false;
  // Elements as (dimension, node tags), flattened.
  std::vector<int> elem_dim;
  std::vector<std::int64_t> elem_offset{0};
  std::vector<std::int64_t> elem_nodes;

  void end_of(std::string_view section) {
    const std::string want = "$End" + std::string(section);
    const std::string_view t = in.next();
    if (t != want) in.fail("expected " + want + ", got \"" + std::string(t.substr(0, 40)) + "\"");
  }
  // A count that the rest of the file can hold (each item takes at least `min_chars` characters).
  std::int64_t count(const char* what, std::int64_t min_chars) {
    return in.integer(what, 0, static_cast<std::int64_t>(in.size()) / min_chars + 1);
  }
  void skip_number(const char* what) {
    const std::string_view t = in.expect(what);
    if (t[0] == '$') in.fail(std::string("expected ") + what + ", got \"" + std::string(t.substr(0, 40)) + "\" (section cut short?)");
  }

  void read_format() {
    const std::string_view version = in.expect("the format version");
    this->version = std::string(version);
    if (version == "4.1") v4 = true;
    else if (version == "2.2" || version == "2.1" || version == "2.0") v4 = false;
    else in.fail("MSH version " + std::string(version.substr(0, 20)) + " is not supported (4.1 or 2.2 ASCII; gmsh -format msh41 or msh22)");
    const std::int64_t file_type = in.integer("the file type", 0, 1);
    if (file_type != 0) in.fail("binary .msh files are not supported: write ASCII (gmsh option -bin 0, Mesh.Binary = 0)");
    in.integer("the data size", 1, 16);
    end_of("MeshFormat");
  }

  void add_node(std::int64_t tag) { node_tags.push_back(tag); }

  void read_nodes() {
    if (have_nodes) in.fail("a second $Nodes section");
    if (v4) {
      const std::int64_t blocks = count("the number of node blocks", 8);
      const std::int64_t total = count("the number of nodes", 8);
      in.integer("the smallest node tag", 0, kMaxTag);
      in.integer("the largest node tag", 0, kMaxTag);
      node_tags.reserve(static_cast<std::size_t>(total));
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t dim = in.integer("the entity dimension", 0, 3);
        in.integer("the entity tag", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
        const std::int64_t parametric = in.integer("the parametric flag", 0, 1);
        const std::int64_t n = count("the number of nodes in the block", 8);
        if (static_cast<std::int64_t>(node_tags.size()) + n > total) in.fail("the node blocks hold more than the " + std::to_string(total) + " nodes announced");
        for (std::int64_t k = 0; k < n; ++k) add_node(in.integer("a node tag", 1, kMaxTag));
        const std::int64_t coords = 3 + (parametric ? dim : 0);
        for (std::int64_t k = 0; k < n * coords; ++k) skip_number("a node coordinate");
      }
      if (static_cast<std::int64_t>(node_tags.size()) != total)
        in.fail("the node blocks hold " + std::to_string(node_tags.size()) + " nodes, the header announces " + std::to_string(total));
    } else {
      const std::int64_t total = count("the number of nodes", 8);
      node_tags.reserve(static_cast<std::size_t>(total));
      for (std::int64_t k = 0; k < total; ++k) {
        add_node(in.integer("a node tag", 1, kMaxTag));
        for (int c = 0; c < 3; ++c) skip_number("a node coordinate");
      }
    }
    end_of("Nodes");
    std::sort(node_tags.begin(), node_tags.end());
    const auto dup = std::adjacent_find(node_tags.begin(), node_tags.end());
    if (dup != node_tags.end()) in.fail("node tag " + std::to_string(*dup) + " is defined twice in $Nodes");
    have_nodes = true;
  }

  ElementType element_type(std::int64_t type) {
    if (type < 1 || type >= static_cast<std::int64_t>(kTypes.size()))
      in.fail("element type " + std::to_string(type) + " is not supported (types 1 .. 31: lines, triangles, quadrangles, tetrahedra, hexahedra, prisms, pyramids, points)");
    return kTypes[type];
  }

  void add_element(const ElementType& t) {
    for (int k = 0; k < t.nodes; ++k) {
      const std::int64_t tag = in.integer("a node tag", 1, kMaxTag);
      if (!std::binary_search(node_tags.begin(), node_tags.end(), tag))
        in.fail("node " + std::to_string(tag) + " is not defined in $Nodes");
      elem_nodes.push_back(tag);
    }
    elem_dim.push_back(t.dim);
    elem_offset.push_back(static_cast<std::int64_t>(elem_nodes.size()));
  }

  void read_elements() {
    if (!have_nodes) in.fail("$Elements before $Nodes");
    if (have_elements) in.fail("a second $Elements section");
    if (v4) {
      const std::int64_t blocks = count("the number of element blocks", 8);
      const std::int64_t total = count("the number of elements", 4);
      in.integer("the smallest element tag", 0, kMaxTag);
      in.integer("the largest element tag", 0, kMaxTag);
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t dim = in.integer("the entity dimension", 0, 3);
        in.integer("the entity tag", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
        const ElementType t = element_type(in.integer("the element type", 0, 1 << 20));
        if (t.dim != dim) in.fail("an element type of dimension " + std::to_string(t.dim) + " in a block of dimension " + std::to_string(dim));
        const std::int64_t n = count("the number of elements in the block", 4);
        if (static_cast<std::int64_t>(elem_dim.size()) + n > total)
          in.fail("the element blocks hold more than the " + std::to_string(total) + " elements announced");
        for (std::int64_t k = 0; k < n; ++k) {
          in.integer("an element tag", 1, kMaxTag);
          add_element(t);
        }
      }
      if (static_cast<std::int64_t>(elem_dim.size()) != total)
        in.fail("the element blocks hold " + std::to_string(elem_dim.size()) + " elements, the header announces " + std::to_string(total));
    } else {
      const std::int64_t total = count("the number of elements", 4);
      for (std::int64_t k = 0; k < total; ++k) {
        in.integer("an element tag", 1, kMaxTag);
        const ElementType t = element_type(in.integer("the element type", 0, 1 << 20));
        const std::int64_t tags = in.integer("the number of element tags", 0, 64);
        for (std::int64_t g = 0; g < tags; ++g) skip_number("an element tag value");
        add_element(t);
      }
    }
    end_of("Elements");
    have_elements = true;
  }

  void skip_section(std::string_view name) {
    const std::string want = "$End" + std::string(name);
    const std::size_t start = in.line();
    for (;;) {
      const std::string_view t = in.next();
      if (t.empty()) throw InputError(in.file(), "line " + std::to_string(start), "section $" + std::string(name) + " has no " + want);
      if (t == want) return;
    }
  }
};

}  // namespace

MeshGraph parse_msh(std::string_view text, const std::string& file) {
  Reader r(TokenReader(text, file));
  const std::string_view first = r.in.next();
  if (first != "$MeshFormat") r.in.fail("not a gmsh mesh (expected $MeshFormat)");
  r.read_format();
  MeshGraph out;
  for (;;) {
    const std::string_view t = r.in.next();
    if (t.empty()) break;
    if (t[0] != '$' || t.size() < 2 || t.rfind("$End", 0) == 0)
      r.in.fail("expected a section such as $Nodes or $Elements, got \"" + std::string(t.substr(0, 40)) + "\"");
    const std::string_view name = t.substr(1);
    if (name == "MeshFormat") r.in.fail("a second $MeshFormat");
    else if (name == "Nodes") r.read_nodes();
    else if (name == "Elements") r.read_elements();
    else r.skip_section(name);
  }
  if (!r.have_elements) throw InputError(file, "line " + std::to_string(r.in.line()), "no $Elements section");
  const int top = r.elem_dim.empty() ? 0 : *std::max_element(r.elem_dim.begin(), r.elem_dim.end());
  if (top < 1) throw InputError(file, "line " + std::to_string(r.in.line()), "the mesh has no elements of dimension 1 to 3");

  // Vertices: the nodes of the top-dimension elements, in tag order.
  std::vector<std::int64_t> used;
  std::int64_t pairs_needed = 0;
  for (std::size_t e = 0; e < r.elem_dim.size(); ++e) {
    if (r.elem_dim[e] != top) continue;
    const std::int64_t m = r.elem_offset[e + 1] - r.elem_offset[e];
    pairs_needed += m * (m - 1);
    if (pairs_needed > kMaxPairs)
      throw InputError(file, "", "the mesh is too large for extract (over " + std::to_string(kMaxPairs) + " vertex pairs in its elements)");
    used.insert(used.end(), r.elem_nodes.begin() + r.elem_offset[e], r.elem_nodes.begin() + r.elem_offset[e + 1]);
    ++out.elements;
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  if (static_cast<std::int64_t>(used.size()) > kMaxVertices)
    throw InputError(file, "", "the mesh has " + std::to_string(used.size()) + " vertices, over the limit of " + std::to_string(kMaxVertices));
  auto index = [&](std::int64_t tag) { return static_cast<std::int32_t>(std::lower_bound(used.begin(), used.end(), tag) - used.begin()); };
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(static_cast<std::size_t>(pairs_needed));
  std::vector<std::int32_t> local;
  for (std::size_t e = 0; e < r.elem_dim.size(); ++e) {
    if (r.elem_dim[e] != top) continue;
    local.clear();
    for (std::int64_t k = r.elem_offset[e]; k < r.elem_offset[e + 1]; ++k) local.push_back(index(r.elem_nodes[k]));
    for (std::int32_t a : local)
      for (std::int32_t b : local)
        if (a != b) pairs.emplace_back(a, b);
  }
  out.graph = pattern_from_pairs(static_cast<std::int64_t>(used.size()), std::move(pairs));
  out.dimension = top;
  out.file_nodes = static_cast<std::int64_t>(r.node_tags.size());
  out.version = r.version;
  return out;
}

}  // namespace commfit
