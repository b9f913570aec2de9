#include "pelab/experiment/run_checkpoint.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <system_error>

#include "pelab/config/load_model.h"
#include "pelab/core/error.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

std::string trimmed(const std::string& line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? "" : line.substr(first);
}

// The first line where two texts differ, for an error message ("line 7: 'causal: true' in
// one, 'causal: false' in the other").
std::string first_difference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  while (true) {
    const size_t end_a = a.find('\n', start), end_b = b.find('\n', start);
    const std::string la = a.substr(start, end_a == std::string::npos ? end_a : end_a - start);
    const std::string lb = b.substr(start, end_b == std::string::npos ? end_b : end_b - start);
    if (la != lb)
      return fmt::format("line {}: '{}' in the checkpoint, '{}' in config.yaml", line, trimmed(la),
                         trimmed(lb));
    if (end_a != end_b)
      return fmt::format("line {}: '{}' ends the text in {} but not in {}", line, trimmed(la),
                         end_a == std::string::npos ? "the checkpoint" : "config.yaml",
                         end_a == std::string::npos ? "config.yaml" : "the checkpoint");
    if (end_a == std::string::npos) return "the texts differ";
    start = end_a + 1;
    ++line;
  }
}

}  // namespace

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
              file.source, config_path, first_difference(stored->second, config_yaml));
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
  check_checkpoint_config(file, to_yaml(run.config), config_path);
  run.model = load_model(file);
  check_parameters_finite(*run.model, run.checkpoint_path);
  return run;
}

}  // namespace pelab
