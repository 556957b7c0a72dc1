// Quantities as people read them, in messages and reports: one spelling everywhere. Bytes in
// binary units (KiB, MiB, ...; the units the command line's sizes are mostly given in), seconds in
// s, ms or µs.
#pragma once

#include <string>

namespace commfit {

// "900 B", "1.0 KiB", "12.5 MiB", "2.0 GiB": whole bytes below 1 KiB, one decimal above.
std::string human_bytes(double bytes);

// "0 s", "8.2 µs", "12.5 ms", "1.234 s": three significant digits below a second, four above.
std::string human_seconds(double seconds);

}  // namespace commfit
