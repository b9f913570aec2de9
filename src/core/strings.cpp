#include "pelab/core/strings.h"

#include <fmt/format.h>

#include <sstream>

namespace pelab {

namespace {

std::string without_leading_spaces(const std::string& line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? "" : line.substr(first);
}

}  // namespace

std::string first_difference(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  for (int line = 1;; ++line) {
    std::string la, lb;
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb)
      return fmt::format("line {}: '{}' vs '{}'", line, ga ? la : "(end)", gb ? lb : "(end)");
  }
}

std::string first_difference(const std::string& a, const std::string& b,
                             const std::pair<std::string, std::string>& names) {
  const auto& [name_a, name_b] = names;
  size_t line = 1, start = 0;
  while (true) {
    const size_t end_a = a.find('\n', start), end_b = b.find('\n', start);
    const std::string la = a.substr(start, end_a == std::string::npos ? end_a : end_a - start);
    const std::string lb = b.substr(start, end_b == std::string::npos ? end_b : end_b - start);
    if (la != lb)
      return fmt::format("line {}: '{}' in {}, '{}' in {}", line, without_leading_spaces(la),
                         name_a, without_leading_spaces(lb), name_b);
    if (end_a != end_b)
      return fmt::format("line {}: '{}' ends the text in {} but not in {}", line,
                         without_leading_spaces(la), end_a == std::string::npos ? name_a : name_b,
                         end_a == std::string::npos ? name_b : name_a);
    if (end_a == std::string::npos) return "";
    start = end_a + 1;
    ++line;
  }
}

}  // namespace pelab
