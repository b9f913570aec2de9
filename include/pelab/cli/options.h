// Every numeric and list option of `pelab` is added through these, so that a number on the
// command line is checked exactly like one in a config (pelab/config/numbers.h): the whole
// text, its range, no overflow, float32 representability, and lists without empty items.
// A refused value stops the parse (nothing runs, nothing is written) with one line naming
// the option, the value and what is valid:
//   --examples: expected an integer in [1, 1000000], got '0'
//   --lengths: expected a comma-separated list without empty items, got '1,,2'
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "pelab/config/numbers.h"

namespace pelab::cli {

// The range of an option of type T: an IntegerRange that T can hold.
template <typename T>
IntegerRange range_of(int64_t min, int64_t max = std::numeric_limits<int64_t>::max()) {
  const auto highest = static_cast<uint64_t>(std::numeric_limits<T>::max());
  return IntegerRange{std::max<int64_t>(min, std::numeric_limits<T>::min()),
                      highest < static_cast<uint64_t>(max) ? static_cast<int64_t>(highest) : max};
}

// One value of an option, or a ValidationError naming the option.
int64_t option_integer(const std::string& option, const std::string& text,
                       const IntegerRange& range);
double option_number(const std::string& option, const std::string& text, const NumberRange& range);
// The items of a comma-separated option (given once or more): refuses an empty item.
std::vector<std::string> option_items(const std::string& option,
                                      const std::vector<std::string>& values);

template <typename T>
CLI::Option* add_integer(CLI::App* app, const std::string& name, T& out, const IntegerRange& range,
                         const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name,
          [&out, name, range](const std::string& text) {
            out = static_cast<T>(option_integer(name, text, range));
          },
          help)
      ->type_name("INT");
}

// A comma-separated list of integers ("4,8,16"; also repeated: --lengths 4 --lengths 8).
template <typename T>
CLI::Option* add_integer_list(CLI::App* app, const std::string& name, std::vector<T>& out,
                              const IntegerRange& range, const std::string& help) {
  return app
      ->add_option_function<std::vector<std::string>>(
          name,
          [&out, name, range](const std::vector<std::string>& values) {
            out.clear();
            for (const std::string& item : option_items(name, values))
              out.push_back(static_cast<T>(option_integer(name, item, range)));
          },
          help)
      ->type_name("INT,...");
}

// A number that pelab uses as float32 or compares in double: refused as in a config.
CLI::Option* add_number(CLI::App* app, const std::string& name, double& out,
                        const NumberRange& range, const std::string& help);

// A comma-separated list of names; with `choices`, each item must be one of them.
CLI::Option* add_name_list(CLI::App* app, const std::string& name, std::vector<std::string>& out,
                           const std::string& help, const std::vector<std::string>& choices = {});

}  // namespace pelab::cli
