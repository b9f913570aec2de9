// Shared by the libFuzzer targets: what an error must look like, and the valid config the
// override and command-line targets apply their overrides to.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../pelab_process.h"
#include "pelab/core/error.h"

namespace pelab::fuzz {

// A pelab::Error is the expected answer to bad input, but its message must be one line and
// must not be an internal error (a broken invariant is a bug even when it is caught). An
// internal error is recognized by the form throw_internal gives it, "internal error at
// FILE:LINE: ... (please report this)", since messages may quote the input, which can say
// anything.
inline void check_error(const Error& e) {
  const std::string what = e.what();
  const std::string tail = "(please report this)";
  const bool internal = what.find("internal error at ") != std::string::npos &&
                        what.size() >= tail.size() &&
                        what.compare(what.size() - tail.size(), tail.size(), tail) == 0;
  if (what.find('\n') != std::string::npos || internal) {
    std::fprintf(stderr, "bad error message: %s\n", what.c_str());
    std::abort();
  }
}

// A small valid experiment (with an evaluation section) for overrides to change.
inline std::string base_config() {
  return testing::tiny_config("fuzz", R"(training:
  steps: 10
  batch_size: 4
  warmup: 2
evaluation:
  lengths: [4, 8, 16]
  examples: 8
)");
}

}  // namespace pelab::fuzz
