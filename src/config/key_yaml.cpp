#include "pelab/config/key_yaml.h"

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
      if (!section.read(spec.name, v)) return false;
      values.set(spec.name, v);
      return true;
    }
  }
  return false;
}

void emit_keys(YAML::Emitter& out, const std::vector<KeySpec>& specs, const KeyValues& values) {
  for (const KeySpec& spec : specs) {
    if (!values.has(spec.name)) continue;
    out << YAML::Key << spec.name << YAML::Value;
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
}

}  // namespace pelab
