// Writes the global ids of a partitioned gmsh mesh for bench/smpi/smpi_discovery (docs/PERFORMANCE.md
// "Finding owners from global ids"): the mesh's vertex graph (workloads/gmsh.h) partitioned by
// METIS exactly as `commfit extract MESH --parts PARTS --seed SEED` partitions it; the vertex
// numbers are the global ids. Part k owns its vertices and needs its halo: every vertex of another
// part adjacent to one of its own (the values an SpMV or a halo exchange reads), both ascending.
//
//   bench_smpi_mesh_ids MESH.msh PARTS OUT.ids [SEED]     (SEED: 1, extract's default)
//
// OUT.ids, little-endian int64 words after an 8-byte tag, read by smpi_discovery's read_part():
//   "cfids001" | parts | vertices | offsets[2 * parts + 1] | ids...
// part k owns ids[offsets[2k] .. offsets[2k+1]) and needs ids[offsets[2k+1] .. offsets[2k+2]).
// Prints one summary line: vertices, parts, the halo's size (sum and largest part) and the most
// neighbours a part has.
#include "ir/matrix_io.h"
#include "workloads/gmsh.h"
#include "workloads/partition.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

using namespace commfit;

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: bench_smpi_mesh_ids MESH.msh PARTS OUT.ids [SEED]\n");
    return 2;
  }
  try {
    const std::string mesh_path = argv[1];
    const auto parts = static_cast<std::int32_t>(std::atoi(argv[2]));
    const std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
    MeshGraph mesh = parse_msh(read_text_file(mesh_path), mesh_path);
    const Pattern& g = mesh.graph;
    if (parts < 1 || parts > g.n) throw std::runtime_error("PARTS must be in 1 .. " + std::to_string(g.n));
    const std::vector<std::int32_t> part = partition_metis(g, parts, seed);

    // Owned: by part, ascending. Needed: each part's halo, ascending, without repeats.
    std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(parts)), needed(owned.size());
    for (std::int64_t v = 0; v < g.n; ++v) owned[static_cast<std::size_t>(part[static_cast<std::size_t>(v)])].push_back(v);
    for (std::int64_t u = 0; u < g.n; ++u) {
      const std::int32_t pu = part[static_cast<std::size_t>(u)];
      for (std::int64_t e = g.offsets[static_cast<std::size_t>(u)]; e < g.offsets[static_cast<std::size_t>(u) + 1]; ++e) {
        const std::int32_t v = g.cols[static_cast<std::size_t>(e)];
        if (part[static_cast<std::size_t>(v)] != pu) needed[static_cast<std::size_t>(pu)].push_back(v);
      }
    }
    std::int64_t halo = 0, largest = 0;
    int neighbours = 0;
    for (std::size_t k = 0; k < needed.size(); ++k) {
      auto& n = needed[k];
      std::sort(n.begin(), n.end());
      n.erase(std::unique(n.begin(), n.end()), n.end());
      halo += static_cast<std::int64_t>(n.size());
      largest = std::max(largest, static_cast<std::int64_t>(n.size()));
      std::vector<std::int32_t> owners;
      for (std::int64_t v : n) owners.push_back(part[static_cast<std::size_t>(v)]);
      std::sort(owners.begin(), owners.end());
      neighbours = std::max(neighbours, static_cast<int>(std::unique(owners.begin(), owners.end()) - owners.begin()));
    }

    std::vector<std::int64_t> words{parts, g.n};
    std::int64_t at = 0;
    words.push_back(at);
    for (std::size_t k = 0; k < owned.size(); ++k) {
      words.push_back(at += static_cast<std::int64_t>(owned[k].size()));
      words.push_back(at += static_cast<std::int64_t>(needed[k].size()));
    }
    for (std::size_t k = 0; k < owned.size(); ++k) {
      words.insert(words.end(), owned[k].begin(), owned[k].end());
      words.insert(words.end(), needed[k].begin(), needed[k].end());
    }
    std::ofstream out(argv[3], std::ios::binary);
    out.write("cfids001", 8);
    out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * sizeof(std::int64_t)));
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[3]);
    std::printf("%s: %lld vertices, %d parts (METIS k-way, seed %llu): %lld needed ids in all, at most %lld on one part, at most %d neighbours -> %s\n",
                mesh_path.c_str(), static_cast<long long>(g.n), parts, static_cast<unsigned long long>(seed), static_cast<long long>(halo),
                static_cast<long long>(largest), neighbours, argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_smpi_mesh_ids: %s\n", e.what());
    return 1;
  }
  return 0;
}
