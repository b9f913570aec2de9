#include "pelab/config/load_model.h"

#include <fmt/format.h>

#include "pelab/config/model_config_yaml.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

std::unique_ptr<Encoder> load_model(const SafetensorsFile& file) {
  const std::string source = file.source + " [config]";
  const ModelConfig config = model_config_from_yaml(file.metadata_value("config"), source);
  std::unique_ptr<Encoder> model;
  try {
    model = std::make_unique<Encoder>(config, make_scheme, 0);
  } catch (const Error& e) {
    // The model's own checks ("model.heads: 3 heads do not divide ...") know no file: name
    // the checkpoint whose metadata holds the config.
    throw Error(fmt::format("{}: {}", source, e.what()));
  }
  load_parameters(*model, file);
  return model;
}

std::unique_ptr<Encoder> load_model(const SafetensorsFile& file, const ModelConfig& config) {
  auto model = std::make_unique<Encoder>(config, make_scheme, 0);
  load_parameters(*model, file);
  return model;
}

std::unique_ptr<Encoder> load_model(const std::string& path) {
  return load_model(read_safetensors(path));
}

}  // namespace pelab
