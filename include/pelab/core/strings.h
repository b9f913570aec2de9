// Small text helpers shared by every layer.
#pragma once

#include <string>
#include <utility>
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

// The first line where two texts differ, for an error message, "" if they are equal:
// "line 2: 'b' vs 'c'" ('(end)' for a text that has no such line), or, given the texts' names,
// "line 7: 'causal: true' in the checkpoint, 'causal: false' in config.yaml" (leading spaces
// left out) and "line 9: 'seed: 0' ends the text in the checkpoint but not in config.yaml".
std::string first_difference(const std::string& a, const std::string& b);
std::string first_difference(const std::string& a, const std::string& b,
                             const std::pair<std::string, std::string>& names);

// The whitelist of text that may reach a terminal, a log or a generated script as it is:
// printable ASCII, and valid UTF-8 of printable code points. Refused: ASCII control
// characters and DEL, the C1 controls (U+0080-U+009F, which some terminals obey like ESC),
// the line and paragraph separators, the bidirectional overrides and isolates (U+202A-U+202E,
// U+2066-U+2069, which reorder what a reader sees), and bytes that are not UTF-8.
bool printable_text(const std::string& text);
// `text` with every byte outside that whitelist written as "\xNN" (and '\n' as "\n"):
// printable_text() of the result always holds.
std::string escape_unprintable(const std::string& text);

}  // namespace pelab
