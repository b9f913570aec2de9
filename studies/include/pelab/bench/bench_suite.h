// What `pelab bench` runs, as tables on stdout (figures, not pass/fail tests):
//   run_train_bench   training-step speed of the reference configs and of the shipped
//                     experiments (--config default), every case in a child process of its
//                     own (so each peak RSS is the case's), the reference configs optionally
//                     side by side with the PyTorch reference script; or long evaluation (--long)
//   print_gemm_bench  pelab's matmul path against the bare library call (`bench gemm`)
// The command line only parses the options into these structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pelab {

struct TrainBenchOptions {
  // Reference configs and experiments (pelab/bench/experiment_bench.h).
  std::vector<std::string> configs{"tiny", "small", "medium"};
  std::vector<std::string> schemes;  // empty = all (an experiment: its own)
  std::vector<int> threads{1};
  int warmup = 5, steps = 30, min_steps = 10;
  double max_seconds = 8.0;
  int repeats = 1;
  double peak_gflops = 0.0;  // FMA peak of one core; 0 = measure it on this machine
  std::string json_path;
  bool vs_torch = false;
  std::string torch_script;
  std::string python = "/usr/bin/python3";
  // OMP_WAIT_POLICY of the children with threads > 1: "default" leaves it as pelab train has it
  std::string omp_wait = "default";
  std::string gemm = "auto";  // pelab's GEMM backend (auto: what pelab train uses)
  bool smoke = false;
  std::string one_case;  // internal: "config:scheme:threads", run here, print one JSON line
  std::vector<int64_t> long_lengths;  // evaluation at these lengths instead of training
  std::string one_eval_case;          // internal: "config:scheme:length:threads"
};

// Runs the training benchmark (or one internal case, in the child that runs it) and prints
// its table; writes JSON when json_path is set. Returns the exit code.
int run_train_bench(TrainBenchOptions options);

struct GemmBenchOptions {
  std::string config = "all";
  std::string library = "onednn";
  std::string backend;  // pelab's side; default: the same library
  int threads = 1;
  int samples = 5;
  double min_ms = 20.0;
  std::string json;
};

// Runs the GEMM comparison and prints its table; writes JSON when `json` is set.
int print_gemm_bench(const GemmBenchOptions& options);

}  // namespace pelab
