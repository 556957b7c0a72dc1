// planner/near_miss.h: the "did you mean" of every unknown name.
#include "planner/near_miss.h"

#include <doctest/doctest.h>

using namespace commfit;

// planner/near_miss.h: slips are suggested, unrelated words are not.
TEST_CASE("near_miss_suggests_slips_and_nothing_else") {
  CHECK(edit_distance("plna", "plan") == 1);   // a transposition
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(nearest("stast", {"plan", "stats", "show"}) == "stats");
  CHECK(nearest("zzz", {"plan", "stats", "show"}).empty());
  CHECK(nearest("--tua", {"--tau", "--topology"}) == "--tau");
}
