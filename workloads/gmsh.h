// The vertex graph of a gmsh mesh (.msh, ASCII: format 4.1, the default of Debian's gmsh 4.8, and
// 2.x), for commfit extract's mesh halo exchange. Only the elements of the highest dimension in
// the file are used (triangles and quadrangles of a 2D mesh, tetrahedra, hexahedra, ... of a 3D
// one): they carry the unknowns; boundary lines and points are tags on their faces. Two vertices
// are adjacent when they share one of those elements (every node of a high-order element counts).
// Vertices are the nodes those elements use, numbered 0 .. n-1 in increasing node-tag order (the
// order of a partition vector file for a mesh).
#pragma once

#include "workloads/halo.h"

#include <string>
#include <string_view>

namespace commfit {

struct MeshGraph {
  Pattern graph;                 // symmetric, no diagonal
  int dimension = 0;             // of the elements used
  std::int64_t elements = 0;     // elements of that dimension
  std::int64_t file_nodes = 0;   // nodes in $Nodes
  std::string version;           // "4.1", "2.2", ...
};

// Throws InputError (FILE: line N: problem) for binary or unsupported versions, malformed or
// truncated sections, unknown element types, undefined or repeated node tags, and meshes without
// elements of dimension 1 to 3 or over the size limits of halo.h.
MeshGraph parse_msh(std::string_view text, const std::string& file);

}  // namespace commfit
