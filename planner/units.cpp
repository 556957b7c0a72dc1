#include "planner/units.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace commfit {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The multiplier of a prefix letter (k, m, g, t, p; lower case), binary or decimal; 0 if none.
double prefix(char c, bool binary) {
  const char* const letters = "kmgtp";
  for (int k = 0; letters[k]; ++k)
    if (letters[k] == c) return std::pow(binary ? 1024.0 : 1000.0, k + 1);
  return 0;
}

std::optional<double> byte_unit(std::string_view unit) {
  const std::string u = lower(unit);
  if (u.empty() || u == "b") return 1.0;
  const double bin = prefix(u[0], true), dec = prefix(u[0], false);
  if (bin == 0) return std::nullopt;
  if (u.size() == 1) return bin;                 // K, M, G: binary, as Slurm's --mem
  if (u.substr(1) == "b") return dec;            // kB, MB, GB
  if (u.substr(1) == "ib") return bin;           // KiB, MiB, GiB
  return std::nullopt;
}

// Seconds are divided by this (500 / 1e9 is the double nearest 5e-7; 500 * 1e-9 is not).
std::optional<double> time_divisor(std::string_view unit) {
  if (unit.empty() || unit == "s") return 1.0;
  if (unit == "ms") return 1e3;
  if (unit == "us" || unit == "\xC2\xB5s") return 1e6;
  if (unit == "ns") return 1e9;
  return std::nullopt;
}

std::optional<double> rate_unit(std::string_view unit) {
  if (unit.empty()) return 1.0;
  // Bits: [prefix]bps or [prefix]bit/s (decimal prefixes, 8 bits a byte).
  for (std::string_view tail : {"bps", "bit/s"}) {
    if (unit.size() < tail.size() || lower(unit.substr(unit.size() - tail.size())) != tail) continue;
    if (unit[unit.size() - tail.size()] != 'b') continue;   // B is a byte
    const std::string_view head = unit.substr(0, unit.size() - tail.size());
    if (head.empty()) return 1.0 / 8;
    if (head.size() == 1 && prefix(lower(head)[0], false) > 0) return prefix(lower(head)[0], false) / 8;
    return std::nullopt;
  }
  // Bytes: a byte unit followed by /s or ps.
  for (std::string_view tail : {"/s", "ps"}) {
    if (unit.size() <= tail.size() || lower(unit.substr(unit.size() - tail.size())) != tail) continue;
    const std::string_view head = unit.substr(0, unit.size() - tail.size());
    if (head.back() != 'B') return std::nullopt;   // a byte unit ends in B here
    return byte_unit(head);
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> parse_quantity(std::string_view text, Quantity kind) {
  // The number: what strtod reads (no hexadecimal, no inf or nan).
  const std::string s(text);
  if (s.empty() || std::string_view("+-.0123456789").find(s[0]) == std::string_view::npos) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(x)) return std::nullopt;
  if (std::string_view(s.c_str(), static_cast<std::size_t>(end - s.c_str())).find_first_of("xXpP") != std::string_view::npos)
    return std::nullopt;   // hexadecimal
  std::string_view unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (kind == Quantity::seconds) {
    const std::optional<double> d = time_divisor(unit);
    if (!d) return std::nullopt;
    return x / *d;
  }
  const std::optional<double> m = kind == Quantity::bytes ? byte_unit(unit) : rate_unit(unit);
  if (!m) return std::nullopt;
  const double v = x * *m;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

CLI::Validator quantity_transform(Quantity kind, bool whole) {
  return CLI::Validator(
      [kind, whole](std::string& value) -> std::string {
        // A plain number is left to the option's own conversion (and its messages), except a
        // whole number of bytes written as 1e6 or 1.5e3, which an integer option could not read.
        const bool plain = value.find_first_not_of("+-.0123456789eE") == std::string::npos;
        if (plain && (!whole || value.find_first_of(".eE") == std::string::npos || value[0] == '-')) return {};
        const std::optional<double> v = parse_quantity(value, kind);
        const char* units = kind == Quantity::bytes   ? "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB"
                            : kind == Quantity::seconds ? "s, ms, us, ns"
                                                        : "B/s, kB/s, MB/s, GB/s, GiB/s, bps, Mbps, Gbps";
        if (!v) return "\"" + value + "\" is not a number with a unit (" + std::string(units) + ")";
        if (whole) {
          if (*v < 0 || *v >= 0x1p64 || *v != std::floor(*v)) return "\"" + value + "\" is not a whole number of bytes below 2^64";
          value = std::to_string(static_cast<std::uint64_t>(*v));
        } else {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17g", *v);
          value = buf;
        }
        return {};
      },
      "", "unit");
}

}  // namespace commfit
