// `pelab eval` on mutated checkpoints: bytes as the checkpoint of a small run directory,
// opened the way `pelab eval RUN/checkpoint.safetensors` opens it (open_run_checkpoint: the
// reader, the stored config against config.yaml, the model, finite weights), then evaluated
// at the config's lengths and printed as `pelab eval` prints.
//
// The run is trained once at start-up from kConfig, so its config.yaml is always the text this
// build writes. corpus/eval_checkpoint/ holds checkpoints of the same run; with
// PELAB_FUZZ_SEED=FILE the target first writes its own fresh checkpoint to FILE (tools/fuzz.sh
// adds one to the working corpus that way, so the seeds never go stale when defaults change).
// The input's last byte chooses `pelab eval --set` settings to apply to the opened run.
#include <fmt/format.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "pelab/config/experiment.h"
#include "pelab/core/parallel.h"
#include "pelab/data/task.h"
#include "pelab/run/evaluate.h"
#include "pelab/run/run_checkpoint.h"
#include "pelab/run/trainer.h"

namespace {

namespace fs = std::filesystem;

// Small: inputs of about 20 KB, evaluations that take milliseconds.
const std::string kConfig = R"(name: fuzz
seed: 0
model:
  d_model: 8
  heads: 2
  layers: 1
positional:
  type: rotary
task:
  name: shift
  shift: 1
  min_length: 1
  max_length: 4
training:
  steps: 2
  batch_size: 2
  warmup: 1
evaluation:
  lengths: [3, 6]
  examples: 2
)";
// `pelab eval --set` settings, a subset of which each input applies: each key that may be set,
// one value out of range, one key that may not be set, and one key given twice.
const std::vector<std::string> kSettings = {
    "positional.scaling.type=yarn",         "positional.scaling.factor=4",
    "positional.scaling.original_length=4", "positional.scaling.type=dynamic_ntk",
    "positional.scaling.factor=0.5",        "model.d_model=4",
    "positional.scaling.factor=2",          "positional.scaling.type=pi"};
// The run directory, removed at exit.
fs::path g_run;

void remove_run() {
  std::error_code ec;
  fs::remove_all(g_run.parent_path(), ec);
}

// Trains the run the inputs are checkpoints of; aborts if it cannot (a broken build, not an
// input, is at fault).
void train_reference_run() {
  std::string dir = (fs::temp_directory_path() / "pelab-fuzz-eval-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_run = fs::path(dir) / "run";
  std::atexit(remove_run);
  try {
    const pelab::ExperimentConfig c =
        pelab::parse_experiment(kConfig, "fuzz.yaml", {}, PELAB_SOURCE_DIR "/configs");
    pelab::TrainOptions o;
    o.run_dir = g_run.string();
    o.progress = false;
    if (!pelab::train_run(c, o).completed) std::abort();
  } catch (const pelab::Error& e) {
    std::fprintf(stderr, "the reference run does not train: %s\n", e.what());
    std::abort();
  }
  if (const char* seed = std::getenv("PELAB_FUZZ_SEED"))
    fs::copy_file(g_run / "checkpoint.safetensors", seed, fs::copy_options::overwrite_existing);
  pelab::set_num_threads(1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  train_reference_run();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = (g_run / "checkpoint.safetensors").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out.flush()) std::abort();
  }
  try {
    pelab::RunCheckpoint run = pelab::open_run_checkpoint(path);
    // `pelab eval --set`: the settings (good and bad) chosen by the input's last byte; they
    // read the checkpoint again with the config they give.
    std::vector<std::string> settings;
    for (size_t i = 0; i < kSettings.size(); ++i)
      if (size > 0 && (data[size - 1] >> i) & 1) settings.push_back(kSettings[i]);
    pelab::set_for_evaluation(run, settings);
    const std::unique_ptr<pelab::Task> task = pelab::make_task(run.config.task);
    const pelab::Evaluation e = pelab::evaluate(*run.model, *task, run.config);
    std::string table;
    for (const pelab::LengthResult& r : e.by_length)
      table +=
          fmt::format("{:>7} {:>7} {:>9.4f} {:>9.4f} {:>9.4f} {:>9}\n", r.length, r.tokens,
                      r.token_accuracy, r.sequence_accuracy, r.loss, r.in_training ? "yes" : "no");
    if (table.empty()) std::abort();  // the config's lengths are evaluated
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  return 0;
}
