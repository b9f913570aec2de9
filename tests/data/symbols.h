// Examples written as text in the data tests: space-separated printable symbols.
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pelab::testing {

// Space-separated printable symbols → their ids among `names`.
inline std::vector<int32_t> ids_of(const std::vector<std::string>& names, const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    const auto it = std::find(names.begin(), names.end(), word);
    if (it == names.end()) throw std::runtime_error("no symbol '" + word + "'");
    ids.push_back(static_cast<int32_t>(it - names.begin()));
  }
  return ids;
}

}  // namespace pelab::testing
