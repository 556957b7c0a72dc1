// The scalar types every IR header shares: a rank, a byte count, a phase number. Kept apart from
// ir/comm_matrix.h (Eigen) so that headers the executor includes (ir/plan.h) need nothing more.
#pragma once

#include <cstdint>

namespace commfit {

using Rank = std::int32_t;
using Bytes = std::uint64_t;
using Phase = std::uint32_t;

// Largest message size accepted (2^53: every size is exact in a double, totals of up to
// 2^10 such messages cannot overflow 64 bits before they are checked).
inline constexpr Bytes kMaxMessageBytes = Bytes{1} << 53;

}  // namespace commfit
