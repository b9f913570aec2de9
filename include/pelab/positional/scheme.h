// The positional schemes' registry: one file per scheme under src/positional/, each
// implementing the PositionalScheme interface of pelab/nn/positional_scheme.h, registered by
// one line in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pelab/nn/positional_scheme.h"

namespace pelab {

struct SchemeInfo {
  std::string name;
  std::string summary;            // one line, for --help and docs
  std::vector<std::string> keys;  // positional.* keys it takes (besides type, randomize)
  std::function<std::unique_ptr<PositionalScheme>(const SchemeContext&)> make;
};

// The name → factory table.
const std::vector<SchemeInfo>& scheme_table();
const SchemeInfo& scheme_info(const std::string& name);
std::vector<std::string> scheme_names();

}  // namespace pelab
