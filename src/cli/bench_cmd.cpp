// `pelab bench gemm`: GFLOP/s of pelab's matmul path and of the bare library call.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "pelab/backend/gemm.h"
#include "pelab/bench/gemm_bench.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

namespace pelab::cli {

void add_bench_commands(CLI::App& app, Action& action) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (figures, not pass/fail tests)");
  bench->require_subcommand(1);

  struct GemmArgs {
    std::string config = "all";
    std::string library = "onednn";
    int threads = 1;
    int samples = 5;
    double min_ms = 20.0;
    std::string json;
  };
  auto args = std::make_shared<GemmArgs>();
  CLI::App* gemm_cmd = bench->add_subcommand(
      "gemm", "pelab's matmul path vs the bare library call at the model's shapes");
  gemm_cmd->add_option("--config", args->config, "tiny, small, medium or all")
      ->check(CLI::IsMember({"tiny", "small", "medium", "all"}));
  gemm_cmd->add_option("--library", args->library, "the library both sides use")
      ->check(CLI::IsMember({"onednn", "openblas"}));
  gemm_cmd->add_option("--threads", args->threads, "OpenMP threads")->check(CLI::Range(1, 256));
  gemm_cmd->add_option("--samples", args->samples, "samples per measurement (median)")
      ->check(CLI::Range(1, 1000));
  gemm_cmd->add_option("--min-ms", args->min_ms, "minimum time per sample, ms")
      ->check(CLI::Range(0.1, 10000.0));
  gemm_cmd->add_option("--json", args->json, "also write the rows as JSON to this file");
  gemm_cmd->callback([args, &action] {
    action = [args] {
      set_num_threads(args->threads);
      set_gemm_backend(parse_gemm_backend(args->library));
      const auto rows = run_gemm_bench(model_gemm_shapes(args->config), args->library,
                                       args->samples, args->min_ms);
      fmt::print("GEMM: pelab's matmul path vs bare {} call, {} thread(s), median GFLOP/s\n",
                 args->library, args->threads);
      fmt::print("{:<34} {:>6} {:>6} {:>6} {:>3}  {:>9} {:>9} {:>7}\n", "shape", "M", "N", "K",
                 "op", "pelab", "bare", "ratio");
      nlohmann::json out = nlohmann::json::array();
      double worst = 1e9;
      for (const auto& r : rows) {
        const std::string op = std::string(r.shape.trans_a ? "T" : "N") + (r.shape.trans_b ? "T" : "N");
        const double ratio = r.pelab_gflops / r.bare_gflops;
        worst = std::min(worst, ratio);
        fmt::print("{:<34} {:>6} {:>6} {:>6} {:>3}  {:>9.1f} {:>9.1f} {:>7.3f}\n", r.shape.label,
                   r.shape.M, r.shape.N, r.shape.K, op, r.pelab_gflops, r.bare_gflops, ratio);
        out.push_back({{"shape", r.shape.label}, {"M", r.shape.M}, {"N", r.shape.N},
                       {"K", r.shape.K}, {"op", op}, {"pelab_gflops", r.pelab_gflops},
                       {"bare_gflops", r.bare_gflops}, {"ratio", ratio}});
      }
      fmt::print("lowest ratio pelab/bare: {:.3f} (target: at least 0.90)\n", worst);
      if (!args->json.empty()) {
        std::ofstream f(args->json);
        PELAB_CHECK(f.good(), "cannot write {}", args->json);
        f << out.dump(2) << "\n";
      }
      return 0;
    };
  });
}

}  // namespace pelab::cli
