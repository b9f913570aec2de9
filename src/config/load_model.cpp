#include "pelab/config/load_model.h"

#include "pelab/config/model_config_yaml.h"

namespace pelab {

std::unique_ptr<Encoder> load_model(const SafetensorsFile& file) {
  const ModelConfig config =
      model_config_from_yaml(file.metadata_value("config"), file.source + " [config]");
  auto model = std::make_unique<Encoder>(config, 0);
  load_parameters(*model, file);
  return model;
}

std::unique_ptr<Encoder> load_model(const std::string& path) {
  return load_model(read_safetensors(path));
}

}  // namespace pelab
