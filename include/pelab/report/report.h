// `pelab compare` as one call: the runs under some directories compared (pelab/report/
// compare.h), their tables written as compare.md, compare.csv and compare.json, and the
// plots drawn (pelab/report/plot.h).
#pragma once

#include <string>
#include <vector>

#include "pelab/report/compare.h"

namespace pelab {

struct CompareOptions {
  std::vector<std::string> dirs;
  std::string out_dir;  // default: dirs[0]
  Metric metric = Metric::sequence_accuracy;
  CompareRule rule;
  bool plots = true;
  std::string gnuplot = "gnuplot";
};

struct CompareOutput {
  Comparison comparison;
  std::string markdown;              // the table (as printed)
  std::vector<std::string> written;  // files written
  std::string plot_message;          // "" or one line (e.g. gnuplot is missing)
};

// find_runs + compare_runs + compare.{md,csv,json} + plots into out_dir. Throws Error when no
// run directory is found at all.
CompareOutput run_compare(const CompareOptions& options);

}  // namespace pelab
