// Typed reads of one JSON object's fields, every error naming the file and the field's place
// (/cost/tau_s): the plan files' strict readers (backends/plan_dir.cpp), the plan contract's
// (ir/plan_contract.cpp) and the machine file's (planner/machine_file.cpp).
#pragma once

#include "ir/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace commfit {

class FileChunks;

// A JSON document read strictly: nesting at most kMaxJsonDepth levels, no key twice in one object
// (a DOM would keep the last silently), white space costing no memory (ir/json_input.h). Errors
// are InputErrors naming `file` and the byte ("invalid JSON: ..."). The plan files' and the
// machine file's readers.
nlohmann::ordered_json parse_strict_json(FileChunks& in, const std::string& file);
nlohmann::ordered_json parse_strict_json(std::string_view text, const std::string& file);

// A non-negative integer: as parsed (unsigned, or "-0") or as built in memory (signed).
inline bool json_natural(const nlohmann::ordered_json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

class JsonFields {
 public:
  using json = nlohmann::ordered_json;

  // `place` is the object's own ("" for the top level, shown as "/").
  JsonFields(const json& obj, std::string file, std::string place) : obj_(obj), file_(std::move(file)), place_(std::move(place)) {
    if (!obj_.is_object()) throw InputError(file_, place_.empty() ? "/" : place_, "expected an object");
  }

  std::string at(const char* key) const { return place_ + "/" + key; }
  [[noreturn]] void fail(const char* key, const std::string& problem) const { throw InputError(file_, at(key), problem); }

  // Required fields: an error when missing.
  const json& need(const char* key) {
    used_.insert(key);
    const auto it = obj_.find(key);
    if (it == obj_.end()) throw InputError(file_, place_.empty() ? "/" : place_, std::string("missing required field \"") + key + "\"");
    return *it;
  }
  std::uint64_t uint(const char* key, std::uint64_t max = ~std::uint64_t{0}) { return as_uint(need(key), at(key), max); }
  double number(const char* key) {
    const json& v = need(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  std::string string(const char* key) {
    const json& v = need(key);
    if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  void expect(const char* key, const char* value) {
    const json& v = need(key);
    if (!v.is_string() || v.get<std::string>() != value) fail(key, std::string("expected \"") + value + "\", got " + v.dump());
  }
  void version() {   // "version": 1, the only one there is
    const json& v = need("version");
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() != 1) fail("version", "unsupported version " + v.dump() + " (this commfit reads version 1)");
  }

  // Optional fields: absent is nullptr or nullopt, a value of the wrong kind an error.
  const json* maybe(const char* key) {
    used_.insert(key);
    const auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  std::optional<std::string> maybe_string(const char* key) {
    const json* v = maybe(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
    return v->get<std::string>();
  }
  // A finite number >= `min`.
  std::optional<double> maybe_number(const char* key, double min) {
    const json* v = maybe(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || !(v->get<double>() >= min))
      fail(key, std::string(min == 0 ? "expected a non-negative number" : "expected a number") + ", got " + v->dump());
    return v->get<double>();
  }
  std::optional<std::uint64_t> maybe_uint(const char* key) {
    const json* v = maybe(key);
    if (!v) return std::nullopt;
    if (!json_natural(*v)) fail(key, "expected a non-negative integer, got " + v->dump());
    return v->get<std::uint64_t>();
  }

  // `v` (a field or an element, at `place`) as a non-negative integer of at most `max`.
  std::uint64_t as_uint(const json& v, const std::string& place, std::uint64_t max) const {
    if (!json_natural(v)) throw InputError(file_, place, "expected a non-negative integer, got " + v.dump());
    const auto x = v.is_number_unsigned() ? v.get<std::uint64_t>() : static_cast<std::uint64_t>(v.get<std::int64_t>());
    if (x > max) throw InputError(file_, place, v.dump() + " is out of range (at most " + std::to_string(max) + ")");
    return x;
  }

  // After the reads: a field none of them asked for is an error.
  void no_others() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!used_.count(it.key())) throw InputError(file_, place_ + "/" + it.key(), "unknown field");
  }

 private:
  const json& obj_;
  std::string file_, place_;
  std::set<std::string> used_;
};

}  // namespace commfit
