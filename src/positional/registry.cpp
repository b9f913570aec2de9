// The name → scheme table, and what every scheme's key table gives: defaults, checks and the
// docs' key lists. Adding a scheme: its file, and one line here.
#include <algorithm>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/positional/scheme.h"

namespace pelab {

SchemeInfo none_scheme();
SchemeInfo sinusoidal_scheme();
SchemeInfo learned_scheme();
SchemeInfo relative_scheme();
SchemeInfo rotary_scheme();
SchemeInfo alibi_scheme();
SchemeInfo t5_scheme();
SchemeInfo index_scheme();
SchemeInfo normalized_scheme();
SchemeInfo binary_scheme();

const std::vector<SchemeInfo>& scheme_table() {
  static const std::vector<SchemeInfo> table = {
      none_scheme(),  sinusoidal_scheme(), learned_scheme(), relative_scheme(),   rotary_scheme(),
      alibi_scheme(), t5_scheme(),         index_scheme(),   normalized_scheme(), binary_scheme(),
  };
  return table;
}

const SchemeKey* SchemeInfo::key(const std::string& key_name) const {
  for (const SchemeKey& k : keys)
    if (k.name == key_name) return &k;
  return nullptr;
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table()) names.push_back(info.name);
  return names;
}

bool is_scheme(const std::string& name) {
  const std::vector<SchemeInfo>& table = scheme_table();
  return std::any_of(table.begin(), table.end(),
                     [&](const SchemeInfo& info) { return info.name == name; });
}

const SchemeInfo& scheme_info(const std::string& name) {
  for (const SchemeInfo& info : scheme_table())
    if (info.name == name) return info;
  throw Error(
      fmt::format("positional.type: unknown scheme '{}' (valid: {})", name, join(scheme_names())));
}

std::vector<std::string> all_scheme_keys() {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table())
    for (const SchemeKey& k : info.keys)
      if (std::find(names.begin(), names.end(), k.name) == names.end()) names.push_back(k.name);
  return names;
}

std::string key_not_taken(const SchemeInfo& info) {
  std::vector<std::string> takes;
  for (const SchemeKey& k : info.keys) takes.push_back(k.name);
  return fmt::format("the '{}' scheme does not take this key (it takes: {})", info.name,
                     takes.empty() ? "none" : join(takes));
}

std::string key_value_text(const KeyValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  return std::get<std::string>(value);
}

namespace {
const char* type_name(SchemeKey::Type type) {
  switch (type) {
    case SchemeKey::Type::Integer:
      return "integer";
    case SchemeKey::Type::Number:
      return "number";
    case SchemeKey::Type::Text:
      return "text";
  }
  return "?";
}

bool bounded(const SchemeKey& k) {
  return std::isfinite(k.min) || std::isfinite(k.max);
}

// The valid values of a key as text: "[1, 1000000]", "add, concat" or "any".
std::string valid_text(const SchemeKey& k) {
  if (k.type == SchemeKey::Type::Text) return k.choices.empty() ? "any" : join(k.choices);
  if (!bounded(k)) return "any";
  if (k.type == SchemeKey::Type::Integer)
    return fmt::format("[{}, {}]", static_cast<int64_t>(k.min), static_cast<int64_t>(k.max));
  return fmt::format("[{}, {}]", k.min, k.max);
}

// Checks one value against its key's table entry: type, then range or choices.
void check_value(const SchemeKey& k, const KeyValue& value) {
  switch (k.type) {
    case SchemeKey::Type::Integer: {
      PELAB_CHECK(std::holds_alternative<int64_t>(value), "positional.{}: must be an integer",
                  k.name);
      const int64_t v = std::get<int64_t>(value);
      PELAB_CHECK(static_cast<double>(v) >= k.min && static_cast<double>(v) <= k.max,
                  "positional.{}: must be in {}, got {}", k.name, valid_text(k), v);
      return;
    }
    case SchemeKey::Type::Number: {
      PELAB_CHECK(!std::holds_alternative<std::string>(value), "positional.{}: must be a number",
                  k.name);
      const double v = std::holds_alternative<int64_t>(value)
                           ? static_cast<double>(std::get<int64_t>(value))
                           : std::get<double>(value);
      PELAB_CHECK(!bounded(k) || (v >= k.min && v <= k.max), "positional.{}: must be in {}, got {}",
                  k.name, valid_text(k), v);
      return;
    }
    case SchemeKey::Type::Text: {
      PELAB_CHECK(std::holds_alternative<std::string>(value), "positional.{}: must be a text",
                  k.name);
      const std::string& v = std::get<std::string>(value);
      PELAB_CHECK(
          k.choices.empty() || std::find(k.choices.begin(), k.choices.end(), v) != k.choices.end(),
          "positional.{}: '{}' is not valid (valid: {})", k.name, v, valid_text(k));
      return;
    }
  }
}
}  // namespace

KeyValues resolve_defaults(const PositionalConfig& positional) {
  const SchemeInfo& info = scheme_info(positional.type);
  for (const auto& [name, value] : positional.keys.all()) {
    const SchemeKey* k = info.key(name);
    PELAB_CHECK(k != nullptr, "positional.{}: {}", name, key_not_taken(info));
    check_value(*k, value);
  }
  KeyValues keys = positional.keys;
  for (const SchemeKey& k : info.keys)
    if (!keys.has(k.name) && k.default_value) keys.set(k.name, *k.default_value);
  return keys;
}

void resolve_run_facts(PositionalConfig& positional, const RunFacts& facts) {
  const SchemeInfo& info = scheme_info(positional.type);
  if (info.resolve) info.resolve(facts, positional.keys);
}

std::string scheme_keys_markdown(const SchemeInfo& info) {
  if (info.keys.empty()) return "No keys besides `type`.\n";
  std::string out = "| key | type | default | valid | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const SchemeKey& k : info.keys) {
    const std::string fallback =
        k.default_value ? fmt::format("`{}`", key_value_text(*k.default_value)) : "none";
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.name, type_name(k.type), fallback,
                       valid_text(k), k.help);
  }
  return out;
}

std::unique_ptr<PositionalScheme> make_scheme(const ModelConfig& model, ParameterStore& params) {
  const SchemeInfo& info = scheme_info(model.positional.type);
  const KeyValues keys = resolve_defaults(model.positional);
  return info.make({model, keys, params});
}

}  // namespace pelab
