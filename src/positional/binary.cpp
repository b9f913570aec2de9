// binary (the notes' guess 3): P[p, j] = 2·bit_j(p) − 1, bit 0 the least significant.
#include "input_scheme.h"

namespace pelab {

namespace {
class Binary : public InputScheme {
 public:
  using InputScheme::InputScheme;

 protected:
  Tensor encode(const Batch& batch) const override {
    return constant_table(batch, [&](int64_t b, int64_t t, float* out) {
      const uint64_t p = static_cast<uint64_t>(batch.positions.values[b * batch.length() + t]);
      for (int64_t j = 0; j < d_pe(); ++j) out[j] = (j < 64 && ((p >> j) & 1u)) ? 1.0f : -1.0f;
    });
  }
};
}  // namespace

SchemeInfo binary_scheme() {
  SchemeInfo info{"binary", "the notes' guess 3: the bits of p as ±1", input_scheme_keys(),
                  [](const SchemeContext& c) { return std::make_unique<Binary>(c); }};
  info.acts = SchemeInfo::Acts::Input;
  return info;
}

}  // namespace pelab
