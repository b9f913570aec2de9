#include "pelab/core/error.h"

namespace pelab {

void throw_internal(const char* file, int line, const std::string& what) {
  throw Error(fmt::format("internal error at {}:{}: {} (please report this)", file, line, what));
}

}  // namespace pelab
