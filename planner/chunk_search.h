// The chunk search of `direct --algorithm quantised` (--chunk 0): which piece size and which
// colouring make the cheapest quantised schedule under the synchronous cost model. It plans
// several candidates with the quantised split, bottleneck peeling and the profile split
// (passes/quantised_split.h, passes/profile_split.h), shaves each (passes/shave.h) and keeps the
// cheapest. Its work limits are the named constants of planner/chunk_search.cpp.
#pragma once

#include "ir/cost_model.h"
#include "planner/pass_runner.h"

#include <cstdint>

namespace commfit {

struct Chunked {
  Bytes q = 1;                          // the piece size (the largest message: no split)
  std::int64_t slack = 0;               // colours beyond D the first fit may use
  const char* colouring = "first-fit";  // first-fit | bottleneck | profile
  Schedule schedule;
};

Chunked choose_chunk(const CommMatrix& m, const CostOptions& c, PassRunner& passes);

}  // namespace commfit
