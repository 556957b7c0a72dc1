// Writes the global ids of a partitioned gmsh mesh for bench/smpi/smpi_discovery (docs/PERFORMANCE.md
// "Finding owners from global ids"): the mesh's vertex graph (workloads/gmsh.h) partitioned by
// METIS exactly as `commfit extract MESH --parts PARTS --seed SEED` partitions it. Part k owns its
// vertices and needs its halo: every vertex of another part adjacent to one of its own (the values
// an SpMV or a halo exchange reads), both ascending. The global ids (--ids):
//   native   gmsh's vertex numbers (by mesh entity: a part's ids spread over the whole range);
//   by-part  the vertices renumbered part by part, as codes number them once a partition is applied
//            (PETSc's DMPlex distribution, Zoltan's migration): part 0's vertices get 0 .. n0 - 1,
//            part 1's the next n1 ids, and so on, in gmsh's order within a part.
//
//   bench_smpi_mesh_ids MESH.msh PARTS OUT.ids [SEED] [--ids native|by-part]
//   (SEED: 1, extract's default; --ids: native)
//
// OUT.ids, little-endian int64 words after an 8-byte tag, read by smpi_discovery's read_part():
//   "cfids001" | parts | vertices | offsets[2 * parts + 1] | ids...
// part k owns ids[offsets[2k] .. offsets[2k+1]) and needs ids[offsets[2k+1] .. offsets[2k+2]).
// Prints one summary line: vertices, parts, the halo's size (sum and largest part), the most
// neighbours a part has, and the directory ranks a part writes to under owner_lookup.cpp's two
// directories (other ranks holding some of its owned or needed ids; mean and most over the parts):
// `directory` hashes an id to splitmix64(id) mod PARTS, `directory-block` gives rank
// id / (max id / PARTS + 1) the id.
#include "ir/matrix_io.h"
#include "ir/random.h"
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

namespace {

// The directory ranks other than `self` that hold some of `ids` under `home`.
template <class Home>
int directory_ranks(const std::vector<std::int64_t>& owned, const std::vector<std::int64_t>& needed, std::int32_t self, std::int32_t parts,
                    Home home) {
  std::vector<char> seen(static_cast<std::size_t>(parts), 0);
  for (const auto* ids : {&owned, &needed})
    for (std::int64_t v : *ids) seen[static_cast<std::size_t>(home(v))] = 1;
  seen[static_cast<std::size_t>(self)] = 0;
  return static_cast<int>(std::count(seen.begin(), seen.end(), 1));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool by_part = false;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--ids") {
      if (args[i + 1] != "native" && args[i + 1] != "by-part") {
        std::fprintf(stderr, "bench_smpi_mesh_ids: --ids %s: expected native or by-part\n", args[i + 1].c_str());
        return 2;
      }
      by_part = args[i + 1] == "by-part";
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      break;
    }
  if (args.size() < 3 || args.size() > 4) {
    std::fprintf(stderr, "usage: bench_smpi_mesh_ids MESH.msh PARTS OUT.ids [SEED] [--ids native|by-part]\n");
    return 2;
  }
  try {
    const std::string mesh_path = args[0];
    const auto parts = static_cast<std::int32_t>(std::atoi(args[1].c_str()));
    const std::uint64_t seed = args.size() > 3 ? std::strtoull(args[3].c_str(), nullptr, 10) : 1;
    const std::string out_path = args[2];
    MeshGraph mesh = parse_msh(read_text_file(mesh_path), mesh_path);
    const Pattern& g = mesh.graph;
    if (parts < 1 || parts > g.n) throw std::runtime_error("PARTS must be in 1 .. " + std::to_string(g.n));
    const std::vector<std::int32_t> part = partition_metis(g, parts, seed);

    // The global id of each vertex: gmsh's number, or its place in the part-by-part order (parts in
    // turn, gmsh's order within a part).
    std::vector<std::int64_t> id(static_cast<std::size_t>(g.n));
    for (std::int64_t v = 0; v < g.n; ++v) id[static_cast<std::size_t>(v)] = v;
    if (by_part) {
      std::vector<std::int64_t> next(static_cast<std::size_t>(parts) + 1, 0);
      for (std::int64_t v = 0; v < g.n; ++v) ++next[static_cast<std::size_t>(part[static_cast<std::size_t>(v)]) + 1];
      for (std::size_t k = 1; k < next.size(); ++k) next[k] += next[k - 1];
      for (std::int64_t v = 0; v < g.n; ++v) id[static_cast<std::size_t>(v)] = next[static_cast<std::size_t>(part[static_cast<std::size_t>(v)])]++;
    }

    // Owned: by part, ascending. Needed: each part's halo, ascending, without repeats.
    std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(parts)), needed(owned.size());
    for (std::int64_t v = 0; v < g.n; ++v) owned[static_cast<std::size_t>(part[static_cast<std::size_t>(v)])].push_back(id[static_cast<std::size_t>(v)]);
    for (std::int64_t u = 0; u < g.n; ++u) {
      const std::int32_t pu = part[static_cast<std::size_t>(u)];
      for (std::int64_t e = g.offsets[static_cast<std::size_t>(u)]; e < g.offsets[static_cast<std::size_t>(u) + 1]; ++e) {
        const std::int32_t v = g.cols[static_cast<std::size_t>(e)];
        if (part[static_cast<std::size_t>(v)] != pu) needed[static_cast<std::size_t>(pu)].push_back(id[static_cast<std::size_t>(v)]);
      }
    }
    std::vector<std::int32_t> part_of_id(static_cast<std::size_t>(g.n));
    for (std::int64_t v = 0; v < g.n; ++v) part_of_id[static_cast<std::size_t>(id[static_cast<std::size_t>(v)])] = part[static_cast<std::size_t>(v)];
    const std::int64_t block = (g.n - 1) / parts + 1;   // owner_lookup.cpp's directory-block, max id g.n - 1
    std::int64_t halo = 0, largest = 0, hashed_sum = 0, block_sum = 0;
    int neighbours = 0, hashed_most = 0, block_most = 0;
    for (std::size_t k = 0; k < needed.size(); ++k) {
      auto& n = needed[k];
      std::sort(n.begin(), n.end());
      n.erase(std::unique(n.begin(), n.end()), n.end());
      halo += static_cast<std::int64_t>(n.size());
      largest = std::max(largest, static_cast<std::int64_t>(n.size()));
      const auto self = static_cast<std::int32_t>(k);
      const int h = directory_ranks(owned[k], n, self, parts, [&](std::int64_t v) {
        return static_cast<std::int32_t>(splitmix64(static_cast<std::uint64_t>(v)) % static_cast<std::uint64_t>(parts));
      });
      const int b = directory_ranks(owned[k], n, self, parts, [&](std::int64_t v) { return static_cast<std::int32_t>(std::min<std::int64_t>(v / block, parts - 1)); });
      hashed_sum += h, block_sum += b, hashed_most = std::max(hashed_most, h), block_most = std::max(block_most, b);
      std::vector<std::int32_t> owners;
      for (std::int64_t v : n) owners.push_back(part_of_id[static_cast<std::size_t>(v)]);
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
    std::ofstream out(out_path, std::ios::binary);
    out.write("cfids001", 8);
    out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * sizeof(std::int64_t)));
    if (!out) throw std::runtime_error("cannot write " + out_path);
    std::printf("%s: %lld vertices, %d parts (METIS k-way, seed %llu), %s ids: %lld needed ids in all, at most %lld on one part, at most %d "
                "neighbours; directory ranks a part writes to (mean, most): hashed %.1f, %d; blocks %.1f, %d -> %s\n",
                mesh_path.c_str(), static_cast<long long>(g.n), parts, static_cast<unsigned long long>(seed), by_part ? "by-part" : "native",
                static_cast<long long>(halo), static_cast<long long>(largest), neighbours, static_cast<double>(hashed_sum) / parts, hashed_most,
                static_cast<double>(block_sum) / parts, block_most, out_path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_smpi_mesh_ids: %s\n", e.what());
    return 1;
  }
  return 0;
}
