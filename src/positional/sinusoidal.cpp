// sinusoidal (Vaswani et al. 2017): P[p, 2i] = sin(p·ω_i), P[p, 2i+1] = cos(p·ω_i),
// ω_i = base^(−2i/d_pe). Computed in double precision, then rounded.
#include <cmath>

#include "input_scheme.h"

namespace pelab {

namespace {
class Sinusoidal : public InputScheme {
 public:
  explicit Sinusoidal(const ModelConfig& m) : InputScheme(m), base_(m.positional.base) {
    PELAB_CHECK(d_pe() % 2 == 0, "sinusoidal needs an even encoding width, got d_pe = {}",
                d_pe());
    PELAB_CHECK(base_ > 0.0, "positional.base must be positive, got {}", base_);
  }

 protected:
  Tensor encode(const Batch& batch) const override {
    const int64_t half = d_pe() / 2;
    std::vector<double> omega(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i)
      omega[i] = std::pow(base_, -2.0 * static_cast<double>(i) / static_cast<double>(d_pe()));
    return constant_table(batch, [&](int64_t b, int64_t t, float* out) {
      const double p = batch.positions.values[b * batch.length() + t];
      for (int64_t i = 0; i < half; ++i) {
        out[2 * i] = static_cast<float>(std::sin(p * omega[i]));
        out[2 * i + 1] = static_cast<float>(std::cos(p * omega[i]));
      }
    });
  }

 private:
  double base_;
};
}  // namespace

SchemeInfo sinusoidal_scheme() {
  return {"sinusoidal", "fixed sin/cos table added to (or concatenated with) the input",
          input_scheme_keys({"base"}),
          [](const SchemeContext& c) { return std::make_unique<Sinusoidal>(c.model); }};
}

}  // namespace pelab
