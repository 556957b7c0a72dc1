// libFuzzer target: the machine's readers accept or throw UsageError / InputError, nothing else,
// and what they accept round-trips: a topology spec (Topology::parse, +nodeN and +map:LIST
// included), its JSON form (Topology::from_json), and a node map file (read_node_map). The first
// byte chooses the reader; the rest is the text.
#include "ir/error.h"
#include "ir/topology.h"
#include "planner/file_defaults.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        const commfit::Topology t = commfit::Topology::parse(text);
        if (!(commfit::Topology::parse(t.spec()) == t) || !(commfit::Topology::from_json(t.to_json()) == t)) std::abort();
        break;
      }
      case 1: {
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        if (!j.is_discarded()) (void)commfit::Topology::from_json(j);
        break;
      }
      case 2: {
        std::istringstream in(text);
        const std::vector<commfit::Rank> map = commfit::read_node_map(in, "fuzz.map");
        const commfit::Topology t = commfit::Topology().with_node_map(map);
        if (!(commfit::Topology::parse(t.spec()) == t)) std::abort();
        break;
      }
    }
  } catch (const commfit::UsageError&) {
  } catch (const commfit::InputError&) {
  }
  return 0;
}
