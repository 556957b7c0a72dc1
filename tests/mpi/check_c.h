/* The C MPI tests' check: counts a failure and says which rank, what and where. The including file
 * defines `static int rank, failures;`. */
#pragma once

#include <stdio.h>

#define CHECK(cond, what)                                                    \
  do {                                                                       \
    if (!(cond)) {                                                           \
      ++failures;                                                            \
      fprintf(stderr, "FAIL rank %d: %s (line %d)\n", rank, what, __LINE__); \
    }                                                                        \
  } while (0)
