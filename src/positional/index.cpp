// index (the notes' guess 1): P[p, :] = p in every column. It grows without bound with the
// position. Added to every column of a pre-LN model it is the same number on each feature,
// which the first LayerNorm subtracts exactly: there it carries no information at all.
#include "input_scheme.h"

namespace pelab {

namespace {
class Index : public InputScheme {
 public:
  using InputScheme::InputScheme;

 protected:
  Tensor encode(const Batch& batch) const override {
    return constant_table(batch, [&](int64_t b, int64_t t, float* out) {
      const float p = static_cast<float>(batch.positions.values[b * batch.length() + t]);
      std::fill_n(out, d_pe(), p);
    });
  }
};
}  // namespace

SchemeInfo index_scheme() {
  SchemeInfo info{"index", "the notes' guess 1: the raw position p in every column",
                  input_scheme_keys(),
                  [](const SchemeContext& c) { return std::make_unique<Index>(c); }};
  info.acts = SchemeInfo::Acts::Input;
  return info;
}

}  // namespace pelab
