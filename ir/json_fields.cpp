#include "ir/json_fields.h"

#include "ir/json_input.h"
#include "ir/matrix_io.h"

#include <set>
#include <vector>

namespace commfit {

// The JSON read from `in` as a DOM, through the blank-folding input (ir/json_input.h) so that white
// space costs no memory; places are bytes of the file.
nlohmann::ordered_json parse_strict_json(FileChunks& in, const std::string& file) {
  using json = nlohmann::ordered_json;
  // Bounded nesting, and no key twice in one object (a DOM would silently keep the last).
  std::vector<std::set<std::string>> keys;
  auto guard = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth) throw InputError(file, "", "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw InputError(file, "", "field \"" + parsed.get<std::string>() + "\" appears twice in one object");
    return true;
  };
  auto byte = [&](std::uint64_t index) { return "byte " + std::to_string(in.file_offset(index) + 1); };
  try {
    return json::parse(FileIterator(&in), FileIterator(), guard);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos)
      if (auto q = what.find(": ", p); q != std::string::npos) what = what.substr(q + 2);
    throw InputError(file, byte(e.byte == 0 ? 0 : e.byte - 1), "invalid JSON: " + what);
  } catch (const json::exception& e) {   // e.g. a number too large for a double
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    // nlohmann names the number ("number overflow parsing '1e999'") but not where it is: the
    // parser has just read it and the character after it, so it starts that far back.
    std::string place = "byte 1";
    if (auto a = what.find('\''), b = what.rfind('\''); a != std::string::npos && b > a + 1) {
      const std::uint64_t length = b - a - 1, read = in.consumed();
      place = byte(read > length ? read - length - 1 : 0);
    }
    throw InputError(file, place, "invalid JSON: " + what);
  }
}

nlohmann::ordered_json parse_strict_json(std::string_view text, const std::string& file) {
  FileChunks in(text_source(text), file, text.size());
  return parse_strict_json(in, file);
}

}  // namespace commfit
