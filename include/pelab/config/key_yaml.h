// Typed keys (pelab/core/keys.h) to and from YAML: a section's keys are read and written as
// their table says, whether the table is a positional scheme's or a task's.
#pragma once

#include <yaml-cpp/emitter.h>

#include <vector>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/keys.h"

namespace pelab {

// Reads `spec.name` as the spec's type into `values` if it is given (returns whether it was).
// A key of a nested mapping is read from that mapping's reader under its own name.
bool read_key(MapReader& section, const KeySpec& spec, KeyValues& values);
// Writes every key of `specs` that has a value, in the table's order (numbers in their
// shortest exact form), into the open map of `out`; not a key omitted at its default that
// holds it. A key "group.key" is written as `key` inside the mapping `group`; a group's keys
// are consecutive in the table.
void emit_keys(YAML::Emitter& out, const std::vector<KeySpec>& specs, const KeyValues& values);

}  // namespace pelab
