// `pelab dump`: one batch through a trained run, its inputs, outputs, attention weights and
// gradients written as a safetensors file (pelab/run/dump.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "pelab/cli/commands.h"
#include "pelab/cli/options.h"
#include "pelab/config/experiment.h"
#include "pelab/core/error.h"
#include "pelab/data/task.h"
#include "pelab/run/dump.h"

namespace pelab::cli {

namespace fs = std::filesystem;

namespace {
bool is_task_name(const std::string& name) {
  const std::vector<std::string> names = task_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

void add_dump_command(CLI::App& app, Action& action) {
  struct DumpArgs {
    std::string run;
    std::string batch;
    std::vector<int64_t> lengths;
    int64_t count = 1;
    uint64_t seed = 0;
    std::string pad = "right";
    std::string positions;
    bool attention = false;
    bool grads = false;
    std::string out;
    bool overwrite = false;
  };
  auto da = std::make_shared<DumpArgs>();
  CLI::App* dump = app.add_subcommand(
      "dump",
      "Run one batch through a trained run and write its inputs, logits, loss, attention "
      "weights and gradients as a safetensors file");
  dump->add_option("run", da->run, "a run directory (or a checkpoint inside one)")->required();
  dump->add_option("--batch", da->batch,
                   "a dataset file (JSONL or TSV), taken as written, in file order; or a "
                   "generated task's name, with --lengths")
      ->required();
  CLI::Option* lengths =
      add_integer_list(dump, "--lengths", da->lengths, range_of<int64_t>(1, kMaxProblemSize),
                       "with a task: problem sizes, e.g. 4,8");
  add_integer(dump, "--count", da->count, range_of<int64_t>(1, kMaxProblemSize),
              "with a task: examples per length (default 1)")
      ->needs(lengths);
  // A seed as a config takes it (seed: must be >= 0), never wrapped around.
  add_integer(dump, "--seed", da->seed, range_of<int64_t>(0),
              "with a task: the seed, as `pelab gen` takes it (default 0)")
      ->needs(lengths);
  dump->add_option("--pad", da->pad, "pad on the right (default) or the left")
      ->check(CLI::IsMember({"right", "left"}));
  dump->add_option("--positions", da->positions,
                   "shift=K for p = t + K, or a file with one line of positions per example "
                   "(default p = t)");
  dump->add_flag("--attention", da->attention, "also every layer's attention weights");
  dump->add_flag("--grads", da->grads, "also the gradient of the loss for every parameter");
  dump->add_option("--out", da->out, "the safetensors file to write (a new one)")->required();
  dump->add_flag("--overwrite", da->overwrite,
                 "replace --out if it exists (never a file of a run directory)");
  dump->callback([da, lengths, &action] {
    action = [da, lengths] {
      DumpRequest r;
      r.run = da->run;
      // A task name is only ever given with --lengths; without, --batch is a file.
      if (lengths->count() > 0) {
        PELAB_CHECK(!fs::exists(da->batch),
                    "--batch {} is a file; --lengths, --count and --seed are for a task name",
                    da->batch);
        r.source.task = da->batch;
        r.source.lengths = da->lengths;
        r.source.count = da->count;
        r.source.seed = da->seed;
      } else {
        PELAB_CHECK(fs::exists(da->batch) || !is_task_name(da->batch),
                    "--batch {} is a task; give its problem sizes with --lengths (and --count, "
                    "--seed)",
                    da->batch);
        r.source.file = da->batch;
      }
      r.options.padding = parse_padding(da->pad);
      r.options.positions = da->positions;
      r.options.attention = da->attention;
      r.options.grads = da->grads;
      r.out = da->out;
      r.overwrite = da->overwrite;
      fmt::print("{}\n", run_dump(r));
      return 0;
    };
  });
}

}  // namespace pelab::cli
