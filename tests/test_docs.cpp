// The repository carries its own contract (issue 16, item 5): no doc, script, schema or source
// comment cites a file outside the repository (the design card, the style guide, the SMPI notes,
// the source papers' text files), and every doc that a doc names or links exists. Reads every
// tracked file under COMMFIT_SOURCE_DIR (`git ls-files`; a walk of the tree, skipping build
// directories, where git is not available) and fails naming file and line.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(COMMFIT_SOURCE_DIR).lexically_normal();

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
  const std::string cmd = "git -C '" + kRoot.string() + "' ls-files 2>/dev/null";
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
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory()) {
      const std::string name = it->path().filename().string();
      if ((name.size() > 1 && name[0] == '.' && name != ".ci") || fs::exists(it->path() / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    files.push_back(fs::relative(it->path(), kRoot).string());
  }
  return files;
}

// Where `target` (relative to the file `rel`'s folder) lands, relative to the root; empty when
// it leaves the repository.
std::string resolve(const std::string& rel, const std::string& target) {
  const fs::path full = (kRoot / fs::path(rel).parent_path() / target).lexically_normal();
  const fs::path inside = full.lexically_relative(kRoot);
  if (inside.empty() || *inside.begin() == "..") return {};
  return inside.generic_string();
}

bool exists_in_repo(const std::string& rel_to_root) {
  return !rel_to_root.empty() && fs::exists(kRoot / rel_to_root);
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

}  // namespace

TEST_CASE("docs_cite_nothing_outside_the_repository") {
  std::vector<Problem> problems;
  int scanned = 0;
  for (const std::string& rel : tracked_files()) {
    if (!is_scanned(rel) || !fs::is_regular_file(kRoot / rel)) continue;
    ++scanned;
    std::istringstream in(slurp(kRoot / rel));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) check_line(rel, n, line, problems);
  }
  CHECK(scanned > 100);   // the walk found the tree
  for (const Problem& p : problems) FAIL_CHECK(p.where << ": " << p.what);
}

TEST_CASE("docs_architecture_is_linked_first_from_the_readme") {
  const std::string readme = slurp(kRoot / "README.md");
  const auto docs = readme.find("## Documentation");
  REQUIRE(docs != std::string::npos);
  const auto first = readme.find("docs/", docs);
  REQUIRE(first != std::string::npos);
  CHECK(readme.compare(first, 20, "docs/ARCHITECTURE.md") == 0);
}
