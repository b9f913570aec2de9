// The message of the pelab::Error a call throws, for the tests of error messages.
#pragma once

#include <string>

#include "pelab/core/error.h"

// Expects `message` (a string or a C string) to contain `part`, and shows it where it does not.
#define EXPECT_HAS(message, part)                               \
  EXPECT_NE(std::string(message).find(part), std::string::npos) \
      << "'" << (part) << "' not in: " << (message)

namespace pelab::testing {

// What error_message() gives for a call that throws nothing.
inline const std::string kNoError = "(no pelab::Error thrown)";

template <class Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return kNoError;
}

}  // namespace pelab::testing
