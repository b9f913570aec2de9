// The name → scheme table, and what every scheme's key table gives: defaults, checks and the
// docs' key lists. Adding a scheme: its file, and one line here.
#include <algorithm>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/positional/scheme.h"

namespace pelab {

SchemeInfo none_scheme();
SchemeInfo sinusoidal_scheme();
SchemeInfo learned_scheme();
SchemeInfo relative_scheme();
SchemeInfo rotary_scheme();
SchemeInfo alibi_scheme();
SchemeInfo t5_scheme();
SchemeInfo index_scheme();
SchemeInfo normalized_scheme();
SchemeInfo binary_scheme();
SchemeInfo fire_scheme();
SchemeInfo kerple_scheme();
SchemeInfo sandwich_scheme();
SchemeInfo xl_relative_scheme();
SchemeInfo xpos_scheme();
SchemeInfo cope_scheme();

const std::vector<SchemeInfo>& scheme_table() {
  static const std::vector<SchemeInfo> table = {
      none_scheme(),       sinusoidal_scheme(),  learned_scheme(), relative_scheme(),
      rotary_scheme(),     alibi_scheme(),       t5_scheme(),      index_scheme(),
      normalized_scheme(), binary_scheme(),      fire_scheme(),    kerple_scheme(),
      sandwich_scheme(),   xl_relative_scheme(), xpos_scheme(),    cope_scheme(),
  };
  return table;
}

const char* to_string(SchemeInfo::Acts acts) {
  switch (acts) {
    case SchemeInfo::Acts::Nowhere:
      return "nowhere";
    case SchemeInfo::Acts::Input:
      return "input";
    case SchemeInfo::Acts::QueriesAndKeys:
      return "queries and keys";
    case SchemeInfo::Acts::Logits:
      return "attention logits";
    case SchemeInfo::Acts::LogitsAndValues:
      return "attention logits and values";
  }
  return "unknown";
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table()) names.push_back(info.name);
  return names;
}

bool is_scheme(const std::string& name) {
  const std::vector<SchemeInfo>& table = scheme_table();
  return std::any_of(table.begin(), table.end(),
                     [&](const SchemeInfo& info) { return info.name == name; });
}

const SchemeInfo& scheme_info(const std::string& name) {
  for (const SchemeInfo& info : scheme_table())
    if (info.name == name) return info;
  throw Error(
      fmt::format("positional.type: unknown scheme '{}' (valid: {})", name, join(scheme_names())));
}

std::vector<std::string> all_scheme_keys() {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table())
    for (const SchemeKey& k : info.keys)
      if (std::find(names.begin(), names.end(), k.name) == names.end()) names.push_back(k.name);
  return names;
}

std::string key_not_taken(const SchemeInfo& info) {
  std::vector<std::string> takes;
  for (const SchemeKey& k : info.keys) takes.push_back(k.name);
  return fmt::format("the '{}' scheme does not take this key (it takes: {})", info.name,
                     takes.empty() ? "none" : join(takes));
}

KeyValues resolve_defaults(const PositionalConfig& positional) {
  const SchemeInfo& info = scheme_info(positional.type);
  for (const auto& [name, value] : positional.keys.all())
    PELAB_CHECK(info.key(name) != nullptr, "positional.{}: {}", name, key_not_taken(info));
  return with_defaults("positional", info.keys, positional.keys);
}

void resolve_run_facts(PositionalConfig& positional, const RunFacts& facts) {
  const SchemeInfo& info = scheme_info(positional.type);
  if (info.resolve) info.resolve(facts, positional.keys);
}

std::string scheme_keys_markdown(const SchemeInfo& info) {
  if (info.keys.empty()) return "No keys besides `type`.\n";
  return keys_markdown(info.keys);
}

std::unique_ptr<PositionalScheme> make_scheme(const ModelConfig& model, ParameterStore& params) {
  const SchemeInfo& info = scheme_info(model.positional.type);
  const KeyValues keys = resolve_defaults(model.positional);
  return info.make({model, keys, params});
}

}  // namespace pelab
