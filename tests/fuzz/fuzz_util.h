// Shared by the libFuzzer targets: what an error must look like.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pelab/core/error.h"

namespace pelab::fuzz {

// A pelab::Error is the expected answer to bad input, but its message must be one line and
// must not be an internal error (a broken invariant is a bug even when it is caught).
inline void check_error(const Error& e) {
  const char* what = e.what();
  if (std::strchr(what, '\n') != nullptr || std::strstr(what, "internal error") != nullptr) {
    std::fprintf(stderr, "bad error message: %s\n", what);
    std::abort();
  }
}

}  // namespace pelab::fuzz
