#include "pelab/config/key_yaml.h"

#include <string>

namespace pelab {

bool read_key(MapReader& section, const KeySpec& spec, KeyValues& values) {
  switch (spec.type) {
    case KeySpec::Type::Integer: {
      int64_t v = 0;
      if (!section.read(spec.name, v)) return false;
      values.set(spec.name, v);
      return true;
    }
    case KeySpec::Type::Number: {
      double v = 0.0;
      if (!section.read(spec.name, v)) return false;
      values.set(spec.name, v);
      return true;
    }
    case KeySpec::Type::Text: {
      std::string v;
      if (!section.read(spec.name, v, spec.choices)) return false;
      values.set(spec.name, v);
      return true;
    }
  }
  return false;
}

namespace {
// Whether `values` holds the key's default, compared as the key's type (an integer 1 given
// for a number key is its default 1.0).
bool at_default(const KeySpec& spec, const KeyValues& values) {
  if (!spec.default_value) return false;
  const KeyValues fallback{{spec.name, *spec.default_value}};
  switch (spec.type) {
    case KeySpec::Type::Integer:
      return values.integer(spec.name) == fallback.integer(spec.name);
    case KeySpec::Type::Number:
      return values.number(spec.name) == fallback.number(spec.name);
    case KeySpec::Type::Text:
      return values.text(spec.name) == fallback.text(spec.name);
  }
  return false;
}
}  // namespace

void emit_keys(YAML::Emitter& out, const std::vector<KeySpec>& specs, const KeyValues& values) {
  std::string open_group;  // the nested mapping being written ("scaling"), "" if none
  for (const KeySpec& spec : specs) {
    if (!values.has(spec.name)) continue;
    if (spec.omitted_at_default && at_default(spec, values)) continue;
    const size_t dot = spec.name.find('.');
    const std::string group = dot == std::string::npos ? "" : spec.name.substr(0, dot);
    if (group != open_group) {
      if (!open_group.empty()) out << YAML::EndMap;
      if (!group.empty()) out << YAML::Key << group << YAML::Value << YAML::BeginMap;
      open_group = group;
    }
    out << YAML::Key << spec.name.substr(group.empty() ? 0 : dot + 1) << YAML::Value;
    switch (spec.type) {
      case KeySpec::Type::Integer:
        out << values.integer(spec.name);
        break;
      case KeySpec::Type::Number:
        out << yaml_number(values.number(spec.name));
        break;
      case KeySpec::Type::Text:
        out << values.text(spec.name);
        break;
    }
  }
  if (!open_group.empty()) out << YAML::EndMap;
}

}  // namespace pelab
