#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // The test suite verifies every schedule a pass returns (--verify-each; planner/pipeline.h,
  // verify_each_by_default), in this process and in the commfit processes its CLI tests start.
  setenv("COMMFIT_VERIFY_EACH", "1", 0);
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
