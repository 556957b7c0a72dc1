// User-facing errors. A bad input file is reported as
//   commfit: error: FILE: PLACE: what is wrong
// with exit status 2 and no output. PLACE is a JSON pointer such as
// /messages/3/1, or "line N" for text formats. Broken invariants are internal errors
// (commfit_assert), never InputError.
#pragma once

#include <stdexcept>
#include <string>

namespace commfit {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string place, std::string problem)
      : std::runtime_error(format(file, place, problem)),
        file_(std::move(file)), place_(std::move(place)), problem_(std::move(problem)) {}

  const std::string& file() const { return file_; }
  const std::string& place() const { return place_; }
  const std::string& problem() const { return problem_; }

 private:
  static std::string format(const std::string& f, const std::string& p, const std::string& m) {
    std::string s = f;
    if (!p.empty()) s += ": " + p;
    return s + ": " + m;
  }
  std::string file_, place_, problem_;
};

// An option or combination of options the user gave that cannot be honoured (exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void internal_error(const char* where, const std::string& what);

}  // namespace commfit

#define commfit_assert(cond, where, what)                                   \
  do {                                                                      \
    if (!(cond)) ::commfit::internal_error((where), std::string(what));     \
  } while (0)
