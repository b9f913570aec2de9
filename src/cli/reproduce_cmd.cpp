// `pelab reproduce`: measures the notes' claims and writes the report (see
// pelab/claims/reproduce.h).
#include <fmt/format.h>

#include "commands.h"
#include "pelab/claims/reproduce.h"

namespace pelab::cli {

void add_reproduce_command(CLI::App& app, Action& action) {
  struct Args {
    std::vector<std::string> only;
    bool quick = false;
    std::string out;
    int64_t jobs = 0;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "reproduce",
      "Measure the notes' claims (configs/claims/) and write a report with a verdict per claim");
  cmd->add_option("--only", a->only, "claims to run, e.g. C4,C9 (default: all)")->delimiter(',');
  cmd->add_flag("--quick", a->quick, "smaller settings (each claim config's quick: section)");
  cmd->add_option("--out", a->out, "report directory (default runs/claims, or runs/claims-quick)");
  cmd->add_option("--jobs", a->jobs, "training runs at a time (default: cores)")
      ->check(CLI::PositiveNumber);
  cmd->callback([a, &action] {
    action = [a] {
      ReproduceOptions o;
      o.only = a->only;
      o.quick = a->quick;
      o.out = a->out.empty() ? (a->quick ? "runs/claims-quick" : "runs/claims") : a->out;
      o.jobs = a->jobs;
      const std::vector<ClaimResult> results = reproduce(o);
      for (const ClaimResult& r : results)
        fmt::print("{:<4} {:<9} {}\n", r.id, to_string(r.verdict), r.because);
      fmt::print("wrote {}/report.md and {}/claims.json\n", o.out, o.out);
      return 0;
    };
  });
}

}  // namespace pelab::cli
