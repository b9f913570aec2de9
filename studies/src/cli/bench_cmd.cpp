// `pelab bench`: the command line of the benchmarks in pelab/bench/bench_suite.h (training
// speed of the reference configs and of the shipped experiments, every case in a child process
// of its own, the reference configs optionally side by side with the PyTorch reference script;
// `pelab bench gemm`: pelab's matmul path vs the bare library call; `pelab bench attention`:
// the attention op alone). It only parses options;
// the library runs and prints the benchmarks.
#include <cstdlib>
#include <memory>

#include "cli/pelab_commands.h"
#include "pelab/bench/attention_bench.h"
#include "pelab/bench/bench_suite.h"
#include "pelab/config/experiment.h"

namespace pelab::cli {

namespace {

// The training benchmark's options (also those of the internal one-case runs).
void add_train_bench_options(CLI::App* bench, TrainBenchOptions* ta) {
  add_name_list(bench, "--config", ta->configs,
                "configs (comma-separated): the reference configs tiny, small, medium (the "
                "default); or shipped experiments, each as pelab train runs it: default, "
                "quickstart, claim (studies/configs/claims/c01.yaml), survey "
                "(configs/tasks/reverse.yaml), deletang "
                "(studies/configs/reproductions/deletang.yaml with task.name=reverse "
                "task.symbols=2: R1's run)"
                ", or an experiment's .yaml path");
  add_name_list(bench, "--scheme", ta->schemes,
                "schemes (reference configs: default every registered scheme, as `pelab "
                "schemes` lists them; experiments: default their own, others as the positional "
                "group)");
  add_integer_list(bench, "--threads", ta->threads, range_of<int>(1, kMaxThreads),
                   "thread counts, e.g. 1,2");
  add_integer(bench, "--warmup", ta->warmup, range_of<int>(0, 10000), "untimed steps first");
  add_integer(bench, "--steps", ta->steps, range_of<int>(1, 100000), "timed steps at most");
  add_integer(bench, "--min-steps", ta->min_steps, range_of<int>(1, 100000),
              "timed steps at least");
  add_number(bench, "--max-seconds", ta->max_seconds, NumberRange{0, 1e6},
             "stop timing after this (>= --min-steps)");
  add_integer(bench, "--repeats", ta->repeats, range_of<int>(1, 100),
              "runs per case (alternating with PyTorch); median");
  add_number(bench, "--peak-gflops", ta->peak_gflops, NumberRange{1, 1e6},
             "FMA peak of one core in GFLOP/s, for the % of peak column (default: measured on "
             "this machine at the start)");
  bench->add_option("--json", ta->json_path, "also write the results as JSON to this file");
  bench->add_flag("--vs-torch", ta->vs_torch,
                  "run the PyTorch reference script for the same cases, alternating, and print "
                  "the ratio of tokens/s (reference configs only)");
  bench->add_option("--torch-script", ta->torch_script,
                    "the PyTorch reference script (default: $PELAB_TORCH_SCRIPT, else "
                    "./torch_ref.py)");
  bench->add_option("--python", ta->python, "the Python that runs it");
  bench
      ->add_option("--omp-wait", ta->omp_wait,
                   "OMP_WAIT_POLICY for runs with more than one thread, both sides: passive "
                   "(idle workers sleep; for a shared machine), active (they spin), or default "
                   "(the default: unset, the OpenMP runtime's own policy, as pelab train runs)")
      ->check(CLI::IsMember({"passive", "active", "default"}));
  bench
      ->add_option("--gemm", ta->gemm,
                   "pelab's GEMM backend: auto (the default, what pelab train uses), onednn, "
                   "openblas or packed (pelab's own kernel)")
      ->check(CLI::IsMember({"auto", "onednn", "openblas", "packed"}));
  bench->add_flag("--smoke", ta->smoke,
                  "tiny, every scheme, two steps each through the child processes (a check, "
                  "not a measurement)");
  add_integer_list(bench, "--long", ta->long_lengths, range_of<int64_t>(1, int64_t{1} << 20),
                   "instead of training: evaluate one sequence of each of these lengths "
                   "(e.g. 4096,8192) and report time and peak RSS");
  bench->add_option("--case", ta->one_case, "internal: run one config:scheme:threads case here")
      ->group("");
  bench
      ->add_option("--eval-case", ta->one_eval_case,
                   "internal: run one config:scheme:length:threads evaluation here")
      ->group("");
}

CLI::App* add_gemm_command(CLI::App* bench, Action& action) {
  auto args = std::make_shared<GemmBenchOptions>();
  CLI::App* gemm_cmd = bench->add_subcommand(
      "gemm", "pelab's matmul path vs the bare library call at the model's shapes");
  gemm_cmd->add_option("--config", args->config, "tiny, small, medium or all")
      ->check(CLI::IsMember({"tiny", "small", "medium", "all"}));
  gemm_cmd->add_option("--library", args->library, "the library both sides use")
      ->check(CLI::IsMember({"onednn", "openblas"}));
  gemm_cmd
      ->add_option(
          "--backend", args->backend,
          "pelab's side through this backend instead (auto, onednn, openblas, packed, reference)")
      ->check(CLI::IsMember({"auto", "onednn", "openblas", "packed", "reference"}));
  add_integer(gemm_cmd, "--threads", args->threads, range_of<int>(1, kMaxThreads),
              "OpenMP threads");
  add_integer(gemm_cmd, "--samples", args->samples, range_of<int>(1, 1000),
              "samples per measurement (median)");
  add_number(gemm_cmd, "--min-ms", args->min_ms, NumberRange{0.1, 10000},
             "minimum time per sample, ms");
  gemm_cmd->add_option("--json", args->json, "also write the rows as JSON to this file");
  gemm_cmd->callback([args, &action] { action = [args] { return print_gemm_bench(*args); }; });
  return gemm_cmd;
}

CLI::App* add_bench_attention_command(CLI::App* bench, Action& action) {
  auto args = std::make_shared<AttentionBenchOptions>();
  CLI::App* cmd = bench->add_subcommand(
      "attention", "the fused attention op alone, forward and backward, at a small model's shapes");
  add_integer_list(cmd, "--length", args->lengths, range_of<int64_t>(1, 4096),
                   "sequence lengths (comma-separated; default 42, R1's reverse at its mean size)");
  add_integer(cmd, "--batch", args->batch, range_of<int64_t>(1, 4096), "sequences a call");
  add_integer(cmd, "--d-model", args->d_model, range_of<int64_t>(1, 4096), "model width");
  add_integer(cmd, "--heads", args->heads, range_of<int64_t>(1, 256), "heads (divide d_model)");
  add_number(cmd, "--dropout", args->dropout, NumberRange{0.0, 0.99}, "attention dropout");
  add_integer(cmd, "--threads", args->threads, range_of<int>(1, kMaxThreads), "OpenMP threads");
  add_integer(cmd, "--calls", args->calls, range_of<int>(1, 100000),
              "timed calls per length (median; 20 untimed first)");
  cmd->add_option("--json", args->json, "also write the rows as JSON to this file");
  cmd->callback([args, &action] { action = [args] { return print_attention_bench(*args); }; });
  return cmd;
}

}  // namespace

void add_bench_commands(CLI::App& app, Action& action) {
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Benchmarks (figures, not pass/fail tests): training speed of the reference configs, "
      "optionally against the PyTorch reference script, and of the shipped experiments "
      "(--config default); `bench gemm` for the GEMM path; `bench attention` for the attention "
      "op");
  bench->require_subcommand(0, 1);
  auto ta = std::make_shared<TrainBenchOptions>();
  add_train_bench_options(bench, ta.get());
  CLI::App* gemm_cmd = add_gemm_command(bench, action);
  CLI::App* attention_cmd = add_bench_attention_command(bench, action);

  // The train benchmark runs when no subcommand was given (CLI11 calls the parent's callback
  // after the subcommand's).
  bench->callback([bench, gemm_cmd, attention_cmd, ta, &action] {
    if (bench->got_subcommand(gemm_cmd) || bench->got_subcommand(attention_cmd)) return;
    action = [bench, ta] {
      // PELAB_GEMM (checked before any command runs) stands in for a --gemm not given.
      const char* env = std::getenv("PELAB_GEMM");
      if (bench->count("--gemm") == 0 && env && *env) ta->gemm = env;
      return run_train_bench(*ta);
    };
  });
}

}  // namespace pelab::cli
