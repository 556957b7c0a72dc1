#include "ir/human_units.h"

#include <cstdio>

namespace commfit {

std::string human_bytes(double bytes) {
  static const char* const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes;
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", v);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, unit[u]);
  return buf;
}

std::string human_seconds(double s) {
  char buf[48];
  if (s == 0) return "0 s";
  if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.3g \xc2\xb5s", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.4g s", s);
  return buf;
}

}  // namespace commfit
