// The PMPI interposer's per-call view of a rank's counts (runtime/pmpi_signature.h): recomputed
// exactly when the counts change, the size hash telling apart what the structure hash must not.
#include "runtime/pmpi_signature.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <vector>

using commfit::pmpi::CountView;

TEST_CASE("pmpi count view: recomputes only when the counts change") {
  for (int p : {2, 5, 31, 32, 33, 64, 100, 1024}) {
    std::vector<int> sc(static_cast<std::size_t>(p)), rc(sc.size());
    for (int j = 0; j < p; ++j) sc[j] = (j * 7) % 3 == 0 ? 0 : 10 + j, rc[j] = j % 4 == 1 ? 0 : 3 * j + 1;
    CountView v;
    CHECK(v.see(p, sc.data(), 4, rc.data(), 4));
    CHECK_FALSE(v.see(p, sc.data(), 4, rc.data(), 4));
    const std::uint64_t sizes = v.sizes(), structure = v.structure();
    CHECK(v.sendbytes()[p - 1] == std::int64_t{sc[p - 1]} * 4);
    CHECK(v.recvbytes()[p / 2] == std::int64_t{rc[p / 2]} * 4);
    // Another element size is other bytes: recomputed, other sizes, the same structure.
    CHECK(v.see(p, sc.data(), 8, rc.data(), 4));
    CHECK(v.sizes() != sizes);
    CHECK(v.structure() == structure);
    CHECK(v.sendbytes()[p - 1] == std::int64_t{sc[p - 1]} * 8);
    // Each single change of one count, at every position: a new sizes hash; the structure changes
    // exactly when a count turns zero or nonzero.
    std::set<std::uint64_t> seen{sizes};
    for (int j = 0; j < p; ++j)
      for (std::vector<int>* side : {&sc, &rc}) {
        int& c = (*side)[static_cast<std::size_t>(j)];
        const int was = c;
        for (int now : {was + 1, was == 0 ? 5 : 0}) {
          c = now;
          CHECK(v.see(p, sc.data(), 4, rc.data(), 4));
          CHECK(seen.insert(v.sizes()).second);
          CHECK((v.structure() == structure) == ((was > 0) == (now > 0)));
        }
        c = was;
      }
    CHECK(v.see(p, sc.data(), 4, rc.data(), 4));
    CHECK(v.sizes() == sizes);
    CHECK(v.structure() == structure);
  }
}

TEST_CASE("pmpi count view: the communicator size is part of the hashes") {
  const std::vector<int> zeros(64, 0);
  CountView a, b;
  a.see(32, zeros.data(), 1, zeros.data(), 1);
  b.see(64, zeros.data(), 1, zeros.data(), 1);
  CHECK(a.sizes() != b.sizes());
  CHECK(a.structure() != b.structure());
  CHECK(a.see(64, zeros.data(), 1, zeros.data(), 1));   // a size change is a change
  CHECK(a.sizes() == b.sizes());
}
