// normalized (the notes' guess 2): P[p, :] = p / (n − 1), n the sequence's real length (its
// count of key_mask), 0 when n ≤ 1. The same p means different things at different lengths.
// Like index, added to every column of a pre-LN model it is removed by the first LayerNorm.
#include "input_scheme.h"

namespace pelab {

namespace {
class Normalized : public InputScheme {
 public:
  using InputScheme::InputScheme;

 protected:
  Tensor encode(const Batch& batch) const override {
    const int64_t T = batch.length();
    std::vector<int64_t> real(static_cast<size_t>(batch.batch_size()), 0);
    for (int64_t b = 0; b < batch.batch_size(); ++b)
      for (int64_t t = 0; t < T; ++t) real[b] += batch.key_mask.values[b * T + t];
    return constant_table(batch, [&](int64_t b, int64_t t, float* out) {
      const double p = batch.positions.values[b * T + t];
      const float v =
          real[b] <= 1 ? 0.0f : static_cast<float>(p / static_cast<double>(real[b] - 1));
      std::fill_n(out, d_pe(), v);
    });
  }
};
}  // namespace

SchemeInfo normalized_scheme() {
  SchemeInfo info{
      "normalized", "the notes' guess 2: p / (n − 1) in every column, n the real length",
      input_scheme_keys(), [](const SchemeContext& c) { return std::make_unique<Normalized>(c); }};
  info.positions_depend_on_length = true;  // n is the real length
  info.acts = SchemeInfo::Acts::Input;
  return info;
}

}  // namespace pelab
