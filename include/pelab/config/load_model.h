// A model from a checkpoint alone: its config is YAML text in the file's metadata (written
// by model_checkpoint, pelab/nn/checkpoint.h), read here where YAML is read.
#pragma once

#include <memory>
#include <string>

#include "pelab/io/safetensors.h"
#include "pelab/nn/checkpoint.h"
#include "pelab/nn/encoder.h"

namespace pelab {

// Rebuilds the model from a checkpoint's config, then loads its parameters.
std::unique_ptr<Encoder> load_model(const SafetensorsFile& file);
std::unique_ptr<Encoder> load_model(const std::string& path);
// Builds the model `config` describes and loads the checkpoint's parameters into it: for a
// config that differs from the checkpoint's only in what changes no parameter (an evaluation's
// rotary scaling); a parameter `config` names otherwise is refused as load_parameters does.
std::unique_ptr<Encoder> load_model(const SafetensorsFile& file, const ModelConfig& config);

}  // namespace pelab
