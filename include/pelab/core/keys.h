// Typed keys: what the keys of a config section are (type, default, valid range, help) and
// the values given for them. Positional schemes (positional.*) and tasks (task.*) declare
// their keys as tables of KeySpec; the config reader, the checks, config.yaml, the messages
// and the docs' key lists all come from those tables, so a key is described in one place.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pelab {

// A key's value: an integer, a number or a text.
using KeyValue = std::variant<int64_t, double, std::string>;

// One key of a section.
struct KeySpec {
  enum class Type { Integer, Number, Text };
  std::string name;
  Type type = Type::Integer;
  // Filled in when the key is not given; nullopt: the key has no value unless given.
  std::optional<KeyValue> default_value = std::nullopt;
  // Integers and numbers: the valid range, inclusive. Text: the valid values.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices = {};
  std::string help = {};  // one line, for the docs and --help
  // config.yaml leaves the key out while it holds its default: for keys added to a section
  // after runs were made, so that those runs' configs (and everything keyed on their text)
  // read and write back the same.
  bool omitted_at_default = false;
};

// An integer key with a default and an inclusive range (the common case).
KeySpec integer_key(std::string name, int64_t default_value, int64_t min, int64_t max,
                    std::string help);

// The values given for a section's keys, by key name.
class KeyValues {
 public:
  KeyValues() = default;
  KeyValues(std::initializer_list<std::pair<const std::string, KeyValue>> values)
      : values_(values) {}
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  bool empty() const { return values_.empty(); }
  void set(const std::string& key, KeyValue value) { values_[key] = std::move(value); }
  void erase(const std::string& key) { values_.erase(key); }
  // The value of a key that is set; an error naming the key if it is not (or is a text
  // where a number is asked for). number() also takes an integer.
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  const std::map<std::string, KeyValue>& all() const { return values_; }

 private:
  const KeyValue& get(const std::string& key) const;
  std::map<std::string, KeyValue> values_;
};

// The entry of `specs` called `name`, or null.
const KeySpec* find_key(const std::vector<KeySpec>& specs, const std::string& name);
// "integer", "number" or "text".
const char* key_type_name(KeySpec::Type type);
// A value as text for messages and docs (numbers in their shortest form).
std::string key_value_text(const KeyValue& value);
// The valid values of a key as text: "[1, 4096]", "add, concat" or "any".
std::string key_valid_text(const KeySpec& spec);
// What is wrong with `value` for `spec` (type, then range or choices), as the end of a
// message ("must be in [1, 4096], got 5000"); "" if nothing is.
std::string key_value_problem(const KeySpec& spec, const KeyValue& value);
// The given values, each checked against its spec, with every missing default filled in.
// Errors read "<section>.<key>: <problem>"; a key without a spec is the caller's to refuse.
KeyValues with_defaults(const std::string& section, const std::vector<KeySpec>& specs,
                        const KeyValues& given);
// The keys as a Markdown table: key, type, default, valid values, meaning.
std::string keys_markdown(const std::vector<KeySpec>& specs);

}  // namespace pelab
