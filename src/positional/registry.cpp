// The name → factory table of positional schemes. Adding a scheme: its file, and one line here.
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

const std::vector<SchemeInfo>& scheme_table() {
  static const std::vector<SchemeInfo> table = {
      none_scheme(),  sinusoidal_scheme(), learned_scheme(), relative_scheme(),   rotary_scheme(),
      alibi_scheme(), t5_scheme(),         index_scheme(),   normalized_scheme(), binary_scheme(),
  };
  return table;
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table()) names.push_back(info.name);
  return names;
}

const SchemeInfo& scheme_info(const std::string& name) {
  for (const SchemeInfo& info : scheme_table())
    if (info.name == name) return info;
  throw Error(
      fmt::format("positional.type: unknown scheme '{}' (valid: {})", name, join(scheme_names())));
}

std::unique_ptr<PositionalScheme> make_scheme(const ModelConfig& model, ParameterStore& params) {
  const PositionalConfig& p = model.positional;
  const SchemeInfo& info = scheme_info(p.type);
  for (const std::string& key : p.keys_given) {
    if (key == "type" || key == "randomize") continue;  // every scheme takes these
    PELAB_CHECK(std::find(info.keys.begin(), info.keys.end(), key) != info.keys.end(),
                "positional.{}: the '{}' scheme does not take this key (it takes: {})", key,
                info.name, info.keys.empty() ? "none" : join(info.keys));
  }
  return info.make({model, params});
}

}  // namespace pelab
