// The environment record of a run, environment.json: pelab's version and commit, the
// libraries', the compiler, the OS, the CPU and its vector instructions, the threads, the GEMM
// backend and the seed: what a result needs beside its config to be made again.
#pragma once

#include <string>

#include "pelab/config/experiment.h"

namespace pelab {

// The environment record of a run (JSON text).
std::string environment_json(const ExperimentConfig& config);

}  // namespace pelab
