// planner/units.h: quantities with units, as every option and in-job key reads them.
#include "planner/units.h"

#include <doctest/doctest.h>

using namespace commfit;

// planner/units.h: sizes, times and rates with units; anything else is refused.
TEST_CASE("units_read_sizes_times_and_rates") {
  auto bytes = [](const char* t) { return parse_quantity(t, Quantity::bytes); };
  auto secs = [](const char* t) { return parse_quantity(t, Quantity::seconds); };
  auto rate = [](const char* t) { return parse_quantity(t, Quantity::rate); };
  CHECK(bytes("8MiB") == 8.0 * 1024 * 1024);
  CHECK(bytes("8mib") == 8.0 * 1024 * 1024);
  CHECK(bytes("1.5GB") == 1.5e9);
  CHECK(bytes("2G") == 2.0 * 1024 * 1024 * 1024);   // Slurm's --mem: binary
  CHECK(bytes("64kB") == 64000);
  CHECK(bytes("100") == 100);
  CHECK(bytes("100B") == 100);
  CHECK(bytes("1e3") == 1000);
  CHECK(secs("2us") == doctest::Approx(2e-6));
  CHECK(secs("2\xC2\xB5s") == doctest::Approx(2e-6));
  CHECK(secs("500ns") == doctest::Approx(5e-7));
  CHECK(secs("1.5ms") == doctest::Approx(1.5e-3));
  CHECK(secs("2e-6") == 2e-6);                      // a plain number: exactly as written
  CHECK(rate("100Gbps") == doctest::Approx(12.5e9));
  CHECK(rate("100Gbit/s") == doctest::Approx(12.5e9));
  CHECK(rate("12.5GB/s") == doctest::Approx(12.5e9));
  CHECK(rate("12.5GBps") == doctest::Approx(12.5e9));
  CHECK(rate("1GiB/s") == doctest::Approx(1024.0 * 1024 * 1024));
  CHECK(rate("8bps") == doctest::Approx(1));
  for (const char* bad : {"", "MiB", "8 parsecs", "8XB", "8MiBs", "0x10", "nan", "inf", "1e999GB", "8EiB"}) {
    CAPTURE(bad);
    CHECK_FALSE(bytes(bad));
  }
  for (const char* bad : {"2 fortnights", "2u", "2S2"}) CHECK_FALSE(secs(bad));
  for (const char* bad : {"10Gb", "10G", "10GB", "10gbpss"}) CHECK_FALSE(rate(bad));
}
