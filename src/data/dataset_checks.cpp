// The byte and symbol checks shared by the dataset reader, writer and file task.
#include "data/dataset_checks.h"

#include <algorithm>

#include "pelab/core/error.h"
#include "pelab/data/file_dataset.h"

namespace pelab::dataset {

size_t invalid_utf8_at(const unsigned char* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return n;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  size_t i = 0;
  for (; i < s.size() && i < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (i < s.size()) {
    // Cut back to a whole UTF-8 character before the ellipsis.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return out + "'";
}

std::string symbol_problem(const std::string& s) {
  if (s.empty()) return "an empty symbol";
  if (static_cast<int64_t>(s.size()) > kDatasetMaxSymbolBytes)
    return fmt::format("a symbol of {} bytes (the limit is {})", s.size(), kDatasetMaxSymbolBytes);
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7F)
      return fmt::format("the symbol {} contains whitespace or a control character", quote(s));
  }
  return "";
}

int64_t tokens_for(TaskLayout layout, int64_t inputs, int64_t targets) {
  switch (layout) {
    case TaskLayout::Tagging:
      return inputs;
    case TaskLayout::AppendedQueries:
      return inputs + 1 + targets;
    case TaskLayout::Classification:
      return inputs + 1;
  }
  return inputs;
}

std::optional<TaskLayout> layout_named(const std::string& name) {
  if (name == "tagging") return TaskLayout::Tagging;
  if (name == "appended") return TaskLayout::AppendedQueries;
  if (name == "classification") return TaskLayout::Classification;
  return std::nullopt;
}

std::vector<std::string> special_tokens(TaskLayout layout) {
  switch (layout) {
    case TaskLayout::Tagging:
      return {};
    case TaskLayout::AppendedQueries:
      return {kSeparator, kQuery};
    case TaskLayout::Classification:
      return {kQuery};
  }
  return {};
}

void add_specials(std::vector<std::string>& input_symbols, TaskLayout layout) {
  for (const std::string& s : special_tokens(layout))
    if (std::find(input_symbols.begin(), input_symbols.end(), s) == input_symbols.end())
      input_symbols.push_back(s);
}

}  // namespace pelab::dataset
