// The options that choose where the runs of a sweep plan execute, shared by the commands that
// build one (`pelab sweep`, `pelab suite run`): the launchers themselves are in
// pelab/sweep/slurm.h.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/sweep/sweep.h"

namespace pelab::cli {

struct LauncherArgs {
  std::string launcher = "local";
  int64_t max_parallel = 0;
  std::vector<std::string> slurm_opts;
  int64_t threads = 0;
  bool dry_run = false;
  int64_t index = -1;
  std::string status;
};

// --launcher, --max-parallel, --slurm-opt, --index; with `sweep_options` also pelab sweep's
// --threads, --dry-run (of the Slurm script) and --status.
void add_launcher_options(CLI::App& command, LauncherArgs& l, bool sweep_options);

// Options that only one launcher reads are refused with the others, not ignored.
void check_launcher_options(const LauncherArgs& l);

// The running pelab, as an absolute path a batch script can name.
std::string this_executable();

// Submits the runs of `plan` still to do as one job array (and its report job after it), and
// says so on the terminal; with l.dry_run writes the scripts only.
int submit_plan_to_slurm(const SweepPlan& plan, const LauncherArgs& l, const std::string& metric);

}  // namespace pelab::cli
