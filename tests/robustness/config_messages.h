// What the config error tests share: the message parsing a config text gives, a config text
// with one part replaced, and the check that a message is one line naming every part.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_message.h"
#include "pelab/config/experiment.h"

namespace pelab::testing {

// The message of the pelab::Error that parsing `text` (as x.yaml) with `overrides` throws.
inline std::string config_error(const std::string& text,
                                const std::vector<std::string>& overrides = {}) {
  return error_message(
      [&] { parse_experiment(text, "x.yaml", overrides, PELAB_SOURCE_DIR "/configs"); });
}

// `text` with `from` replaced by `to` (which must be there).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// Every part must appear, and the message must be one line.
inline void expect_message(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

}  // namespace pelab::testing
