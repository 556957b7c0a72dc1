#include "ir/network_options.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

namespace commfit {

const char* to_string(Network n) { return n == Network::ib ? "ib" : "flow"; }

std::optional<Network> parse_network(std::string_view name) {
  if (name == "flow") return Network::flow;
  if (name == "ib") return Network::ib;
  return std::nullopt;
}

std::optional<IbFactors> parse_ib_factors(std::string_view text) {
  double v[3];
  std::size_t begin = 0;
  for (int k = 0; k < 3; ++k) {
    std::size_t end = text.find_first_of(";,", begin);
    if ((k < 2) != (end != std::string_view::npos)) return std::nullopt;
    if (end == std::string_view::npos) end = text.size();
    const std::string field(text.substr(begin, end - begin));
    std::size_t used = 0;
    try {
      v[k] = std::stod(field, &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used != field.size() || !(v[k] > 0) || !std::isfinite(v[k])) return std::nullopt;
    begin = end + 1;
  }
  return IbFactors{v[0], v[1], v[2]};
}

std::string format_ib_factors(const IbFactors& f) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.6g;%.6g;%.6g", f.be, f.bs, f.ys);
  return buf;
}

}  // namespace commfit
