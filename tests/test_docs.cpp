// The docs as a reference, checked against the tree and the built tool:
// - the repository carries its own contract: no doc, script, schema or source comment cites a file
//   outside the repository (the design card, the style guide, the SMPI notes, the source papers'
//   text files), and every doc that a doc names or links exists;
// - docs describe the present: no doc, script or source comment names a numbered work period
//   ("session 12"), an issue ("issue 19", "#16", "the issue") or a commit hash (history lives in git);
// - every command the docs show a user exists: `commfit SUB` (and `commfit gen KIND`) answers
//   --help, every script or source they name is in the tree, every build/... program is a target;
// - the man page's ENVIRONMENT names every COMMFIT_ variable the code reads.
// Reads every tracked file under COMMFIT_SOURCE_DIR (`git ls-files`; a walk of the tree, skipping
// build directories, where git is not available) and fails naming file and line.
#include <doctest/doctest.h>

#include "support/run_command.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using commfit::test::source_dir;

using commfit::test::slurp;

bool is_markdown(const std::string& rel) { return fs::path(rel).extension() == ".md"; }

// Docs, sources, scripts, build files and schemas; not fixtures or goldens (data, not prose).
bool is_scanned(const std::string& rel) {
  if (rel.rfind("tests/golden/", 0) == 0 || rel.rfind("tests/fixtures/", 0) == 0) return false;
  if (rel == "tests/test_docs.cpp") return false;   // names the forbidden citations on purpose
  const fs::path p(rel);
  static const std::set<std::string> exts = {".md", ".h", ".hpp", ".cpp", ".c", ".f90", ".py",
                                             ".sh", ".cmake", ".in", ".geo"};
  if (exts.count(p.extension().string())) return true;
  if (p.filename() == "CMakeLists.txt") return true;
  if (rel.rfind("schemas/", 0) == 0 && p.extension() == ".json") return true;
  return rel == ".ci/run";
}

std::vector<std::string> tracked_files() {
  std::vector<std::string> files;
  const std::string cmd = "git -C '" + source_dir().string() + "' ls-files 2>/dev/null";
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::string line;
    while (std::fgets(buf, sizeof buf, pipe)) {
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        files.push_back(line);
        line.clear();
      }
    }
    if (::pclose(pipe) != 0) files.clear();
  }
  if (!files.empty()) return files;
  // No git: walk the tree, skipping hidden directories and build trees (they hold a CMakeCache.txt).
  for (auto it = fs::recursive_directory_iterator(source_dir()); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory()) {
      const std::string name = it->path().filename().string();
      if ((name.size() > 1 && name[0] == '.' && name != ".ci") || fs::exists(it->path() / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    files.push_back(fs::relative(it->path(), source_dir()).string());
  }
  return files;
}

// Where `target` (relative to the file `rel`'s folder) lands, relative to the root; empty when
// it leaves the repository.
std::string resolve(const std::string& rel, const std::string& target) {
  const fs::path full = (source_dir() / fs::path(rel).parent_path() / target).lexically_normal();
  const fs::path inside = full.lexically_relative(source_dir());
  if (inside.empty() || *inside.begin() == "..") return {};
  return inside.generic_string();
}

bool exists_in_repo(const std::string& rel_to_root) {
  return !rel_to_root.empty() && fs::exists(source_dir() / rel_to_root);
}

struct Problem {
  std::string where, what;
};

void check_line(const std::string& rel, int line_no, const std::string& line, std::vector<Problem>& problems) {
  const std::string where = rel + ":" + std::to_string(line_no);
  auto each = [&](const std::regex& re, auto&& fn) {
    for (std::sregex_iterator it(line.begin(), line.end(), re), end; it != end; ++it) fn(*it);
  };

  // 1. Files outside the repository: the design card, the style guide, the SMPI notes, the shared
  //    folder and the papers' text files (a bare "seeds/"; "$seeds/" and "build-fuzz/seeds/" are
  //    the fuzzer's own folders).
  static const std::regex outside(R"(DESIGN\.md|STYLE\.md|SMPI-NOTES|shared/|(?:^|[^A-Za-z0-9_$/.-])seeds/)");
  each(outside, [&](const std::smatch& m) {
    problems.push_back({where, "cites `" + m.str() + "`, which is not in the repository (use docs/FORMAT.md, docs/REFERENCES.md, docs/SMPI.md)"});
  });

  // 2. Doc names: "docs/X.md", "examples/README.md" and a bare "X.md" must name an existing file
  //    (a bare name: in docs/, at the root, or beside the file that names it).
  static const std::regex doc_path(R"((?:^|[^A-Za-z0-9_./-])((?:docs|examples|tests|tools|bench|schemas)/[A-Za-z0-9_./-]*\.md))");
  each(doc_path, [&](const std::smatch& m) {
    if (!exists_in_repo(m.str(1))) problems.push_back({where, "names " + m.str(1) + ", which does not exist"});
  });
  static const std::regex bare_doc(R"((?:^|[^A-Za-z0-9_./-])([A-Z][A-Z0-9_-]*\.md)\b)");
  each(bare_doc, [&](const std::smatch& m) {
    const std::string name = m.str(1);
    if (name == "DESIGN.md" || name == "STYLE.md") return;   // reported by check 1
    const std::string beside = resolve(rel, name);
    if (!exists_in_repo("docs/" + name) && !exists_in_repo(name) && !exists_in_repo(beside))
      problems.push_back({where, "names " + name + ", which is neither in docs/ nor at the root nor beside " + rel});
  });

  if (!is_markdown(rel)) return;
  // 3. Markdown links to files must land on an existing file inside the repository.
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  each(link, [&](const std::smatch& m) {
    std::string target = m.str(1);
    if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0 || target[0] == '#') return;
    if (auto hash = target.find('#'); hash != std::string::npos) target.erase(hash);
    const std::string to = resolve(rel, target);
    if (to.empty()) problems.push_back({where, "links " + target + ", which is outside the repository"});
    else if (!exists_in_repo(to)) problems.push_back({where, "links " + target + ", which does not exist"});
  });
  // 4. Relative paths climbing out of a folder ("../x") must stay inside the repository.
  static const std::regex up(R"((?:\.\./)+[A-Za-z0-9_./-]*)");
  each(up, [&](const std::smatch& m) {
    const std::string to = resolve(rel, m.str());
    if (to.empty()) problems.push_back({where, "names " + m.str() + ", which is outside the repository"});
    else if (!exists_in_repo(to)) problems.push_back({where, "names " + m.str() + ", which does not exist"});
  });
}

// The prose of a line: all of it in docs and scripts' comments, the comment of a source line.
std::string prose_of(const std::string& rel, const std::string& line, bool& in_block_comment) {
  const std::string ext = fs::path(rel).extension().string();
  if (ext == ".md") return line;
  if (ext == ".h" || ext == ".hpp" || ext == ".cpp" || ext == ".c") {
    std::string out;
    std::size_t k = 0;
    while (k < line.size()) {
      if (in_block_comment) {
        const auto end = line.find("*/", k);
        out += line.substr(k, end == std::string::npos ? std::string::npos : end - k);
        if (end == std::string::npos) return out;
        in_block_comment = false;
        k = end + 2;
        continue;
      }
      const auto slash = line.find("//", k), star = line.find("/*", k);
      if (slash == std::string::npos && star == std::string::npos) break;
      if (slash < star) return out + line.substr(slash);
      in_block_comment = true;
      k = star + 2;
    }
    return out;
  }
  if (ext == ".f90" || ext == ".F90") {
    const auto bang = line.find('!');
    return bang == std::string::npos ? std::string() : line.substr(bang);
  }
  // Scripts and CMake: the comment after a '#' that starts a word.
  for (std::size_t k = 0; k < line.size(); ++k)
    if (line[k] == '#' && (k == 0 || std::isspace(static_cast<unsigned char>(line[k - 1])))) return line.substr(k);
  return {};
}

// A word of 7 to 40 lowercase hex digits with both a digit and a letter, not part of a longer word,
// a number ("2e-05"), a fingerprint ("sha256:...", "h64:...") or a hex constant ("0x...").
bool has_commit_hash(const std::string& text) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t k = 0; k < text.size();) {
    if (!word(text[k])) {
      ++k;
      continue;
    }
    std::size_t e = k;
    while (e < text.size() && word(text[e])) ++e;
    const std::string w = text.substr(k, e - k);
    const char before = k > 0 ? text[k - 1] : ' ';
    bool hex = w.size() >= 7 && w.size() <= 40, digit = false, letter = false;
    for (char c : w) {
      if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
      else if (c >= 'a' && c <= 'f') letter = true;
      else hex = false;
    }
    if (hex && digit && letter && before != '.' && before != ':' && before != '/' && before != '-' &&
        !(e < text.size() && (text[e] == '-' || text[e] == '.')))
      return true;
    k = e;
  }
  return false;
}

void check_history(const std::string& rel, int line_no, const std::string& prose, std::vector<Problem>& problems) {
  if (prose.empty()) return;
  const std::string where = rel + ":" + std::to_string(line_no);
  static const std::regex period(
      R"(\b[Ss]essions? [0-9]|\b[Ii]ssues? #?[0-9]|(^|[\s(\[])#[0-9]{1,4}\b|\bsitting\b|\b([Tt]he|[Tt]his|[Tt]hat) issue\b)");
  std::smatch m;
  if (std::regex_search(prose, m, period))
    problems.push_back({where, "names a work period or an issue (`" + m.str() + "`): say what is, history lives in git and CHANGES.md"});
  // An outside project's revision may be pinned where the docs name its repository.
  if (prose.find("github.com") == std::string::npos && has_commit_hash(prose))
    problems.push_back({where, "names a commit hash: say what is, history lives in git"});
}

// Docs, README, examples, bench, tools and the sources: everything the tree's readers read.
bool is_history_scanned(const std::string& rel) {
  if (rel.rfind("tests/golden/", 0) == 0 || rel.rfind("tests/fixtures/", 0) == 0) return false;
  if (rel == "tests/test_docs.cpp" || rel == "CHANGES.md") return false;
  const std::string ext = fs::path(rel).extension().string();
  static const std::set<std::string> exts = {".md", ".h", ".hpp", ".cpp", ".c", ".f90", ".F90", ".py",
                                             ".sh", ".cmake", ".in", ".txt"};
  return exts.count(ext) > 0 || rel == ".ci/run";
}

std::string run_output(const std::string& cmd, int* status) {
  std::string out;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    *status = ::pclose(pipe);
  } else {
    *status = -1;
  }
  return out;
}

}  // namespace

TEST_CASE("docs_cite_nothing_outside_the_repository") {
  std::vector<Problem> problems;
  int scanned = 0;
  for (const std::string& rel : tracked_files()) {
    if (!is_scanned(rel) || !fs::is_regular_file(source_dir() / rel)) continue;
    ++scanned;
    std::istringstream in(slurp(source_dir() / rel));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) check_line(rel, n, line, problems);
  }
  CHECK(scanned > 100);   // the walk found the tree
  for (const Problem& p : problems) FAIL_CHECK(p.where << ": " << p.what);
}

TEST_CASE("docs_readme_links_the_guide_for_users_then_the_architecture_for_contributors") {
  const std::string readme = slurp(source_dir() / "README.md");
  const auto docs = readme.find("## Documentation");
  REQUIRE(docs != std::string::npos);
  const auto first = readme.find("docs/", docs);
  REQUIRE(first != std::string::npos);
  CHECK(readme.compare(first, 13, "docs/GUIDE.md") == 0);
  const auto second = readme.find("docs/", first + 1);
  REQUIRE(second != std::string::npos);
  CHECK(readme.compare(second, 20, "docs/ARCHITECTURE.md") == 0);
}

TEST_CASE("docs_name_no_work_period_issue_or_commit") {
  std::vector<Problem> problems;
  int scanned = 0;
  for (const std::string& rel : tracked_files()) {
    if (!is_history_scanned(rel) || !fs::is_regular_file(source_dir() / rel)) continue;
    ++scanned;
    std::istringstream in(slurp(source_dir() / rel));
    std::string line;
    bool in_block_comment = false;
    for (int n = 1; std::getline(in, line); ++n) check_history(rel, n, prose_of(rel, line, in_block_comment), problems);
  }
  CHECK(scanned > 100);
  for (const Problem& p : problems) FAIL_CHECK(p.where << ": " << p.what);
}

TEST_CASE("docs_history_check_tells_hashes_from_numbers") {
  CHECK(has_commit_hash("measured at main 12ef251"));
  CHECK(has_commit_hash("a9d4306's sweep"));
  CHECK_FALSE(has_commit_hash("estimate_s 1.1276800000000002e-05"));
  CHECK_FALSE(has_commit_hash("sha256:cf0d93b507055325d0150240092a04e140d2ea6ccf36251e918ff5d5643d797f"));
  CHECK_FALSE(has_commit_hash("seed 20240601, 1048576 bytes, deadbeef"));
  CHECK_FALSE(has_commit_hash("0x9e3779b97f4a7c15"));
  std::vector<Problem> problems;
  check_history("x.md", 1, "Session 3 measured it", problems);
  check_history("x.md", 2, "as issue 19 asked", problems);
  check_history("x.md", 3, "packaging (#16)", problems);
  check_history("x.md", 4, "stage 1 sends part k; fill=\"#888\"; ## 2. Plan it", problems);
  check_history("x.md", 5, "the bound the issue suggested", problems);
  check_history("x.md", 6, "issues of MPI libraries", problems);
  CHECK(problems.size() == 4);
}

// The commands the docs show a user: `commfit SUB` in code, the scripts and sources they name,
// and the programs under build/ they run.
TEST_CASE("docs_show_only_commands_that_exist") {
  std::set<std::string> subs, gen_kinds, programs;
  std::vector<Problem> problems;
  static const std::regex sub_re(R"((?:^|[\s`$(|;])commfit +([a-z][a-z-]*)(?: +([a-z][a-z-]*))?)");
  static const std::regex path_re(R"((?:^|[^A-Za-z0-9_./-])((?:tools|bench|examples|tests)/[A-Za-z0-9_./-]*\.(?:sh|py|cpp|c|f90|F90|geo|json|mtx))(?![A-Za-z0-9_]))");
  static const std::regex placeholder(R"([A-Z]{3,}\.)");   // tests/test_NAME.cpp
  static const std::regex build_re(R"((?:^|[\s`=(])\.?/?build/([A-Za-z0-9_./-]+)(?![-.{A-Za-z0-9_/]))");
  for (const std::string& rel : tracked_files()) {
    if (!(is_markdown(rel) && rel.rfind("tests/", 0) != 0)) continue;
    std::istringstream in(slurp(source_dir() / rel));
    std::string line;
    bool code = false;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.rfind("```", 0) == 0) {
        code = !code;
        continue;
      }
      // Code: a fenced block's lines (a console block's commands only), or `inline code` spans.
      std::vector<std::string> spans;
      if (code) {
        spans.push_back(line);
      } else {
        for (std::size_t a = line.find('`'); a != std::string::npos;) {
          const auto b = line.find('`', a + 1);
          if (b == std::string::npos) break;
          spans.push_back(line.substr(a + 1, b - a - 1));
          a = line.find('`', b + 1);
        }
      }
      const std::string where = rel + ":" + std::to_string(n);
      for (const std::string& span : spans) {
        for (std::sregex_iterator it(span.begin(), span.end(), sub_re), end; it != end; ++it) {
          subs.insert((*it)[1]);
          if ((*it)[1] == "gen" && (*it)[2].matched) gen_kinds.insert((*it)[2]);
        }
        for (std::sregex_iterator it(span.begin(), span.end(), path_re), end; it != end; ++it)
          if (!std::regex_search((*it)[1].str(), placeholder) && !exists_in_repo((*it)[1])) problems.push_back({where, "shows " + (*it)[1].str() + ", which is not in the tree"});
        for (std::sregex_iterator it(span.begin(), span.end(), build_re), end; it != end; ++it) {
          std::string name = fs::path((*it)[1].str()).filename().string();
          if (name.rfind("lib", 0) == 0 && (name.size() > 3)) {
            name = name.substr(3);
            for (const char* ext : {".so", ".a"})
              if (name.size() > std::string(ext).size() && name.compare(name.size() - std::string(ext).size(), std::string::npos, ext) == 0)
                name.erase(name.size() - std::string(ext).size());
          }
          if (std::regex_match(name, std::regex("[A-Za-z0-9_]+")) && (*it)[1].str().find('/') != std::string::npos)
            programs.insert(name + "\t" + where);
        }
      }
    }
  }
  // `commfit SUB`: the tool must know it (`commfit help SUB` is `commfit SUB --help`).
  subs.erase("help");   // `commfit help COMMAND`, handled before the commands
  subs.erase("plna");   // docs/HARDENING.md shows a mistyped command on purpose
  for (const std::string& sub : subs) {
    int status = 0;
    run_output(std::string("'") + COMMFIT_EXE + "' help " + sub + " > /dev/null 2>&1", &status);
    if (status != 0) problems.push_back({"docs", "show `commfit " + sub + "`, which `commfit help " + sub + "` does not know"});
  }
  for (const std::string& kind : gen_kinds) {
    int status = 0;
    run_output(std::string("'") + COMMFIT_EXE + "' gen " + kind + " --help > /dev/null 2>&1", &status);
    if (status != 0) problems.push_back({"docs", "show `commfit gen " + kind + "`, which `commfit gen` does not know"});
  }
  CHECK(subs.count("plan") == 1);
  // build/PATH/NAME: NAME (or libNAME.so) is a target of some CMakeLists.txt, or a program a
  // build script writes (bench/smpi/build.sh: "$out/smpi_driver").
  std::string cmake_text, script_text;
  for (const std::string& rel : tracked_files()) {
    if (fs::path(rel).filename() == "CMakeLists.txt") cmake_text += slurp(source_dir() / rel);
    if (fs::path(rel).extension() == ".sh") script_text += slurp(source_dir() / rel);
  }
  for (const std::string& entry : programs) {
    const std::string name = entry.substr(0, entry.find('\t'));
    const std::string where = entry.substr(entry.find('\t') + 1);
    const bool target = cmake_text.find("add_executable(" + name + " ") != std::string::npos ||
                        cmake_text.find("add_executable(" + name + "\n") != std::string::npos ||
                        cmake_text.find("add_library(" + name + " ") != std::string::npos || name == "commfit" ||
                        script_text.find("/" + name + "\"") != std::string::npos;
    if (!target) problems.push_back({where, "runs build/.../" + name + ", which no CMakeLists.txt builds"});
  }
  for (const Problem& p : problems) FAIL_CHECK(p.where << ": " << p.what);
}

// The man page lists every variable the interposer, in-job planning and the planner read: the
// "COMMFIT_..." string literals of runtime/, backends/exec/ and planner/ sources. A new variable
// without an entry in cmake/manpage_environment.txt fails here.
TEST_CASE("man_page_environment_names_every_variable_the_code_reads") {
  std::set<std::string> vars;
  static const std::regex literal(R"re("(COMMFIT_[A-Z0-9_]+)")re");
  for (const std::string& rel : tracked_files()) {
    const bool src = (rel.rfind("runtime/", 0) == 0 || rel.rfind("backends/exec/", 0) == 0 || rel.rfind("planner/", 0) == 0) &&
                     (fs::path(rel).extension() == ".cpp" || fs::path(rel).extension() == ".h");
    if (!src) continue;
    const std::string text = slurp(source_dir() / rel);
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) vars.insert((*it)[1]);
  }
  REQUIRE(vars.count("COMMFIT_THRESHOLD") == 1);
  // The page as a reader sees it: the built commfit.1 (the file `cmake --install` installs),
  // formatted by man (or groff), wide enough that no name is broken.
  const fs::path page = fs::path(COMMFIT_EXE).parent_path() / "commfit.1";
  REQUIRE(fs::exists(page));
  int status = 0;
  std::string text = run_output("MANWIDTH=250 MANPAGER=cat man -l '" + page.string() + "' 2>/dev/null | col -b", &status);
  if (status != 0 || text.empty())
    text = run_output("groff -man -Tascii -rLL=250n '" + page.string() + "' 2>/dev/null | col -b", &status);
  REQUIRE(!text.empty());
  const auto env = text.find("\nENVIRONMENT\n");
  REQUIRE(env != std::string::npos);
  const auto next = text.find("\nEXIT STATUS\n", env);
  REQUIRE(next != std::string::npos);
  const std::string section = text.substr(env, next - env);
  for (const std::string& v : vars)
    if (section.find(v) == std::string::npos)
      FAIL_CHECK("commfit(1) ENVIRONMENT does not name " << v << ", which the code reads: add it to cmake/manpage_environment.txt");
  for (const char* heading : {"\nNAME\n", "\nSYNOPSIS\n", "\nOPTIONS\n", "\nFILES\n", "\nEXAMPLES\n", "\nSEE ALSO\n"})
    CHECK_MESSAGE(text.find(heading) != std::string::npos, "commfit(1) has no section " << heading);
}
