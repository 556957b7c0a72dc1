// libFuzzer target: the gmsh .msh reader of commfit extract accepts or throws InputError, nothing
// else; an accepted mesh's vertex graph is symmetric without a diagonal.
#include "ir/error.h"
#include "workloads/gmsh.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const commfit::MeshGraph mesh = commfit::parse_msh(text, "fuzz.msh");
    const commfit::Pattern sym = commfit::symmetric_graph(mesh.graph);
    if (sym.offsets != mesh.graph.offsets || sym.cols != mesh.graph.cols) std::abort();
  } catch (const commfit::InputError&) {
  }
  return 0;
}
