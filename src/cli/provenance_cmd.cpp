// `pelab provenance`: whether this build and the configs are one clean commit, and on which
// CPU, for the scripts that record results and for `pelab reproduce`.
#include <fmt/format.h>

#include "pelab/cli/commands.h"
#include "pelab/run/provenance.h"

namespace pelab::cli {

void add_provenance_command(CLI::App& app, Action& action) {
  struct ProvenanceArgs {
    std::string configs = "configs";
    bool allow_dirty = false;
    bool json = false;
  };
  auto p = std::make_shared<ProvenanceArgs>();
  CLI::App* prov = app.add_subcommand(
      "provenance",
      "Say whether this build and the configs are one clean commit, and on which CPU (exit 2 "
      "if not clean, unless --allow-dirty)");
  prov->add_option("--configs", p->configs, "the configs directory (default: configs)");
  prov->add_flag("--allow-dirty", p->allow_dirty, "report a tree that is not clean, exit 0");
  prov->add_flag("--json", p->json, "print JSON instead of one line");
  prov->callback([p, &action] {
    action = [p] {
      const Provenance provenance = read_provenance(p->configs, p->allow_dirty);
      require_clean_tree(provenance, "pelab provenance");
      fmt::print("{}\n", p->json ? provenance.to_json().dump(2) : provenance.describe());
      return 0;
    };
  });
}

}  // namespace pelab::cli
