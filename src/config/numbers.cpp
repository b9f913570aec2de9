#include "pelab/config/numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "pelab/config/yaml_reader.h"

namespace pelab {

namespace {

constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();
constexpr double kFloatMax = std::numeric_limits<float>::max();
constexpr double kFloatMinNormal = std::numeric_limits<float>::min();

std::string expected(const std::string& what, std::string_view text) {
  return fmt::format("expected {}, got '{}'", what, message_text(std::string(text)));
}

// A leading '+' is allowed (from_chars takes only '-'), but not before another sign.
std::string_view without_plus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  return text;
}

}  // namespace

std::string describe_integers(const IntegerRange& range) {
  if (range.min == kLowest && range.max == kHighest) return "an integer";
  if (range.max == kHighest) return fmt::format("an integer >= {}", range.min);
  if (range.min == kLowest) return fmt::format("an integer <= {}", range.max);
  return fmt::format("an integer in [{}, {}]", range.min, range.max);
}

std::string describe_numbers(const NumberRange& range) {
  const bool no_min = range.min <= -kFloatMax, no_max = range.max >= kFloatMax;
  if (no_min && no_max) return "a number";
  if (no_max) return fmt::format("a number {} {:g}", range.above_min ? ">" : ">=", range.min);
  if (no_min) return fmt::format("a number <= {:g}", range.max);
  return fmt::format("a number in {}{:g}, {:g}]", range.above_min ? "(" : "[", range.min,
                     range.max);
}

std::string parse_integer(std::string_view text, const IntegerRange& range, int64_t& out) {
  const std::string_view digits = without_plus(text);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size())
    return expected(describe_integers(range), text);
  // Beyond 64 bits: name both ends, since "an integer >= 0" would not say why it is refused.
  if (ec == std::errc::result_out_of_range)
    return expected(fmt::format("an integer in [{}, {}]", range.min, range.max), text);
  if (ec != std::errc() || value < range.min || value > range.max)
    return expected(describe_integers(range), text);
  out = value;
  return "";
}

std::string parse_number(std::string_view text, const NumberRange& range, double& out) {
  const std::string_view digits = without_plus(text);
  // Decimal notation only: from_chars would also take "inf" and "nan".
  if (digits.empty() || digits.find_first_not_of("0123456789+-.eE") != std::string_view::npos)
    return expected(describe_numbers(range), text);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (end != digits.data() + digits.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    return expected(describe_numbers(range), text);
  // from_chars leaves the value alone when it is beyond double's range; strtod, on the text
  // from_chars has accepted, says which way (infinite or 0).
  if (ec == std::errc::result_out_of_range)
    value = std::strtod(std::string(digits).c_str(), nullptr);
  // Zero as written: no nonzero digit before the exponent (a tiny value may have become 0).
  const bool zero = digits.find_first_of("123456789") == std::string_view::npos ||
                    digits.find_first_of("123456789") > digits.find_first_of("eE");
  const std::string quoted = message_text(std::string(text));
  if (std::fabs(value) > kFloatMax)
    return fmt::format("{} is out of range (a number must be at most {:g} in magnitude)", quoted,
                       kFloatMax);
  if (!zero && std::fabs(value) < kFloatMinNormal)
    return fmt::format(
        "{} is out of range (a number other than 0 must be at least {:g} in magnitude)", quoted,
        kFloatMinNormal);
  if (value < range.min || value > range.max || (range.above_min && value == range.min))
    return expected(describe_numbers(range), text);
  out = value;
  return "";
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  for (size_t from = 0;;) {
    const size_t comma = text.find(',', from);
    items.emplace_back(
        text.substr(from, comma == std::string_view::npos ? text.npos : comma - from));
    if (comma == std::string_view::npos) return items;
    from = comma + 1;
  }
}

}  // namespace pelab
