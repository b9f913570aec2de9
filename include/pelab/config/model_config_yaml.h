// The `model:` and `positional:` sections of a config, to and from YAML. The positional keys
// are read, checked and written as the scheme's key table says (pelab/positional/scheme.h).
#pragma once

#include <string>

#include "pelab/config/yaml_reader.h"
#include "pelab/data/randomize.h"
#include "pelab/nn/model_config.h"

namespace pelab {

// Read one section on top of the values already in the struct; unknown keys are errors.
void read_model_section(MapReader& model, ModelConfig& config);
// `randomize` receives positional.randomize (null: read and ignored, as for a checkpoint).
void read_positional_section(MapReader& positional, PositionalConfig& config,
                             RandomizeConfig* randomize = nullptr);
// Reads root.model and root.positional (both optional) on top of `config`'s values.
void read_model_sections(MapReader& root, ModelConfig& config);
// Every key, resolved (defaults written out), as `model:` and `positional:` sections.
std::string model_sections_yaml(const ModelConfig& config, const RandomizeConfig& randomize = {});
// Parses text holding model/positional sections (other top-level sections are ignored).
ModelConfig model_config_from_yaml(const std::string& text, const std::string& source);

}  // namespace pelab
