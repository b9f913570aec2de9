// Errors. pelab distinguishes two kinds:
//  - pelab::Error: something the user gave us is wrong (a config key, a file, a shape that
//    does not fit). Its message is one line that names the culprit and what would be valid;
//    the command line prints it and exits non-zero, with no stack trace.
//  - internal invariants (PELAB_ASSERT): a bug in pelab itself; also thrown as Error so the
//    user sees one line, prefixed "internal error", instead of an abort.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace pelab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training's numbers became NaN or Inf (the loss, a gradient or a parameter): an outcome of
// the run's settings (a learning rate too high, say), not of bad input. `pelab train` exits
// with its own code (4) so that a sweep records the run as diverged and a comparison counts it
// as a run that did not learn, instead of leaving it out.
class DivergedError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_internal(const char* file, int line, const std::string& what);

}  // namespace pelab

// Throws pelab::Error with a fmt-formatted message when `cond` is false.
#define PELAB_CHECK(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) throw ::pelab::Error(fmt::format(__VA_ARGS__)); \
  } while (0)

#define PELAB_ASSERT(cond)                                                     \
  do {                                                                         \
    if (!(cond)) ::pelab::throw_internal(__FILE__, __LINE__, "assert " #cond); \
  } while (0)
