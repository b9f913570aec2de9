#include "pelab/bench/experiment_bench.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <numeric>
#include <utility>

#include "pelab/autograd/autograd.h"
#include "pelab/config/yaml_reader.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/core/strings.h"
#include "pelab/run/trainer.h"

namespace pelab {

namespace {
namespace fs = std::filesystem;

// Each named case: its file, relative to a configs directory of the search path, and the
// overrides that make it the case. The studies' configs sit beside the framework's configs
// directory, in the source tree and installed alike (studies/configs,
// share/pelab/studies/configs).
struct NamedCase {
  std::string name, file;
  std::vector<std::string> overrides;
};
const std::vector<NamedCase>& named_cases() {
  static const std::vector<NamedCase> cases = {
      {"default", "default.yaml", {}},
      {"quickstart", "quickstart.yaml", {}},
      {"claim", "../studies/configs/claims/c01.yaml", {}},
      {"survey", "tasks/reverse.yaml", {}},
      // R1's encoder on its string tasks' binary alphabet: the run R1 and R2 train thousands of.
      {"deletang",
       "../studies/configs/reproductions/deletang.yaml",
       {"task.name=reverse", "task.symbols=2"}},
  };
  return cases;
}

// A shipped config: the first configs directory of the search path that holds `relative`.
std::string find_in_search_path(const std::string& name, const std::string& relative) {
  // The search path after a config's own configs directory, which a named case has not.
  std::vector<std::string> dirs = config_search_path("");
  dirs.erase(std::remove(dirs.begin(), dirs.end(), std::string()), dirs.end());
  for (const std::string& dir : dirs) {
    const fs::path path = fs::path(dir) / relative;
    if (fs::exists(path)) return path.string();
  }
  throw Error(fmt::format(
      "bench --config {}: no {} in the config search path ({}); set PELAB_CONFIG_PATH to a "
      "configs directory that has it",
      name, relative, dirs.empty() ? std::string("empty") : join(dirs)));
}

bool looks_like_path(const std::string& config) {
  const auto ends_with = [&](const std::string& tail) {
    return config.size() >= tail.size() &&
           config.compare(config.size() - tail.size(), tail.size(), tail) == 0;
  };
  return config.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

// A claim config's experiment: settings.experiment (relative to the claim's file) and
// settings.overrides, less the sweep axes (a case is one run).
ExperimentCase claim_experiment(const std::string& path, const YAML::Node& root) {
  const YAML::Node settings = root["settings"];
  PELAB_CHECK(
      settings && settings.IsMap() && settings["experiment"] && settings["experiment"].IsScalar(),
      "bench --config {}: a claim config without settings.experiment trains no "
      "experiment to time",
      path);
  ExperimentCase c;
  c.path =
      (fs::path(path).parent_path() / settings["experiment"].Scalar()).lexically_normal().string();
  if (const YAML::Node overrides = settings["overrides"]; overrides && overrides.IsSequence())
    for (const YAML::Node& o : overrides)
      if (o.IsScalar() && o.Scalar().rfind("sweep.", 0) != 0) c.overrides.push_back(o.Scalar());
  return c;
}

}  // namespace

const std::vector<std::string>& experiment_case_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const NamedCase& c : named_cases()) v.push_back(c.name);
    return v;
  }();
  return names;
}

bool is_reference_config(const std::string& config) {
  const std::vector<BenchConfig>& refs = bench_configs();
  return std::any_of(refs.begin(), refs.end(),
                     [&](const BenchConfig& c) { return c.name == config; });
}

ExperimentCase find_experiment_case(const std::string& config) {
  std::string path;
  std::vector<std::string> overrides;
  for (const NamedCase& c : named_cases())
    if (c.name == config) {
      path = find_in_search_path(c.name, c.file);
      overrides = c.overrides;
    }
  if (path.empty()) {
    PELAB_CHECK(looks_like_path(config),
                "unknown bench config '{}' (valid: tiny, small, medium, {}, or the path of an "
                "experiment's .yaml)",
                message_text(config), join(experiment_case_names()));
    PELAB_CHECK(fs::exists(config), "bench --config {}: no such file", message_text(config));
    path = config;
  }
  const YAML::Node root = load_yaml_file(path);
  if (root.IsMap() && root["claim"]) return claim_experiment(path, root);
  return {path, overrides};
}

ExperimentConfig load_experiment_case(const std::string& config, const std::string& scheme,
                                      int threads) {
  ExperimentCase c = find_experiment_case(config);
  std::vector<std::string> overrides = c.overrides;
  if (!scheme.empty()) overrides.push_back("positional=" + scheme);
  overrides.push_back(fmt::format("threads={}", threads));
  overrides.push_back("sweep={}");  // as a sweep's run: one run, whatever its axes
  return load_experiment(c.path, overrides);
}

TrainCaseResult run_experiment_case(const std::string& config, const std::string& scheme,
                                    const TrainCaseOptions& o) {
  const ExperimentConfig c = load_experiment_case(config, scheme, o.threads);
  set_num_threads(static_cast<int>(c.threads));
  set_check_finite(c.training.check_finite);
  Training training(c);
  const std::function<std::string()> last_good = [] {
    return std::string("the benchmark writes no checkpoint");
  };
  // Per step, warm-up included: real tokens, and the padded batch's B and T.
  std::vector<double> real_tokens;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  int64_t step = 0;
  const StepTiming t = time_steps(o, [&] {
    std::vector<Example> examples;
    const Batch batch = training.stream.next(&examples);
    const StepStats s = train_step(c, training, batch, step++, last_good);
    double real = 0;
    for (const Example& e : examples) real += static_cast<double>(e.tokens.size());
    real_tokens.push_back(real);
    shapes.emplace_back(batch.tokens.shape[0], batch.tokens.shape[1]);
    return static_cast<double>(s.loss);
  });

  TrainCaseResult r;
  r.config = config;
  r.scheme = c.model.positional.type;
  r.threads = static_cast<int>(c.threads);
  r.steps = t.steps;
  r.ms_median = t.ms_median;
  r.ms_min = t.ms_min;
  const size_t first_timed = real_tokens.size() - static_cast<size_t>(t.steps);
  double padded = 0, flops = 0;
  for (size_t i = first_timed; i < shapes.size(); ++i) {
    const auto [B, T] = shapes[i];
    padded += static_cast<double>(B * T);
    flops += matmul_flops(c.model, B, T, real_tokens[i]);
  }
  r.tokens_per_step = padded / t.steps;
  r.real_tokens_per_step =
      std::accumulate(real_tokens.begin() + static_cast<std::ptrdiff_t>(first_timed),
                      real_tokens.end(), 0.0) /
      t.steps;
  r.tokens_per_s = r.tokens_per_step / (r.ms_median * 1e-3);
  r.real_tokens_per_s = r.real_tokens_per_step / (r.ms_median * 1e-3);
  r.gflop_per_step = flops / t.steps / 1e9;
  r.gflops = r.gflop_per_step / (r.ms_median * 1e-3);
  r.final_loss = t.final_loss;
  return r;
}

}  // namespace pelab
