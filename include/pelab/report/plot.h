// Plots of a comparison with gnuplot, run as a subprocess on a generated script. Each plot is a
// self-contained script (data inline) saved next to its images, so it can be edited and rerun:
//   accuracy_by_length.{gp,png,svg}    one line per group, error bars = std over seeds, a
//                                      dashed vertical line at the longest training length
//   accuracy_by_position.{gp,png,svg}  token accuracy by position at the longest evaluated
//                                      length, averaged over seeds
#pragma once

#include <string>
#include <vector>

#include "pelab/report/compare.h"

namespace pelab {

struct GnuplotInfo {
  bool found = false;
  std::string path;          // the executable
  std::string png_terminal;  // "pngcairo", "png" or "" (no PNG support)
  bool svg = false;
};

// Looks `gnuplot` up (a path, or a name searched in PATH) and asks it for its terminals.
GnuplotInfo probe_gnuplot(const std::string& gnuplot = "gnuplot");

// The gnuplot scripts (data inline). `outputs` are (terminal, file) pairs, e.g.
// ("pngcairo size 1000,600", "accuracy_by_length.png"): the plot is drawn once per pair, into
// the file relative to the directory gnuplot runs in.
std::string length_plot_script(const Comparison& c,
                               const std::vector<std::pair<std::string, std::string>>& outputs);
std::string position_plot_script(const Comparison& c,
                                 const std::vector<std::pair<std::string, std::string>>& outputs);

struct PlotResult {
  std::vector<std::string> written;  // image and script files
  std::string message;               // "" when all went well, else one line
};

// Writes the scripts and renders PNG and SVG into out_dir. Never throws for a missing or
// failing gnuplot: it says so in `message` (the tables are written regardless).
PlotResult write_plots(const Comparison& c, const std::string& out_dir,
                       const std::string& gnuplot = "gnuplot");

// Adds `more`'s files to `into`, and its message after a "; ".
void append(PlotResult& into, const PlotResult& more);

// A gnuplot string literal, and a number as gnuplot data ("NaN" when not finite, which
// gnuplot leaves out of a plot).
std::string gnuplot_quoted(const std::string& s);
std::string gnuplot_number(double x);

// One figure of any kind (the analyses use it): `body` holds settings and inline data blocks
// ($name << EOD … EOD), `plot` the plot command; drawn into out_dir/stem.{png,svg} with the
// script saved as stem.gp. size: "width,height" in pixels. Never throws for gnuplot trouble.
PlotResult draw_figure(const std::string& body, const std::string& plot, const std::string& out_dir,
                       const std::string& stem, const std::string& size = "1000,600",
                       const std::string& gnuplot = "gnuplot");

}  // namespace pelab
