// `pelab init`: a run directory at step 0, whose checkpoint holds the initial parameters,
// optimizer state and data RNG state; `pelab train --resume` continues it exactly as a fresh
// run would go.
#include <fmt/format.h>

#include <filesystem>

#include "pelab/cli/commands.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/run/trainer.h"

namespace pelab::cli {

namespace fs = std::filesystem;

void add_init_command(CLI::App& app, Action& action) {
  struct InitArgs {
    std::string config;
    std::vector<std::string> overrides;
    std::string out;
  };
  auto ia = std::make_shared<InitArgs>();
  CLI::App* init = app.add_subcommand(
      "init", "Write a run directory at step 0 (initial weights, optimizer and RNG state)");
  init->add_option("config", ia->config, "the experiment config (YAML)")->required();
  init->add_option("overrides", ia->overrides, "key=value overrides, e.g. positional.type=rotary");
  init->add_option("--out", ia->out, "run directory (default: runs/<name>)");
  init->callback([ia, &action] {
    action = [ia] {
      const ExperimentConfig c = load_experiment(ia->config, ia->overrides);
      TrainOptions o;
      o.run_dir = ia->out.empty() ? (fs::path("runs") / c.name).string() : ia->out;
      o.progress = false;
      o.init_only = true;
      for (const char* file : {"checkpoint.safetensors", "config.yaml"})
        PELAB_CHECK(!fs::exists(fs::path(o.run_dir) / file),
                    "{} already holds a run ({}); choose another --out or delete it", o.run_dir,
                    file);
      train_run(c, o);
      std::string command = ia->config;
      for (const std::string& o_ : ia->overrides) command += " " + o_;
      fmt::print("{}: initialised at step 0; train it with pelab train {} --out {} --resume\n",
                 o.run_dir, command, o.run_dir);
      return 0;
    };
  });
}

}  // namespace pelab::cli
