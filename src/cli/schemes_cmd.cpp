// `pelab schemes`: the positional schemes, from the registry's table: where each acts, its
// facts and its keys. `--json` is the table for scripts (tools/make_model_fixtures.py --pelab
// takes its list of schemes from it).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "pelab/cli/commands.h"
#include "pelab/positional/scheme.h"

namespace pelab::cli {

namespace {

nlohmann::json scheme_json(const SchemeInfo& info) {
  nlohmann::json keys = nlohmann::json::array();
  for (const SchemeKey& k : info.keys) keys.push_back(k.name);
  return {{"name", info.name},
          {"summary", info.summary},
          {"acts", to_string(info.acts)},
          {"shift_invariant", info.shift_invariant},
          {"causal_only", info.causal_only},
          {"positions_depend_on_length", info.positions_depend_on_length},
          {"keys", keys}};
}

void print_scheme(const SchemeInfo& info) {
  fmt::print("{}: {}\n\nActs on: {}. {}. {}.\n\n{}", info.name, info.summary, to_string(info.acts),
             info.shift_invariant ? "Adding one constant to every position changes nothing"
                                  : "Not invariant to a common shift of positions",
             info.causal_only ? "Needs model.causal: true" : "Causal or bidirectional",
             scheme_keys_markdown(info));
}

}  // namespace

void add_schemes_command(CLI::App& app, Action& action) {
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "schemes",
      "List the positional schemes, or describe one: where it acts, whether it is invariant to "
      "a common shift, whether it needs causal attention, and its positional.* keys");
  cmd->add_option("scheme", *name, "a scheme to describe (default: list them all)");
  cmd->add_flag("--json", *json, "the schemes' table as JSON");
  cmd->callback([name, json, &action] {
    action = [name, json] {
      if (!name->empty()) {
        const SchemeInfo& info = scheme_info(*name);  // an error lists the valid names
        if (*json) {
          fmt::print("{}\n", scheme_json(info).dump(2));
        } else {
          print_scheme(info);
        }
        return 0;
      }
      if (*json) {
        nlohmann::json all = nlohmann::json::array();
        for (const SchemeInfo& info : scheme_table()) all.push_back(scheme_json(info));
        fmt::print("{}\n", all.dump(2));
        return 0;
      }
      for (const SchemeInfo& info : scheme_table())
        fmt::print("{:<12} {:<28} {}\n", info.name, to_string(info.acts), info.summary);
      fmt::print("\n`pelab schemes NAME` describes one; docs/model.md defines each.\n");
      return 0;
    };
  });
}

}  // namespace pelab::cli
