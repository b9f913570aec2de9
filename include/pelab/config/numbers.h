// Checked conversion of numbers given as text, shared by the config reader and the command
// line, so that a value means the same (and is refused the same way) wherever it is given:
//   * the whole text is the number (an optional sign, decimal digits; no spaces, no hex);
//   * integers fit in 64 bits and lie in their range (never wrap or saturate);
//   * numbers are representable in float32, which pelab computes in: at most its largest
//     value in magnitude, and, unless 0, at least its smallest normal value (smaller ones
//     would become 0 or lose their precision as denormals).
// Each returns "" and sets `out` on success; else it leaves `out` alone and returns what is
// wrong in words that follow "<where>: ", e.g. "expected an integer >= 1, got '0'".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace pelab {

struct IntegerRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};

struct NumberRange {
  double min = -static_cast<double>(std::numeric_limits<float>::max());
  double max = static_cast<double>(std::numeric_limits<float>::max());
  bool above_min = false;  // the range is (min, max]: min itself is refused
};

// "an integer", "an integer >= 1" or "an integer in [2, 8192]".
std::string describe_integers(const IntegerRange& range);
// "a number", "a number > 0" or "a number in [0, 1e+06]".
std::string describe_numbers(const NumberRange& range);

std::string parse_integer(std::string_view text, const IntegerRange& range, int64_t& out);
std::string parse_number(std::string_view text, const NumberRange& range, double& out);

// The items of a comma-separated list, empty ones included ("4,,8" → "4", "", "8"), so that
// the list readers can refuse them instead of dropping them.
std::vector<std::string> split_list(std::string_view text);

}  // namespace pelab
