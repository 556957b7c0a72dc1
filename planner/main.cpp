// commfit: a scheduling compiler for irregular MPI communication.
#include "backends/interrupt.h"
#include "ir/error.h"
#include "planner/commands.h"
#include "planner/near_miss.h"
#include "planner/pass_table.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

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

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// The long option names a command accepts, with their dashes, and --help.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

// Every problem with the command line in the one-line form, on stderr; exit status 2.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "commfit: error: %s\n", message.c_str());
  return 2;
}

// What the parser left over (CLI11 collects it: extras are allowed so that this can name the
// first of them and suggest the option or command meant). `where` is the command, or null.
int leftover_error(const CLI::App& app, const CLI::App* where, const std::vector<std::string>& left) {
  using commfit::did_you_mean;
  const std::string& word = left.front();
  if (!where) {
    if (!word.empty() && word[0] == '-')
      return usage_error("unknown option \"" + word + "\"" + did_you_mean(word, option_names(app)) + " (see commfit --help)");
    return usage_error("unknown command \"" + word + "\"" + did_you_mean(word, command_names(app)) +
                       " (commands: " + [&] {
                         std::string list;
                         for (const std::string& n : command_names(app)) list += (list.empty() ? "" : ", ") + n;
                         return list;
                       }() + ")");
  }
  const std::string cmd = where->get_name();
  if (word.size() > 1 && word[0] == '-') {
    const std::string name = word.substr(0, word.find('='));
    return usage_error(cmd + ": unknown option \"" + name + "\"" + did_you_mean(name, option_names(*where)) + " (see commfit " + cmd +
                       " --help)");
  }
  return usage_error(cmd + ": unexpected argument \"" + word + "\" (see commfit " + cmd + " --help)");
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
  add_bound_command(app, run);
  add_gen_command(app, run);
  add_extract_command(app, run);
  add_report_command(app, run);
  app.require_subcommand(0, 1);
  refuse_negative_unsigned(app);
  // Usage lines say "commfit plan ...", not the path the binary was run by.
  app.name("commfit");
  app.allow_extras();
  for (CLI::App* sub : app.get_subcommands({})) sub->allow_extras();
  // `commfit help [COMMAND]`: the same as `commfit [COMMAND] --help`.
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    if (argc == 2) {
      std::cout << app.help();
      return 0;
    }
    for (CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == argv[2] && argc == 3) {
        std::cout << sub->help("commfit");
        return 0;
      }
    if (argc > 3) return usage_error("help takes one command (commfit help COMMAND)");
    return leftover_error(app, nullptr, {argv[2]});
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);   // --help, --version
    // The parser's own message, as one line, after the command it concerns.
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    while (!message.empty() && message.back() == ' ') message.pop_back();
    if (parsed.empty()) return usage_error(message + " (see commfit --help)");
    const std::string cmd = parsed.back()->get_name();
    return usage_error(cmd + ": " + message + " (see commfit " + cmd + " --help)");
  }
  if (!app.remaining().empty()) return leftover_error(app, nullptr, app.remaining());
  for (const CLI::App* sub : app.get_subcommands())
    if (!sub->remaining().empty()) return leftover_error(app, sub, sub->remaining());
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
