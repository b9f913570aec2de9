// Small text helpers shared by every layer.
#pragma once

#include <string>
#include <vector>

namespace pelab {

// The items separated by `separator`: join({"a", "b"}) = "a, b"; join({}) = "".
inline std::string join(const std::vector<std::string>& items,
                        const std::string& separator = ", ") {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) s += separator;
    s += items[i];
  }
  return s;
}

}  // namespace pelab
