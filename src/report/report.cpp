#include "pelab/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"
#include "pelab/report/plot.h"

namespace pelab {

namespace fs = std::filesystem;

CompareOutput run_compare(const CompareOptions& o) {
  PELAB_CHECK(!o.dirs.empty(), "compare: no directory given");
  const std::vector<RunRecord> runs = find_runs(o.dirs);
  PELAB_CHECK(!runs.empty(), "no run directories under {} (a run directory holds summary.json)",
              join(o.dirs));
  CompareOutput out;
  out.comparison = compare_runs(runs, o.metric, /*read_positions=*/true, o.rule);
  out.comparison.dirs = o.dirs;
  out.markdown = comparison_markdown(out.comparison);
  const fs::path dir = o.out_dir.empty() ? fs::path(o.dirs[0]) : fs::path(o.out_dir);
  fs::create_directories(dir);
  std::string md = out.markdown;
  if (o.plots && out.comparison.completed_runs > 0) {
    const PlotResult plots = write_plots(out.comparison, dir.string(), o.gnuplot);
    out.plot_message = plots.message;
    out.written = plots.written;
    for (const char* name : {"accuracy_by_length.png", "accuracy_by_position.png"})
      if (std::find(plots.written.begin(), plots.written.end(), (dir / name).string()) !=
          plots.written.end())
        md += fmt::format("\n![{}]({})\n", fs::path(name).stem().string(), name);
  }
  write_file_atomic((dir / "compare.md").string(), md);
  write_file_atomic((dir / "compare.csv").string(), comparison_csv(out.comparison));
  write_file_atomic((dir / "compare.json").string(), comparison_json(out.comparison));
  std::vector<std::string> written;
  for (const char* name : {"compare.md", "compare.csv", "compare.json"})
    written.push_back((dir / name).string());
  written.insert(written.end(), out.written.begin(), out.written.end());
  out.written = std::move(written);
  return out;
}

}  // namespace pelab
