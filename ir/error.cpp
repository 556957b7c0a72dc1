#include "ir/error.h"

#include <cstdio>
#include <cstdlib>

namespace commfit {

void internal_error(const char* where, const std::string& what) {
  std::fprintf(stderr, "commfit: internal error in %s: %s\n", where, what.c_str());
  std::abort();
}

}  // namespace commfit
