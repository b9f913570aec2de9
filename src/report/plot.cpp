#include "pelab/report/plot.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "pelab/core/error.h"
#include "pelab/core/process.h"
#include "pelab/core/strings.h"
#include "pelab/io/atomic_file.h"

namespace pelab {

namespace fs = std::filesystem;

namespace {

// Runs gnuplot's argv (argv[0] a path) in `cwd` with stdin from /dev/null, capturing its
// output, stderr included (its messages), the first MiB of it.
CapturedRun run_gnuplot(const std::vector<std::string>& args, const std::string& cwd) {
  CaptureOptions options;
  options.cwd = cwd;
  options.stdin_null = true;
  options.stderr_to = ChildSpec::Stderr::with_stdout;
  options.max_output = size_t{1} << 20;
  return try_run_captured(args, options);
}

// A gnuplot string literal (single quotes: only '' needs escaping).
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}

std::string number(double x) {
  return std::isfinite(x) ? fmt::format("{:.6g}", x) : "0";
}

// The legend entry (a group whose runs did not all learn is also drawn dotted).
std::string group_title(const Group& g) {
  return group_label(g);
}

// Wraps one plot command into a script drawing it once per output.
std::string render(const std::string& body, const std::string& plot,
                   const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string s = body;
  for (const auto& [terminal, file] : outputs) {
    s += "set terminal " + terminal + "\n";
    s += "set termoption noenhanced\n";
    s += "set output " + quoted(file) + "\n";
    s += plot + "\n";
    s += "unset output\n";
  }
  return s;
}

// gnuplot reports an error as the offending line, a caret, then "file" line N: what.
std::string last_line_of(const std::string& text) {
  std::stringstream ss(text);
  std::string last;
  for (std::string line; std::getline(ss, line);) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start != std::string::npos && line.find_first_not_of(" \t\r^") != std::string::npos)
      last = line.substr(start);
  }
  return last;
}

}  // namespace

GnuplotInfo probe_gnuplot(const std::string& gnuplot) {
  GnuplotInfo info;
  if (gnuplot.find('/') != std::string::npos) {
    if (::access(gnuplot.c_str(), X_OK) == 0) info.path = gnuplot;
  } else if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      const fs::path candidate = fs::path(dir.empty() ? "." : dir) / gnuplot;
      if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
        info.path = candidate.string();
        break;
      }
    }
  }
  if (info.path.empty()) return info;
  const CapturedRun r = run_gnuplot({info.path, "-e", "set terminal"}, "");
  if (r.status != 0 && r.out.empty()) return info;
  info.found = true;
  std::set<std::string> terminals;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    std::stringstream words(line);
    std::string first;
    if (words >> first) terminals.insert(first);
  }
  info.png_terminal = terminals.count("pngcairo") ? "pngcairo"
                      : terminals.count("png")    ? "png"
                                                  : "";
  info.svg = terminals.count("svg") > 0;
  return info;
}

std::string length_plot_script(const Comparison& c,
                               const std::vector<std::pair<std::string, std::string>>& outputs) {
  const std::string metric =
      c.metric == Metric::sequence_accuracy ? "sequence accuracy" : "token accuracy";
  std::string s = "# pelab compare: " + metric +
                  " by length, one line per group (mean over seeds, error bars = 95% bootstrap "
                  "interval)\n";
  s += "# Rerun with: gnuplot accuracy_by_length.gp\n";
  for (size_t i = 0; i < c.groups.size(); ++i) {
    s += fmt::format("$g{} << EOD\n# length mean ci_low ci_high n\n", i);
    for (const GroupLength& gl : c.groups[i].lengths)
      s += fmt::format("{} {} {} {} {}\n", gl.length, number(gl.stat.mean), number(gl.stat.ci_low),
                       number(gl.stat.ci_high), gl.stat.n);
    s += "EOD\n";
  }
  s += "set title " +
       quoted(fmt::format(
           "{} by length (mean over seeds, 95% interval)",
           c.metric == Metric::sequence_accuracy ? "Sequence accuracy" : "Token accuracy")) +
       "\n";
  s += "set xlabel 'problem size n'\nset ylabel " + quoted(metric) + "\n";
  s +=
      "set yrange [0:1.05]\nset grid\nset key outside right top\nset border 3\nset tics nomirror\n";
  const bool log_x =
      !c.lengths.empty() && c.lengths.front() > 0 && c.lengths.back() >= 4 * c.lengths.front();
  if (log_x) {
    s += "set logscale x 2\n";
    s += fmt::format("set xrange [{}:{}]\n", number(c.lengths.front() / 1.25),
                     number(c.lengths.back() * 1.25));
  } else if (!c.lengths.empty()) {
    const double pad =
        std::max<double>(1, 0.05 * static_cast<double>(c.lengths.back() - c.lengths.front()));
    s += fmt::format("set xrange [{}:{}]\n", number(c.lengths.front() - pad),
                     number(c.lengths.back() + pad));
  }
  if (!c.lengths.empty()) {
    std::vector<std::string> tics;
    for (int64_t n : c.lengths) tics.push_back(std::to_string(n));
    s += "set xtics (" + join(tics) + ")\n";
  }
  std::set<int64_t> train_max;
  for (const Group& g : c.groups)
    if (g.train_max_length > 0) train_max.insert(g.train_max_length);
  int arrow = 1;
  for (int64_t n : train_max) {
    s += fmt::format(
        "set arrow {} from {}, graph 0 to {}, graph 1 nohead dashtype 2 lw 1.5 lc rgb 'gray40'\n",
        arrow, n, n);
    s += fmt::format("set label {} {} at {}, graph 0.96 offset 0.5,0 left textcolor rgb 'gray30'\n",
                     arrow, quoted(fmt::format("longest training length ({})", n)), n);
    ++arrow;
  }
  std::string plot = "plot ";
  for (size_t i = 0; i < c.groups.size(); ++i)
    plot += fmt::format("{}$g{} using 1:2:3:4 with yerrorlines lc {} lw 2 pt 7 ps 1 {}title {}",
                        i ? ", \\\n     " : "", i, i + 1,
                        c.groups[i].all_learned() ? "" : "dashtype 3 ",
                        quoted(group_title(c.groups[i])));
  return render(s, plot, outputs);
}

std::string position_plot_script(const Comparison& c,
                                 const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string s = fmt::format(
      "# pelab compare: token accuracy by position at length {}, one line per group (mean over "
      "seeds, band = std)\n# Rerun with: gnuplot accuracy_by_position.gp\n",
      c.position_length);
  std::vector<size_t> shown;
  for (size_t i = 0; i < c.groups.size(); ++i) {
    if (c.groups[i].by_position.empty()) continue;
    shown.push_back(i);
    s += fmt::format("$g{} << EOD\n# position mean std n\n", i);
    for (const PositionStat& p : c.groups[i].by_position)
      s += fmt::format("{} {} {} {}\n", p.position, number(p.mean), number(p.std), p.n);
    s += "EOD\n";
  }
  s += "set title " +
       quoted(fmt::format("Token accuracy by position at length {} (mean over seeds)",
                          c.position_length)) +
       "\n";
  s += "set xlabel 'position (token index)'\nset ylabel 'token accuracy'\nset autoscale xfix\n";
  s +=
      "set yrange [0:1.05]\nset grid\nset key outside right top\nset border 3\nset tics nomirror\n";
  int64_t last_train = -1;
  for (size_t i : shown) last_train = std::max(last_train, c.groups[i].last_train_position);
  if (last_train >= 0) {
    s += fmt::format(
        "set arrow 1 from {}, graph 0 to {}, graph 1 nohead dashtype 2 lw 1.5 lc rgb 'gray40'\n",
        last_train, last_train);
    s += fmt::format(
        "set label 1 'last position in training' at {}, graph 0.96 offset 0.5,0 left "
        "textcolor rgb 'gray30'\n",
        last_train);
  }
  std::string plot = "plot ";
  bool first = true;
  for (size_t i : shown) {
    plot += fmt::format(
        "{}$g{} using 1:($2-$3 < 0 ? 0 : $2-$3):($2+$3 > 1 ? 1 : $2+$3) with filledcurves lc {} fs "
        "transparent solid 0.15 "
        "notitle, \\\n     $g{} using 1:2 with lines lc {} lw 2 title {}",
        first ? "" : ", \\\n     ", i, i + 1, i, i + 1, quoted(group_title(c.groups[i])));
    first = false;
  }
  return render(s, plot, outputs);
}

namespace {

// Draws one figure's rendered script (from `script_for(outputs)`) into out_dir; appends what
// it wrote to `result` and any trouble to `problems`.
template <typename ScriptFor>
void draw(const GnuplotInfo& info, const std::string& out_dir, const std::string& stem,
          const std::string& size, ScriptFor script_for, PlotResult& result,
          std::vector<std::string>& problems) {
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!info.png_terminal.empty())
    outputs.emplace_back(info.png_terminal + " size " + size +
                             (info.png_terminal == "pngcairo" ? " font 'sans,11'" : ""),
                         stem + ".png");
  if (info.svg)
    outputs.emplace_back("svg size " + size + " font 'sans,13' background rgb 'white'",
                         stem + ".svg");
  const std::string script = script_for(outputs);
  const std::string script_path = (fs::path(out_dir) / (stem + ".gp")).string();
  write_file_atomic(script_path, script);
  result.written.push_back(script_path);
  const CapturedRun r = run_gnuplot({info.path, stem + ".gp"}, out_dir);
  if (r.status != 0) {
    problems.push_back(
        fmt::format("gnuplot failed on {}: {}", script_path,
                    r.start_error == 0 ? last_line_of(r.out) : std::strerror(r.start_error)));
    return;
  }
  for (const auto& [terminal, file] : outputs) {
    const fs::path p = fs::path(out_dir) / file;
    std::error_code ec;
    if (fs::exists(p, ec) && fs::file_size(p, ec) > 0)
      result.written.push_back(p.string());
    else
      problems.push_back(fmt::format("gnuplot wrote no {}", p.string()));
  }
}

// "" when gnuplot can draw, else why not.
std::string gnuplot_problem(const GnuplotInfo& info, const std::string& gnuplot) {
  if (!info.found)
    return fmt::format(
        "gnuplot not found ('{}'); no plots (install gnuplot-nox for them); tables written",
        gnuplot);
  if (info.png_terminal.empty() && !info.svg)
    return "gnuplot has neither a PNG nor an SVG terminal; no plots";
  return "";
}

std::string join_problems(const GnuplotInfo& info, std::vector<std::string> problems) {
  if (info.png_terminal.empty()) problems.push_back("gnuplot has no PNG terminal; SVG only");
  return join(problems, "; ");
}

}  // namespace

PlotResult write_plots(const Comparison& c, const std::string& out_dir,
                       const std::string& gnuplot) {
  PlotResult result;
  if (c.groups.empty()) return result;
  const GnuplotInfo info = probe_gnuplot(gnuplot);
  result.message = gnuplot_problem(info, gnuplot);
  if (!result.message.empty()) return result;
  bool any_position = false;
  for (const Group& g : c.groups) any_position = any_position || !g.by_position.empty();
  std::vector<std::string> problems;
  draw(
      info, out_dir, "accuracy_by_length", "1000,600",
      [&](const auto& outputs) { return length_plot_script(c, outputs); }, result, problems);
  if (any_position)
    draw(
        info, out_dir, "accuracy_by_position", "1000,600",
        [&](const auto& outputs) { return position_plot_script(c, outputs); }, result, problems);
  result.message = join_problems(info, problems);
  return result;
}

void append(PlotResult& into, const PlotResult& more) {
  into.written.insert(into.written.end(), more.written.begin(), more.written.end());
  if (!more.message.empty()) into.message += (into.message.empty() ? "" : "; ") + more.message;
}

std::string gnuplot_quoted(const std::string& s) {
  return quoted(s);
}

std::string gnuplot_number(double x) {
  return std::isfinite(x) ? fmt::format("{:.6g}", x) : "NaN";
}

PlotResult draw_figure(const std::string& body, const std::string& plot, const std::string& out_dir,
                       const std::string& stem, const std::string& size,
                       const std::string& gnuplot) {
  PlotResult result;
  const GnuplotInfo info = probe_gnuplot(gnuplot);
  result.message = gnuplot_problem(info, gnuplot);
  if (!result.message.empty()) return result;
  std::vector<std::string> problems;
  draw(
      info, out_dir, stem, size, [&](const auto& outputs) { return render(body, plot, outputs); },
      result, problems);
  result.message = join_problems(info, problems);
  return result;
}

}  // namespace pelab
