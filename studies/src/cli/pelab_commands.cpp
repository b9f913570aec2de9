#include "cli/pelab_commands.h"

#include "pelab/cli/command_line.h"

namespace pelab::cli {

std::vector<CommandGroup> pelab_commands() {
  std::vector<CommandGroup> groups = framework_commands();
  groups.push_back({add_analyze_commands, {{"analyze", "encoding"}}});
  groups.push_back({add_bench_commands});
  groups.push_back({add_reproduce_command});
  return groups;
}

}  // namespace pelab::cli
