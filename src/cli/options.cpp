#include "pelab/cli/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "pelab/config/yaml_reader.h"
#include "pelab/core/strings.h"

namespace pelab::cli {

int64_t option_integer(const std::string& option, const std::string& text,
                       const IntegerRange& range) {
  int64_t value = 0;
  const std::string error = parse_integer(text, range, value);
  if (!error.empty()) throw CLI::ValidationError(option, error);
  return value;
}

double option_number(const std::string& option, const std::string& text, const NumberRange& range) {
  double value = 0;
  const std::string error = parse_number(text, range, value);
  if (!error.empty()) throw CLI::ValidationError(option, error);
  return value;
}

std::vector<std::string> option_items(const std::string& option,
                                      const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values)
    for (std::string& item : split_list(value)) {
      if (item.empty())
        throw CLI::ValidationError(
            option, fmt::format("expected a comma-separated list without empty items, got '{}'",
                                message_text(value)));
      items.push_back(std::move(item));
    }
  return items;
}

CLI::Option* add_number(CLI::App* app, const std::string& name, double& out,
                        const NumberRange& range, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name,
          [&out, name, range](const std::string& text) { out = option_number(name, text, range); },
          help)
      ->type_name("NUMBER");
}

CLI::Option* add_name_list(CLI::App* app, const std::string& name, std::vector<std::string>& out,
                           const std::string& help, const std::vector<std::string>& choices) {
  return app
      ->add_option_function<std::vector<std::string>>(
          name,
          [&out, name, choices](const std::vector<std::string>& values) {
            out = option_items(name, values);
            for (const std::string& item : out)
              if (!choices.empty() &&
                  std::find(choices.begin(), choices.end(), item) == choices.end())
                throw CLI::ValidationError(name, fmt::format("expected one of {}, got '{}'",
                                                             join(choices), message_text(item)));
          },
          help)
      ->type_name("NAME,...");
}

}  // namespace pelab::cli
