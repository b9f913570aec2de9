#include "pelab/core/keys.h"

#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"

namespace pelab {

const KeyValue& KeyValues::get(const std::string& key) const {
  auto it = values_.find(key);
  PELAB_CHECK(it != values_.end(), "key '{}' is not set", key);
  return it->second;
}

int64_t KeyValues::integer(const std::string& key) const {
  const KeyValue& v = get(key);
  PELAB_CHECK(std::holds_alternative<int64_t>(v), "key '{}' is not an integer", key);
  return std::get<int64_t>(v);
}

double KeyValues::number(const std::string& key) const {
  const KeyValue& v = get(key);
  if (std::holds_alternative<int64_t>(v)) return static_cast<double>(std::get<int64_t>(v));
  PELAB_CHECK(std::holds_alternative<double>(v), "key '{}' is not a number", key);
  return std::get<double>(v);
}

const std::string& KeyValues::text(const std::string& key) const {
  const KeyValue& v = get(key);
  PELAB_CHECK(std::holds_alternative<std::string>(v), "key '{}' is not a text", key);
  return std::get<std::string>(v);
}

KeySpec integer_key(std::string name, int64_t default_value, int64_t min, int64_t max,
                    std::string help) {
  return {.name = std::move(name),
          .type = KeySpec::Type::Integer,
          .default_value = default_value,
          .min = static_cast<double>(min),
          .max = static_cast<double>(max),
          .help = std::move(help)};
}

const KeySpec* find_key(const std::vector<KeySpec>& specs, const std::string& name) {
  for (const KeySpec& k : specs)
    if (k.name == name) return &k;
  return nullptr;
}

const char* key_type_name(KeySpec::Type type) {
  switch (type) {
    case KeySpec::Type::Integer:
      return "integer";
    case KeySpec::Type::Number:
      return "number";
    case KeySpec::Type::Text:
      return "text";
  }
  return "?";
}

std::string key_value_text(const KeyValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  return std::get<std::string>(value);
}

namespace {
bool bounded(const KeySpec& k) {
  return std::isfinite(k.min) || std::isfinite(k.max);
}
}  // namespace

std::string key_valid_text(const KeySpec& k) {
  if (k.type == KeySpec::Type::Text) return k.choices.empty() ? "any" : join(k.choices);
  if (!bounded(k)) return "any";
  if (k.type == KeySpec::Type::Integer)
    return fmt::format("[{}, {}]", static_cast<int64_t>(k.min), static_cast<int64_t>(k.max));
  return fmt::format("[{}, {}]", k.min, k.max);
}

std::string key_value_problem(const KeySpec& k, const KeyValue& value) {
  switch (k.type) {
    case KeySpec::Type::Integer: {
      if (!std::holds_alternative<int64_t>(value)) return "must be an integer";
      const int64_t v = std::get<int64_t>(value);
      if (static_cast<double>(v) < k.min || static_cast<double>(v) > k.max)
        return fmt::format("must be in {}, got {}", key_valid_text(k), v);
      return "";
    }
    case KeySpec::Type::Number: {
      if (std::holds_alternative<std::string>(value)) return "must be a number";
      const double v = std::holds_alternative<int64_t>(value)
                           ? static_cast<double>(std::get<int64_t>(value))
                           : std::get<double>(value);
      if (bounded(k) && !(v >= k.min && v <= k.max))
        return fmt::format("must be in {}, got {}", key_valid_text(k), v);
      return "";
    }
    case KeySpec::Type::Text: {
      if (!std::holds_alternative<std::string>(value)) return "must be a text";
      const std::string& v = std::get<std::string>(value);
      if (!k.choices.empty() && std::find(k.choices.begin(), k.choices.end(), v) == k.choices.end())
        return fmt::format("'{}' is not valid (valid: {})", v, key_valid_text(k));
      return "";
    }
  }
  return "";
}

KeyValues with_defaults(const std::string& section, const std::vector<KeySpec>& specs,
                        const KeyValues& given) {
  KeyValues keys = given;
  for (const KeySpec& k : specs) {
    if (given.has(k.name)) {
      const std::string problem = key_value_problem(k, given.all().at(k.name));
      PELAB_CHECK(problem.empty(), "{}.{}: {}", section, k.name, problem);
    } else if (k.default_value) {
      keys.set(k.name, *k.default_value);
    }
  }
  return keys;
}

std::string keys_markdown(const std::vector<KeySpec>& specs) {
  std::string out = "| key | type | default | valid | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const KeySpec& k : specs) {
    const std::string fallback =
        k.default_value ? fmt::format("`{}`", key_value_text(*k.default_value)) : "none";
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.name, key_type_name(k.type), fallback,
                       key_valid_text(k), k.help);
  }
  return out;
}

}  // namespace pelab
