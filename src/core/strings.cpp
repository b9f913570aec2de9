#include "pelab/core/strings.h"

#include <fmt/format.h>

#include <cstdint>
#include <sstream>

namespace pelab {

namespace {

std::string without_leading_spaces(const std::string& line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? "" : line.substr(first);
}

// The length of the printable character that starts text[i] (1 to 4 bytes), or 0 if the
// bytes there are not one (see printable_text).
size_t printable_at(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c >= 0x20 && c < 0x7f) return 1;
  const size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
  if (n == 0 || i + n > text.size()) return 0;
  uint32_t cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  const bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
  const bool control = cp >= 0x80 && cp <= 0x9f;
  const bool separator = cp == 0x2028 || cp == 0x2029;
  const bool bidi = (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
  if (overlong || surrogate || control || separator || bidi || cp > 0x10ffff) return 0;
  return n;
}

}  // namespace

bool printable_text(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = printable_at(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_unprintable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t n = printable_at(text, i);
    if (n > 0) {
      out.append(text, i, n);
      i += n;
    } else {
      out += text[i] == '\n' ? std::string("\\n")
                             : fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
    }
  }
  return out;
}

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
