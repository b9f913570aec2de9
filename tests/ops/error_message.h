// The message of the pelab::Error a call throws, for the op tests' error checks.
#pragma once

#include <string>

#include "pelab/core/error.h"

namespace pelab::testing {

template <class Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no pelab::Error thrown)";
}

}  // namespace pelab::testing
