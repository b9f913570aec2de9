#include "pelab/run/environment.h"

#include <cblas.h>
#include <fmt/format.h>
#include <spdlog/version.h>
#include <sys/utsname.h>

#include <oneapi/dnnl/dnnl.h>
#include <nlohmann/json.hpp>

#include "pelab/backend/gemm.h"
#include "pelab/core/build_info.h"
#include "pelab/core/machine.h"

#ifndef PELAB_YAML_CPP_VERSION
#define PELAB_YAML_CPP_VERSION "unknown"
#endif

namespace pelab {

using json = nlohmann::json;

std::string environment_json(const ExperimentConfig& c) {
  const dnnl_version_t* v = dnnl_version();
  struct utsname os {};
  ::uname(&os);
  json env = {
      {"pelab_version", pelab_version()},
      {"git_commit", pelab_git_commit()},
      {"onednn", fmt::format("{}.{}.{}", v->major, v->minor, v->patch)},
      {"openblas", openblas_get_config()},
      {"libraries",
       {{"fmt",
         fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
        {"spdlog", fmt::format("{}.{}.{}", SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
        {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                      NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
        {"yaml-cpp", PELAB_YAML_CPP_VERSION},
        {"openmp", _OPENMP}}},
      {"compiler", __VERSION__},
      {"os", fmt::format("{} {} {}", os.sysname, os.release, os.machine)},
      {"cpu", cpu_model_name()},
      {"isa", cpu_vector_isa()},
      {"threads", c.threads},
      {"gemm", to_string(gemm_backend())},
      {"seed", c.seed}};
  return env.dump(2) + "\n";
}

}  // namespace pelab
