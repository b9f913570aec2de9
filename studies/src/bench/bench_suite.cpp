#include "pelab/bench/bench_suite.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "pelab/backend/gemm.h"
#include "pelab/bench/experiment_bench.h"
#include "pelab/bench/fma_peak.h"
#include "pelab/bench/gemm_bench.h"
#include "pelab/bench/train_bench.h"
#include "pelab/core/error.h"
#include "pelab/core/machine.h"
#include "pelab/core/parallel.h"
#include "pelab/core/process.h"
#include "pelab/io/read_file.h"

namespace pelab {

namespace {
using json = nlohmann::json;
namespace fs = std::filesystem;

// Runs a benchmark's child process; returns (exit status, stdout).
std::pair<int, std::string> run_child(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& extra_env = {}) {
  try {
    CapturedRun run = run_captured(argv, extra_env);
    return {run.status, std::move(run.out)};
  } catch (const Error& e) {
    throw Error(fmt::format("bench: {}", e.what()));
  }
}

// The last line of `text` that parses as a JSON object.
std::optional<json> last_json_line(const std::string& text) {
  std::optional<json> found;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && line[0] == '{') {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) found = std::move(j);
    }
    start = end + 1;
  }
  return found;
}

json to_json(const TrainCaseResult& r) {
  return {{"config", r.config},
          {"scheme", r.scheme},
          {"threads", r.threads},
          {"steps", r.steps},
          {"ms_median", r.ms_median},
          {"ms_min", r.ms_min},
          {"tokens_per_step", r.tokens_per_step},
          {"tokens_per_s", r.tokens_per_s},
          {"real_tokens_per_step", r.real_tokens_per_step},
          {"real_tokens_per_s", r.real_tokens_per_s},
          {"gflop_per_step", r.gflop_per_step},
          {"gflops", r.gflops},
          {"final_loss", r.final_loss},
          {"peak_rss_mb", r.peak_rss_mb}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(sep, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

int run_one_eval_case(const TrainBenchOptions& a) {
  const std::vector<std::string> f = split(a.one_eval_case, ':');
  PELAB_CHECK(f.size() == 4, "--eval-case wants config:scheme:length:threads, got '{}'",
              a.one_eval_case);
  set_gemm_backend(parse_gemm_backend(a.gemm));
  EvalCaseResult r = run_eval_case(f[0], f[1], std::stoll(f[2]), std::stoi(f[3]));
  r.peak_rss_mb = peak_rss_mb();
  fmt::print("{}\n", json{{"config", r.config},
                          {"scheme", r.scheme},
                          {"length", r.length},
                          {"threads", r.threads},
                          {"ms", r.ms},
                          {"peak_rss_mb", r.peak_rss_mb},
                          {"full_scores_mb", r.full_scores_mb}}
                         .dump());
  return 0;
}

// Says so when pelab's side of a benchmark does not use the backend pelab train uses.
void print_gemm_choice(const TrainBenchOptions& a) {
  if (a.gemm != "auto")
    fmt::print("pelab's GEMMs through the '{}' backend (pelab train uses auto)\n", a.gemm);
  if (!openblas_vectorised())
    fmt::print(
        "OpenBLAS runs its generic '{}' kernel on this CPU (it does not know the model): auto "
        "leaves it out; PyTorch from Debian uses it too, unless OPENBLAS_CORETYPE names the "
        "CPU's kind (e.g. SkylakeX, Haswell)\n",
        openblas_core());
}

// Where --vs-torch finds the PyTorch reference script unless --torch-script says.
std::string find_torch_script(const TrainBenchOptions& a) {
  if (!a.torch_script.empty()) {
    PELAB_CHECK(fs::exists(a.torch_script), "--torch-script {}: no such file", a.torch_script);
    require_regular_file(a.torch_script, "the PyTorch reference script (--torch-script)");
    return a.torch_script;
  }
  if (const char* env = std::getenv("PELAB_TORCH_SCRIPT"); env && *env) {
    PELAB_CHECK(fs::exists(env), "PELAB_TORCH_SCRIPT={}: no such file", env);
    require_regular_file(env, "the PyTorch reference script (PELAB_TORCH_SCRIPT)");
    return env;
  }
  if (fs::exists("torch_ref.py")) {
    require_regular_file("torch_ref.py", "the PyTorch reference script");
    return "torch_ref.py";
  }
  throw Error(
      "--vs-torch needs the PyTorch reference script (torch_ref.py): pass --torch-script PATH, "
      "set PELAB_TORCH_SCRIPT, or run from the directory that holds it");
}

// "config:scheme:threads" → its three fields; the config may be a path holding ':' and the
// scheme may be empty (an experiment's own).
std::vector<std::string> case_fields(const std::string& one_case) {
  const size_t last = one_case.rfind(':');
  const size_t middle =
      last == std::string::npos || last == 0 ? std::string::npos : one_case.rfind(':', last - 1);
  PELAB_CHECK(middle != std::string::npos, "--case wants config:scheme:threads, got '{}'",
              one_case);
  return {one_case.substr(0, middle), one_case.substr(middle + 1, last - middle - 1),
          one_case.substr(last + 1)};
}

int run_one_case(const TrainBenchOptions& a) {
  const std::vector<std::string> f = case_fields(a.one_case);
  TrainCaseOptions o;
  o.threads = std::stoi(f[2]);
  o.warmup = a.warmup;
  o.max_steps = a.steps;
  o.min_steps = std::min(a.min_steps, a.steps);
  o.max_seconds = a.max_seconds;
  set_gemm_backend(parse_gemm_backend(a.gemm));
  TrainCaseResult r = is_reference_config(f[0]) ? run_train_case(f[0], f[1], o)
                                                : run_experiment_case(f[0], f[1], o);
  r.peak_rss_mb = peak_rss_mb();
  fmt::print("{}\n", to_json(r).dump());
  return 0;
}

// Long evaluation, each (config, scheme, length, threads) in a child process of its own.
int run_long_bench(const TrainBenchOptions& a, const std::vector<std::string>& schemes,
                   const std::string& self) {
  fmt::print(
      "pelab bench --long: one forward pass without gradients on one sequence of each "
      "length; attention in blocks of query rows\n");
  print_gemm_choice(a);
  fmt::print("{:<7} {:<11} {:>6} {:>2} {:>9} {:>8}  {:>22}\n", "config", "scheme", "T", "th", "ms",
             "RSS MB", "one layer's [H,T,T], MB");
  json rows = json::array();
  for (const std::string& config : a.configs)
    for (const std::string& scheme : schemes)
      for (int64_t length : a.long_lengths)
        for (int threads : a.threads) {
          const auto [status, out] = run_child(
              {self, "bench", "--eval-case",
               fmt::format("{}:{}:{}:{}", config, scheme, length, threads), "--gemm", a.gemm});
          const std::optional<json> j = last_json_line(out);
          PELAB_CHECK(status == 0 && j, "bench: the evaluation {} {} T={} failed (exit status {})",
                      config, scheme, length, status);
          fmt::print("{:<7} {:<11} {:>6} {:>2} {:>9.1f} {:>8.0f}  {:>22.0f}\n", config, scheme,
                     length, threads, (*j)["ms"].get<double>(), (*j)["peak_rss_mb"].get<double>(),
                     (*j)["full_scores_mb"].get<double>());
          std::fflush(stdout);
          rows.push_back(*j);
        }
  if (!a.json_path.empty()) {
    std::ofstream f(a.json_path);
    PELAB_CHECK(f.good(), "cannot write {}", a.json_path);
    f << json{{"gemm", a.gemm}, {"long_eval", rows}}.dump(2) << "\n";
  }
  return 0;
}

// The training benchmark proper: every (config, scheme, threads) case `repeats` times in a
// child process, one table row per case. The cases of one (config, scheme) alternate round by
// round — each thread count, then the PyTorch reference when asked — so that a drift in the
// machine's speed hits them all, and the thread scaling is taken round by round.
class TrainBench {
 public:
  TrainBench(const TrainBenchOptions& a, std::vector<std::string> schemes, std::string self)
      : a_(a),
        schemes_(std::move(schemes)),
        self_(std::move(self)),
        script_(a.vs_torch ? find_torch_script(a) : ""),
        tmp_json_((fs::temp_directory_path() / fmt::format("pelab-bench-torch-{}.jsonl", getpid()))
                      .string()) {}

  int run() {
    find_peak();
    print_header();
    json rows = json::array();
    for (const std::string& config : a_.configs)
      for (const std::string& scheme : schemes_of(config))
        for (json& row : measure(config, scheme)) rows.push_back(std::move(row));
    const json scaling = print_scaling();
    if (!a_.json_path.empty()) {
      std::ofstream f(a_.json_path);
      PELAB_CHECK(f.good(), "cannot write {}", a_.json_path);
      f << json{{"cpu", cpu_model_name()},
                {"isa", cpu_vector_isa()},
                {"peak_gflops_per_thread", a_.peak_gflops},
                {"peak_source", peak_source_},
                {"gemm", a_.gemm},
                {"openblas_core", openblas_core()},
                {"omp_wait", a_.omp_wait},
                {"rows", rows},
                {"scaling", scaling}}
               .dump(2)
        << "\n";
    }
    return 0;
  }

 private:
  // OMP_WAIT_POLICY for a child with more than one thread: none by default (the OpenMP
  // runtime's own policy, which pelab train runs with), PASSIVE (workers sleep: on a shared
  // machine a spinning worker takes the core the other thread needs) or ACTIVE when asked.
  std::vector<std::string> omp_env(int threads) const {
    return threads > 1 && a_.omp_wait != "default"
               ? std::vector<std::string>{a_.omp_wait == "passive" ? "OMP_WAIT_POLICY=PASSIVE"
                                                                   : "OMP_WAIT_POLICY=ACTIVE"}
               : std::vector<std::string>{};
  }

  // A reference config runs every benchmark scheme, a shipped experiment its own scheme (""),
  // unless --scheme names them.
  std::vector<std::string> schemes_of(const std::string& config) const {
    if (is_reference_config(config)) return schemes_;
    return a_.schemes.empty() ? std::vector<std::string>{""} : a_.schemes;
  }

  json run_pelab(const std::string& config, const std::string& scheme, int threads) const {
    const auto [status, out] =
        run_child({self_, "bench", "--case", fmt::format("{}:{}:{}", config, scheme, threads),
                   "--warmup", std::to_string(a_.warmup), "--steps", std::to_string(a_.steps),
                   "--min-steps", std::to_string(a_.min_steps), "--max-seconds",
                   fmt::format("{}", a_.max_seconds), "--gemm", a_.gemm},
                  omp_env(threads));
    const std::optional<json> j = last_json_line(out);
    PELAB_CHECK(status == 0 && j, "bench: the case {} {} {} thread(s) failed (exit status {})",
                config, scheme.empty() ? "(its own scheme)" : scheme, threads, status);
    return *j;
  }

  std::optional<json> run_torch(const std::string& config, const std::string& scheme,
                                int threads) const {
    const std::string name = torch_scheme_name(scheme);
    std::error_code ignored;
    fs::remove(tmp_json_, ignored);
    std::vector<std::string> argv{a_.python,       script_,
                                  "--config",      config,
                                  "--scheme",      name,
                                  "--threads",     std::to_string(threads),
                                  "--warmup",      std::to_string(a_.warmup),
                                  "--steps",       std::to_string(a_.steps),
                                  "--min-steps",   std::to_string(a_.min_steps),
                                  "--max-seconds", fmt::format("{}", a_.max_seconds),
                                  "--json",        tmp_json_};
    // The same policy for the reference (passive was its best two-thread setting on a shared
    // machine: its OpenMP workers sleep instead of spinning against OpenBLAS's own pool).
    if (threads > 1 && a_.omp_wait != "default")
      argv.insert(argv.end(), {"--omp-wait", a_.omp_wait});
    const auto [status, out] = run_child(argv);
    // Read without blocking: anything but the regular file the script writes counts as no
    // result.
    std::string text;
    try {
      text = read_regular_file_if_any(tmp_json_, uint64_t{1} << 24).value_or("");
    } catch (const Error&) {
    }
    fs::remove(tmp_json_, ignored);
    std::optional<json> j = last_json_line(text);
    PELAB_CHECK(status == 0 && j, "bench: the PyTorch reference failed for {} {} {} thread(s)",
                config, name, threads);
    return j;
  }

  // The FMA peak the % of peak column refers to: --peak-gflops, or measured here.
  void find_peak() {
    peak_source_ = "--peak-gflops";
    if (a_.peak_gflops <= 0.0) {
      const FmaPeak measured = measure_fma_peak();
      a_.peak_gflops = measured.gflops_per_core;
      peak_source_ = fmt::format("measured here, {} FMA chains", measured.isa);
    }
  }

  void print_header() const {
    fmt::print(
        "pelab bench: {} timed steps at most ({} at least, {} s), {} warm-up, {} repeat(s){}"
        "\n% of peak: of {:.1f} GFLOP/s per thread ({}; matmul FLOPs only)\n",
        a_.steps, a_.min_steps, a_.max_seconds, a_.warmup, a_.repeats,
        a_.vs_torch ? ", alternating with the PyTorch reference" : "", a_.peak_gflops,
        peak_source_);
    print_gemm_choice(a_);
    fmt::print(
        "tok/s: B·T per step, padding included (as the PyTorch reference counts); real t/s: "
        "the real tokens only (as pelab train logs)\n");
    if (std::any_of(a_.configs.begin(), a_.configs.end(),
                    [](const std::string& c) { return !is_reference_config(c); }))
      fmt::print(
          "experiments: pelab train's step (batch drawn, forward, backward, clipping, update) on "
          "the experiment's own batches; tokens are means over the timed steps\n");
    std::string header =
        fmt::format("{:<10} {:<11} {:>2} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7}", "config", "scheme",
                    "th", "ms/step", "tok/s", "real t/s", "GFLOP/s", "%peak", "RSS MB");
    if (a_.vs_torch)
      header +=
          fmt::format("  {:>9} {:>9} {:>7}  {:>6}", "torch ms", "torch t/s", "RSS MB", "ratio");
    fmt::print("{}\n", header);
    std::fflush(stdout);
  }

  // What the repeats of one case gave.
  struct Samples {
    std::vector<double> ms, rss, tokens_per_s, torch_ms, torch_rss;
    json last = json::object(), last_torch = json::object();
  };

  // The cases of (config, scheme) at every thread count, `repeats` rounds in which they
  // alternate (each followed by PyTorch, when asked): prints their rows and returns them.
  std::vector<json> measure(const std::string& config, const std::string& scheme) {
    std::vector<Samples> samples(a_.threads.size());  // one per --threads entry
    for (int rep = 0; rep < a_.repeats; ++rep)
      for (size_t c = 0; c < a_.threads.size(); ++c) {
        const int threads = a_.threads[c];
        Samples& s = samples[c];
        s.last = run_pelab(config, scheme, threads);
        const double ms = s.last["ms_median"].get<double>();
        s.ms.push_back(ms);
        s.rss.push_back(s.last["peak_rss_mb"].get<double>());
        s.tokens_per_s.push_back(s.last["tokens_per_step"].get<double>() / (ms * 1e-3));
        if (!a_.vs_torch) continue;
        if (std::optional<json> t = run_torch(config, scheme, threads)) {
          s.last_torch = *t;
          s.torch_ms.push_back(s.last_torch["ms_median"].get<double>());
          s.torch_rss.push_back(s.last_torch["peak_rss_mb"].get<double>());
        }
      }
    std::vector<json> rows;
    for (size_t c = 0; c < a_.threads.size(); ++c)
      rows.push_back(row_of(config, scheme, a_.threads[c], samples[c]));
    return rows;
  }

  // One case's table row, printed, and as JSON.
  json row_of(const std::string& config, const std::string& scheme, int threads, const Samples& s) {
    const double med = median(s.ms);
    const std::string shown = s.last["scheme"].get<std::string>();  // an experiment's own scheme
    const double tokens = s.last["tokens_per_step"].get<double>();
    const double real_tokens = s.last["real_tokens_per_step"].get<double>();
    const double gflop = s.last["gflop_per_step"].get<double>();
    const double gflops = gflop / (med * 1e-3);
    const double pct = 100.0 * gflops / (a_.peak_gflops * threads);
    json row = {{"config", config},
                {"case", is_reference_config(config) ? "reference" : "experiment"},
                {"scheme", shown},
                {"threads", threads},
                {"repeats", a_.repeats},
                {"ms_median", med},
                {"ms_per_repeat", s.ms},
                {"tokens_per_step", tokens},
                {"tokens_per_s", tokens / (med * 1e-3)},
                {"real_tokens_per_step", real_tokens},
                {"real_tokens_per_s", real_tokens / (med * 1e-3)},
                {"gflop_per_step", gflop},
                {"gflops", gflops},
                {"peak_gflops", a_.peak_gflops * threads},
                {"pct_of_peak", pct},
                {"peak_rss_mb", *std::max_element(s.rss.begin(), s.rss.end())},
                {"final_loss", s.last["final_loss"]}};
    speed_[{config, shown, threads}] = s.tokens_per_s;
    std::string line = fmt::format(
        "{:<10} {:<11} {:>2} {:>9.2f} {:>9.0f} {:>9.0f} {:>7.1f} {:>5.1f}% "
        "{:>7.0f}",
        config, shown, threads, med, tokens / (med * 1e-3), real_tokens / (med * 1e-3), gflops, pct,
        row["peak_rss_mb"].get<double>());
    if (a_.vs_torch)
      line += torch_columns(scheme, tokens, med, s.torch_ms, s.torch_rss, s.last_torch, row);
    fmt::print("{}\n", line);
    std::fflush(stdout);
    return row;
  }

  // The PyTorch side of a row: its columns, and row["torch"] and the ratio in the JSON.
  static std::string torch_columns(const std::string& scheme, double tokens, double med,
                                   const std::vector<double>& torch_ms,
                                   const std::vector<double>& torch_rss, const json& last_torch,
                                   json& row) {
    if (torch_ms.empty()) return fmt::format("  {:>9} {:>9} {:>7}  {:>6}", "-", "-", "-", "n/a");
    const double tmed = median(torch_ms);
    const double ratio = tmed / med;  // = pelab tokens/s ÷ PyTorch tokens/s
    const double trss = *std::max_element(torch_rss.begin(), torch_rss.end());
    row["torch"] = {{"scheme", torch_scheme_name(scheme)},
                    {"stand_in", torch_scheme_is_stand_in(scheme)},
                    {"ms_median", tmed},
                    {"ms_per_repeat", torch_ms},
                    {"tokens_per_s", tokens / (tmed * 1e-3)},
                    {"peak_rss_mb", trss},
                    {"version", last_torch.value("torch", "")}};
    row["ratio_tokens_per_s"] = ratio;
    return fmt::format(
        "  {:>9.2f} {:>9.0f} {:>7.0f}  {:>5.2f}×{}", tmed, tokens / (tmed * 1e-3), trss, ratio,
        torch_scheme_is_stand_in(scheme) ? fmt::format(" (vs its {})", torch_scheme_name(scheme))
                                         : "");
  }

  // Thread scaling: pelab's own n-thread throughput over its 1-thread throughput, round by
  // round (the two ran back to back), and the median of those ratios. Names the OpenMP wait
  // policy it was measured under: the scaling depends on it.
  json print_scaling() const {
    json out = json::array();
    if (std::find(a_.threads.begin(), a_.threads.end(), 1) == a_.threads.end()) return out;
    const char* inherited = std::getenv("OMP_WAIT_POLICY");
    const std::string policy =
        a_.omp_wait != "default"
            ? fmt::format("OMP_WAIT_POLICY={}", a_.omp_wait == "passive" ? "PASSIVE" : "ACTIVE")
        : inherited
            ? fmt::format("OMP_WAIT_POLICY={} from the environment, as pelab train", inherited)
            : std::string("the OpenMP runtime's own wait policy, as pelab train");
    for (const auto& [key, tps] : speed_) {
      const auto& [config, scheme, threads] = key;
      if (threads == 1) continue;
      const std::vector<double>& one = speed_.at({config, scheme, 1});
      std::vector<double> ratios;
      for (size_t r = 0; r < tps.size() && r < one.size(); ++r) ratios.push_back(tps[r] / one[r]);
      const double med = median(ratios);
      const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
      fmt::print(
          "scaling {} {}: {} threads = {:.2f}× 1 thread ({}; {})\n", config, scheme, threads, med,
          ratios.size() == 1
              ? std::string("one round")
              : fmt::format("median of {} paired rounds, {:.2f}–{:.2f}", ratios.size(), *lo, *hi),
          policy);
      out.push_back({{"config", config},
                     {"scheme", scheme},
                     {"threads", threads},
                     {"speedup_median", med},
                     {"speedup_per_round", ratios},
                     {"omp_wait", a_.omp_wait}});
    }
    return out;
  }

  TrainBenchOptions a_;
  const std::vector<std::string> schemes_;
  const std::string self_;
  const std::string script_;    // the PyTorch reference script (with --vs-torch)
  const std::string tmp_json_;  // where it writes its results
  std::string peak_source_;
  // pelab tokens/s of each round per (config, scheme, threads), for the scaling summary.
  std::map<std::tuple<std::string, std::string, int>, std::vector<double>> speed_;
};

}  // namespace

namespace {

// Every --config and --scheme before any case runs: a typo is one line, not a failed child.
void check_configs(const TrainBenchOptions& a, const std::vector<std::string>& schemes) {
  bool reference = false;
  for (const std::string& config : a.configs) {
    if (is_reference_config(config)) {
      reference = true;
      continue;
    }
    for (const std::string& scheme : a.schemes.empty() ? std::vector<std::string>{""} : a.schemes)
      (void)load_experiment_case(config, scheme, 1);
    PELAB_CHECK(!a.vs_torch,
                "--vs-torch compares only the reference configs (tiny, small, medium): the "
                "PyTorch reference script has no '{}'",
                config);
    PELAB_CHECK(a.long_lengths.empty(),
                "--long evaluates only the reference configs (tiny, small, medium), not '{}'",
                config);
  }
  if (reference)
    for (const std::string& s : schemes) (void)bench_model_config(bench_config("tiny"), s);
}

}  // namespace

int run_train_bench(TrainBenchOptions a) {
  if (!a.one_case.empty()) return run_one_case(a);
  if (!a.one_eval_case.empty()) return run_one_eval_case(a);
  if (a.smoke) {  // every scheme through the child path, a step or two each: not a measurement
    a.configs = {"tiny"};
    a.threads = {1};
    a.warmup = 1;
    a.steps = 2;
    a.min_steps = 1;
    a.max_seconds = 0;
    a.repeats = 1;
  }
  const std::vector<std::string> schemes = a.schemes.empty() ? bench_schemes() : a.schemes;
  check_configs(a, schemes);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  if (!a.long_lengths.empty()) return run_long_bench(a, schemes, self);
  return TrainBench(a, schemes, self).run();
}

int print_gemm_bench(const GemmBenchOptions& o) {
  set_num_threads(o.threads);
  set_gemm_backend(parse_gemm_backend(o.backend.empty() ? o.library : o.backend));
  const auto rows = run_gemm_bench(model_gemm_shapes(o.config), o.library, o.samples, o.min_ms);
  fmt::print(
      "GEMM: pelab's matmul path ({} backend) vs bare {} call, {} thread(s), median "
      "GFLOP/s\n",
      to_string(gemm_backend()), o.library, o.threads);
  fmt::print("{:<34} {:>6} {:>6} {:>6} {:>3}  {:>9} {:>9} {:>7}\n", "shape", "M", "N", "K", "op",
             "pelab", "bare", "ratio");
  nlohmann::json out = nlohmann::json::array();
  double worst = 1e9;
  for (const auto& r : rows) {
    const std::string op = std::string(r.shape.trans_a ? "T" : "N") + (r.shape.trans_b ? "T" : "N");
    const double ratio = r.pelab_gflops / r.bare_gflops;
    worst = std::min(worst, ratio);
    fmt::print("{:<34} {:>6} {:>6} {:>6} {:>3}  {:>9.1f} {:>9.1f} {:>7.3f}\n", r.shape.label,
               r.shape.M, r.shape.N, r.shape.K, op, r.pelab_gflops, r.bare_gflops, ratio);
    out.push_back({{"shape", r.shape.label},
                   {"M", r.shape.M},
                   {"N", r.shape.N},
                   {"K", r.shape.K},
                   {"op", op},
                   {"pelab_gflops", r.pelab_gflops},
                   {"bare_gflops", r.bare_gflops},
                   {"ratio", ratio}});
  }
  // The 0.90 target is for pelab's overhead around the same library; with another backend
  // on pelab's side the ratio compares two kernels instead.
  if (o.backend.empty() || o.backend == o.library)
    fmt::print("lowest ratio pelab/bare: {:.3f} (target: at least 0.90)\n", worst);
  else
    fmt::print(
        "lowest ratio of the {} backend to bare {}: {:.3f} (a comparison of backends; the "
        "0.90 target is for pelab's path over the same library)\n",
        o.backend, o.library, worst);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    PELAB_CHECK(f.good(), "cannot write {}", o.json);
    f << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace pelab
