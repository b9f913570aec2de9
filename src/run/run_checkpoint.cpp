#include "pelab/run/run_checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <system_error>

#include "pelab/config/load_model.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/nn/checkpoint.h"
#include "run/run_files.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

// A checkpoint's integer metadata entry, in [0, max].
int64_t metadata_int(const SafetensorsFile& file, const std::string& key, int64_t max) {
  const std::string& text = file.metadata_value(key);
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  PELAB_CHECK(ec == std::errc() && end == text.data() + text.size() && value >= 0 && value <= max,
              "{}: __metadata__ '{}' is '{}'; expected an integer in [0, {}]", file.source, key,
              message_text(text), max);
  return value;
}

}  // namespace

void check_checkpoint_format(const SafetensorsFile& file) {
  const std::string& format = file.metadata_value("format");
  PELAB_CHECK(format == kCheckpointFormat, "{}: __metadata__ 'format' is '{}'; expected '{}'",
              file.source, message_text(format), kCheckpointFormat);
}

CheckpointProgress checkpoint_progress(const SafetensorsFile& file, int64_t max_step) {
  CheckpointProgress p;
  p.step = metadata_int(file, "step", max_step);
  p.optimizer_steps = metadata_int(file, "optimizer_steps", max_step);
  PELAB_CHECK(p.optimizer_steps == p.step,
              "{}: __metadata__ 'optimizer_steps' is {} but 'step' is {}; a run takes one "
              "optimizer step per training step",
              file.source, p.optimizer_steps, p.step);
  if (file.metadata.count("stop_streak"))
    p.stop_streak = metadata_int(file, "stop_streak", std::numeric_limits<int64_t>::max());
  return p;
}

void check_checkpoint_config(const SafetensorsFile& file, const std::string& config_yaml,
                             const std::string& config_path) {
  const auto stored = file.metadata.find("config");
  PELAB_CHECK(stored != file.metadata.end(),
              "{}: the checkpoint holds no config (__metadata__ 'config'); it was not written "
              "by `pelab train`",
              file.source);
  PELAB_CHECK(stored->second == config_yaml,
              "{}: the checkpoint was written by a different config than {} ({}); use the "
              "run's own checkpoint and config",
              file.source, config_path,
              first_difference(stored->second, config_yaml, {"the checkpoint", "config.yaml"}));
}

void check_parameters_finite(const Encoder& model, const std::string& source) {
  for (const Tensor& p : model.params().all()) {
    const float* v = p.data();
    for (int64_t i = 0; i < p.numel(); ++i)
      PELAB_CHECK(std::isfinite(v[i]),
                  "{}: parameter '{}' holds {} at element {}; the checkpoint is corrupt or the "
                  "run diverged",
                  source, p.name(), std::isnan(v[i]) ? "NaN" : "an infinite value", i);
  }
}

RunCheckpoint open_run_checkpoint(const std::string& run_or_checkpoint) {
  std::error_code ec;
  const fs::file_status status = fs::status(run_or_checkpoint, ec);
  const bool names_a_file = fs::path(run_or_checkpoint).extension() == ".safetensors";
  PELAB_CHECK(fs::exists(status),
              "{}: no such {} (give a directory that `pelab train` wrote, or its "
              "checkpoint.safetensors)",
              run_or_checkpoint, names_a_file ? "checkpoint" : "run directory");
  RunCheckpoint run;
  if (fs::is_directory(status)) {
    run.dir = run_or_checkpoint;
    run.checkpoint_path = (fs::path(run.dir) / "checkpoint.safetensors").string();
  } else {
    PELAB_CHECK(fs::is_regular_file(status),
                "{}: not a regular file or directory; give a run directory or its "
                "checkpoint.safetensors",
                run_or_checkpoint);
    run.checkpoint_path = run_or_checkpoint;
    const fs::path parent = fs::path(run_or_checkpoint).parent_path();
    run.dir = parent.empty() ? "." : parent.string();
  }
  const std::string config_path = (fs::path(run.dir) / "config.yaml").string();
  // Named as given: a file outside any run is told as such, not as its parent directory.
  PELAB_CHECK(fs::exists(config_path, ec),
              "{}: no config.yaml beside the checkpoint{}; give a directory that `pelab train` "
              "wrote, or a checkpoint inside one",
              run_or_checkpoint, fs::is_directory(status) ? "" : " (no " + config_path + ")");
  const SafetensorsFile file = read_safetensors(run.checkpoint_path);
  run.config = load_run_config(config_path);
  // As strictly as `--resume`, which refuses any config.yaml that is not the text the run
  // started with. What it resolves to must be the checkpoint's config (a task edited since
  // training shows at the value it changes, vocab_in), and so must the text itself: a value
  // the task determines edited (vocab_out: 5) or a key removed after training is refused,
  // not filled in from the task or a default.
  check_checkpoint_config(file, to_yaml(run.config), config_path);
  check_checkpoint_config(file, run_files::read_text(config_path), config_path);
  check_checkpoint_format(file);
  run.model = load_model(file);
  check_parameters_finite(*run.model, run.checkpoint_path);
  run.progress = checkpoint_progress(file, run.config.training.steps);
  return run;
}

SafetensorsWriter run_checkpoint_tensors(const Encoder& model, const std::string& config_yaml,
                                         const Optimizer& optimizer, const TrainingState& state) {
  SafetensorsWriter w = model_checkpoint(model, config_yaml);
  for (const auto& [name, tensor] : optimizer.state()) w.add("optim." + name, tensor);
  IntTensor rng({8});
  for (int i = 0; i < 4; ++i) {  // four 64-bit words as eight 32-bit halves
    rng.values[2 * i] = static_cast<int32_t>(static_cast<uint32_t>(state.data_rng[i]));
    rng.values[2 * i + 1] = static_cast<int32_t>(static_cast<uint32_t>(state.data_rng[i] >> 32));
  }
  w.add("rng.data", rng);
  w.set_metadata("step", std::to_string(state.step));
  w.set_metadata("optimizer_steps", std::to_string(optimizer.steps_taken()));
  if (state.stop_streak) w.set_metadata("stop_streak", std::to_string(*state.stop_streak));
  if (state.loss) w.set_metadata("loss", fmt::format("{}", *state.loss));  // reads back exactly
  return w;
}

namespace {

// Only what run_checkpoint_tensors writes: the model's parameters, "optim." buffers (the
// optimizer checks their names) and "rng.data". load_parameters has refused names that would
// be parameters; this refuses the other prefixes it lets through.
void check_run_tensors(const SafetensorsFile& file, const Encoder& model) {
  for (const SafetensorsTensor& t : file.tensors)
    PELAB_CHECK(
        model.params().contains(t.name) || t.name.rfind("optim.", 0) == 0 || t.name == "rng.data",
        "{}: tensor '{}' is not part of a run checkpoint (the model's parameters, "
        "optim.* and rng.data)",
        file.source, message_text(t.name));
}

// The data RNG's state from "rng.data"; never all zeros.
Generator::State data_rng_state(const SafetensorsFile& file) {
  const IntTensor halves = file.int_tensor("rng.data");
  PELAB_CHECK(halves.shape == Shape{8},
              "{}: rng.data has shape {}; expected [8] (the data sampler's four 64-bit words "
              "as eight 32-bit halves)",
              file.source, to_string(halves.shape));
  Generator::State s;
  for (int i = 0; i < 4; ++i)
    s[i] = static_cast<uint64_t>(static_cast<uint32_t>(halves.values[2 * i])) |
           (static_cast<uint64_t>(static_cast<uint32_t>(halves.values[2 * i + 1])) << 32);
  PELAB_CHECK(Generator::reachable(s),
              "{}: rng.data is all zeros, a state the data sampler's xoshiro256** never "
              "reaches (it would draw zeros forever)",
              file.source);
  return s;
}

}  // namespace

TrainingState restore_run_checkpoint(const SafetensorsFile& file, Encoder& model,
                                     Optimizer& optimizer, int64_t max_step) {
  check_checkpoint_format(file);
  load_parameters(model, file);
  check_run_tensors(file, model);
  check_parameters_finite(model, file.source);
  const CheckpointProgress progress = checkpoint_progress(file, max_step);
  NamedTensors optimizer_state;
  for (const SafetensorsTensor& t : file.tensors)
    if (t.name.rfind("optim.", 0) == 0)
      optimizer_state.emplace_back(t.name.substr(6), file.tensor(t.name));
  try {
    optimizer.load_state(optimizer_state, progress.optimizer_steps);
  } catch (const Error& e) {
    throw Error(file.source + ": " + e.what());
  }
  TrainingState state;
  state.step = progress.step;
  state.data_rng = data_rng_state(file);
  state.stop_streak = progress.stop_streak;
  if (file.metadata.count("loss")) {
    const std::string& text = file.metadata_value("loss");
    char* end = nullptr;
    const float loss = std::strtof(text.c_str(), &end);
    PELAB_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(loss),
                "{}: __metadata__ 'loss' is '{}'; expected a finite number", file.source,
                message_text(text));
    state.loss = loss;
  }
  return state;
}

const std::vector<std::string>& evaluation_set_keys() {
  static const std::vector<std::string> keys = {
      "positional.scaling.type", "positional.scaling.factor", "positional.scaling.original_length"};
  return keys;
}

void set_for_evaluation(RunCheckpoint& run, const std::vector<std::string>& settings) {
  if (settings.empty()) return;
  const std::vector<std::string>& keys = evaluation_set_keys();
  std::vector<std::string> given;
  for (const std::string& setting : settings) {
    const size_t eq = setting.find('=');
    const std::string key = setting.substr(0, eq);
    PELAB_CHECK(eq != std::string::npos && std::find(keys.begin(), keys.end(), key) != keys.end(),
                "--set {}: an evaluation can set only keys that change no parameter (valid: {})",
                message_text(setting), join(keys));
    // Two values of one key would be one evaluation labelled with both.
    PELAB_CHECK(std::find(given.begin(), given.end(), key) == given.end(),
                "--set {}: {} is set twice; give each key once", message_text(setting), key);
    given.push_back(key);
  }
  // The run's config text (open_run_checkpoint has checked it is config.yaml's) with the
  // settings as overrides: every check of a config applies, and a message names the setting.
  const std::string config_path = (fs::path(run.dir) / "config.yaml").string();
  ExperimentConfig config = parse_experiment(to_yaml(run.config), config_path, settings, run.dir);
  run.model = load_model(read_safetensors(run.checkpoint_path), config.model);
  run.config = std::move(config);
}

}  // namespace pelab
