// examples/README.md shows what commfit prints: tools/update_example_outputs.sh
// --check runs every command of the generated blocks with the built commfit, in a scratch
// directory, and fails with a diff when a shown output differs.
#include <doctest/doctest.h>

#include "support/run_command.h"

#include <cstdlib>
#include <string>

TEST_CASE("examples_readme_shows_what_commfit_prints") {
  const auto scratch = commfit::test::scratch_dir("examples");
  const std::string log = (scratch / "check.log").string();
  const std::string cmd = std::string("bash '") + COMMFIT_SOURCE_DIR + "/tools/update_example_outputs.sh' --check '" +
                          COMMFIT_EXE + "' > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  INFO(commfit::test::slurp(log));
  CHECK(status == 0);
}
