// Sizes, times and rates with units on the command line: --memory 8MiB, --tau 2us,
// --bandwidth 100Gbps. A plain number keeps its old meaning (bytes, seconds, bytes per second).
#pragma once

#include <optional>
#include <string>
#include <string_view>

// Declared only: the command files include CLI11 themselves, and code that runs inside MPI jobs
// (runtime/, also under SMPI, whose headers redefine exit()) uses parse_quantity without it.
namespace CLI {
class Validator;
}

namespace commfit {

enum class Quantity { bytes, seconds, rate };

// The value of `text` in bytes, seconds or bytes per second; nullopt when it is not a number
// followed by at most one of the units of its kind:
//  - bytes: B; kB KB MB GB TB PB (powers of 1000); KiB MiB GiB TiB PiB (of 1024); K M G T P
//    alone are binary too (as in Slurm's --mem);
//  - seconds: s, ms, us (or µs), ns;
//  - rate: B/s and Bps with the byte prefixes, or bits: bps, kbps, Mbps, Gbps, Tbps, also
//    written bit/s, Kbit/s, ... (powers of 1000, 8 bits a byte).
// Unit names are matched without regard to case, except b (bit) against B (byte) in rates.
std::optional<double> parse_quantity(std::string_view text, Quantity kind);

// CLI11 transforms that rewrite such a value as the plain number the option reads. `whole`:
// the option holds a whole number of bytes (a fraction is refused).
CLI::Validator quantity_transform(Quantity kind, bool whole = false);

}  // namespace commfit
