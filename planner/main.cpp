// commfit: a scheduling compiler for irregular MPI communication.
#include "backends/interrupt.h"
#include "ir/error.h"
#include "planner/commands.h"
#include "planner/pass_table.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace {

// CLI11 reads "-5" into an unsigned option as 2^64 - 5 (strtoull wraps); every unsigned option
// (type name UINT) refuses a minus sign instead. "-0" is 0.
void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator non_negative(
      [](std::string& value) -> std::string {
        if (value.empty() || value[0] != '-' || value.find_first_not_of('0', 1) == std::string::npos) return {};
        return "negative value " + value + ": expected a non-negative integer";
      },
      "", "non-negative");
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name().rfind("UINT", 0) == 0) o->check(non_negative);
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_unsigned(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace commfit;
  install_interrupt_cleanup();
  CLI::App app{"commfit " COMMFIT_VERSION
               ": plans an irregular all-to-many exchange once, offline, into per-rank schedules\n"
               "that the commfit executor replays inside an MPI job as a drop-in for MPI_Alltoallv."};
  app.set_version_flag("--version", "commfit " COMMFIT_VERSION);
  bool list_passes = false;
  app.add_flag("--list-passes", list_passes, "List strategies, passes and decomposition algorithms");
  Runner run;
  add_plan_command(app, run);
  add_verify_command(app, run);
  add_stats_command(app, run);
  add_show_command(app, run);
  add_convert_command(app, run);
  add_compare_command(app, run);
  add_gen_command(app, run);
  add_extract_command(app, run);
  add_report_command(app, run);
  app.require_subcommand(0, 1);
  refuse_negative_unsigned(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (list_passes) {
    std::fputs(list_passes_text().c_str(), stdout);
    return 0;
  }
  if (!run) {
    std::cout << app.help();
    return 2;
  }
  try {
    return run();
  } catch (const InputError& e) {
    std::fprintf(stderr, "commfit: error: %s\n", e.what());
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "commfit: error: %s\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file-system failure the commands did not word themselves: still the one-line form and
    // exit 2 (what was done to which path, and why).
    std::string what = e.what();
    if (what.rfind("filesystem error: ", 0) == 0) what.erase(0, 18);
    if (const auto bracket = what.find(" ["); bracket != std::string::npos) what.erase(bracket);
    const std::string path = e.path1().empty() ? "" : e.path1().string() + ": ";
    std::fprintf(stderr, "commfit: error: %s%s\n", path.c_str(), what.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "commfit: error: out of memory\n");
    return 1;
  }
}
