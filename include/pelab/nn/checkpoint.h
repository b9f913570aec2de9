// Model checkpoints: safetensors files with MODEL.md's parameter names and the resolved
// config as YAML text in __metadata__["config"]. A checkpoint alone rebuilds the model; nn
// keeps that text opaque: reading it back is the config layer's (pelab/config/load_model.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "pelab/io/safetensors.h"
#include "pelab/nn/encoder.h"

namespace pelab {

// The __metadata__["format"] of every checkpoint model_checkpoint makes.
inline constexpr const char* kCheckpointFormat = "pelab checkpoint 1";

// The parameters under their names, plus `config_yaml` (which must at least hold the model
// and positional sections) as __metadata__["config"]. Written atomically.
SafetensorsWriter model_checkpoint(const Encoder& model, const std::string& config_yaml);

// Copies every parameter from `file` into `model`. Every model parameter must be present
// with its exact shape, and the file may hold no other parameter (names under "optim.",
// "rng." and "input.", "output.", "grad.", "aux." are not parameters and are skipped).
void load_parameters(Encoder& model, const SafetensorsFile& file);

}  // namespace pelab
