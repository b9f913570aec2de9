#include "pelab/nn/checkpoint.h"

#include "pelab/core/error.h"

namespace pelab {

namespace {
// A tensor name read from a file, as it may appear in a one-line message: control characters
// escaped (fmt's debug form, without its quotes).
std::string shown(const std::string& name) {
  const std::string debug = fmt::format("{:?}", name);
  return debug.substr(1, debug.size() - 2);
}

bool is_parameter_name(const std::string& name) {
  for (const char* prefix : {"optim.", "rng.", "input.", "output.", "grad.", "aux.", "state."})
    if (name.rfind(prefix, 0) == 0) return false;
  return true;
}
}  // namespace

SafetensorsWriter model_checkpoint(const Encoder& model, const std::string& config_yaml) {
  SafetensorsWriter writer;
  for (const Tensor& p : model.params().all()) writer.add(p.name(), p);
  writer.set_metadata("config", config_yaml);
  writer.set_metadata("format", kCheckpointFormat);
  return writer;
}

void load_parameters(Encoder& model, const SafetensorsFile& file) {
  for (const Tensor& p : model.params().all()) {
    const SafetensorsTensor* t = file.find(p.name());
    PELAB_CHECK(t != nullptr, "{}: parameter '{}' is missing (the config asks for it, shape {})",
                file.source, p.name(), to_string(p.shape()));
    PELAB_CHECK(t->dtype == "F32", "{}: parameter '{}' has dtype {} (expected F32)", file.source,
                p.name(), t->dtype);
    PELAB_CHECK(t->shape == p.shape(), "{}: parameter '{}' has shape {} but the config needs {}",
                file.source, p.name(), to_string(t->shape), to_string(p.shape()));
    Tensor target = p;
    std::copy(t->f32.begin(), t->f32.end(), target.data());
  }
  for (const SafetensorsTensor& t : file.tensors) {
    PELAB_CHECK(!is_parameter_name(t.name) || model.params().contains(t.name),
                "{}: tensor '{}' is not a parameter of the model its config describes", file.source,
                shown(t.name));
  }
}

}  // namespace pelab
