// `pelab reproduce`: measures the notes' claims and writes the report (see
// pelab/claims/reproduce.h).
#include <fmt/format.h>

#include "cli/pelab_commands.h"
#include "pelab/claims/reproduce.h"

namespace pelab::cli {

void add_reproduce_command(CLI::App& app, Action& action) {
  struct Args {
    std::vector<std::string> only;
    bool quick = false;
    std::string out;
    int64_t jobs = 0;
    bool allow_dirty = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "reproduce",
      "Measure the notes' claims (C1-C16) and re-run published experiments beside their "
      "figures (R1-R3), each set in studies/configs/claims/, and write a report with a verdict per "
      "claim. Finished training runs under --out are reused: run it again to continue.");
  add_name_list(cmd, "--only", a->only, "claims to run, e.g. C4,R3 (default: all)");
  cmd->add_flag("--quick", a->quick, "smaller settings (each claim config's quick: section)");
  cmd->add_option("--out", a->out, "report directory (default runs/claims, or runs/claims-quick)");
  add_integer(cmd, "--jobs", a->jobs, range_of<int64_t>(1),
              "training runs at a time (default: cores)");
  cmd->add_flag("--allow-dirty", a->allow_dirty,
                "run even if the build or the configs are not one clean commit (the report "
                "says so)");
  cmd->callback([a, &action] {
    action = [a] {
      ReproduceOptions o;
      o.only = a->only;
      o.quick = a->quick;
      o.out = a->out.empty() ? (a->quick ? "runs/claims-quick" : "runs/claims") : a->out;
      o.jobs = a->jobs;
      o.allow_dirty = a->allow_dirty;
      const std::vector<ClaimResult> results = reproduce(o);
      for (const ClaimResult& r : results)
        fmt::print("{:<4} {:<9} {}\n", r.id, to_string(r.verdict), r.because);
      fmt::print("wrote {}/report.md and {}/claims.json\n", o.out, o.out);
      return 0;
    };
  });
}

}  // namespace pelab::cli
