// none: no positional information at all. Every hook keeps its do-nothing default, so the
// encoder is permutation-equivariant (tested exactly).
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
class NoPositions : public PositionalScheme {};
}  // namespace

SchemeInfo none_scheme() {
  SchemeInfo info{
      "none", "no positional information (the encoder sees a set)", {}, [](const SchemeContext&) {
        return std::make_unique<NoPositions>();
      }};
  info.acts = SchemeInfo::Acts::Nowhere;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
