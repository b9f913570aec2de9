// sinusoidal (Vaswani et al. 2017): P[p, 2i] = sin(p·ω_i), P[p, 2i+1] = cos(p·ω_i),
// ω_i = base^(−2i/d_pe). Computed in double precision, then rounded.
#include <cmath>

#include "input_scheme.h"
#include "pelab/positional/functions.h"

namespace pelab {

namespace {
// Writes P(p) for one position into out[0, dim).
void sinusoid_row(double p, const std::vector<double>& omega, float* out) {
  for (size_t i = 0; i < omega.size(); ++i) {
    out[2 * i] = static_cast<float>(std::sin(p * omega[i]));
    out[2 * i + 1] = static_cast<float>(std::cos(p * omega[i]));
  }
}

std::vector<double> frequencies(int64_t dim, double base) {
  std::vector<double> omega(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i)
    omega[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
  return omega;
}
}  // namespace

Tensor sinusoidal_encoding(const std::vector<int64_t>& positions, int64_t dim, double base) {
  PELAB_CHECK(dim > 0 && dim % 2 == 0, "sinusoidal encoding needs an even width, got {}", dim);
  const std::vector<double> omega = frequencies(dim, base);
  Tensor out = Tensor::empty({static_cast<int64_t>(positions.size()), dim});
  for (size_t k = 0; k < positions.size(); ++k)
    sinusoid_row(static_cast<double>(positions[k]), omega, out.data() + k * dim);
  return out;
}

namespace {
class Sinusoidal : public InputScheme {
 public:
  explicit Sinusoidal(const SchemeContext& c) : InputScheme(c), base_(c.keys.number("base")) {
    PELAB_CHECK(d_pe() % 2 == 0, "sinusoidal needs an even encoding width, got d_pe = {}", d_pe());
    PELAB_CHECK(base_ > 0.0, "positional.base must be positive, got {}", base_);
  }

 protected:
  Tensor encode(const Batch& batch) const override {
    const std::vector<double> omega = frequencies(d_pe(), base_);
    return constant_table(batch, [&](int64_t b, int64_t t, float* out) {
      sinusoid_row(batch.positions.values[b * batch.length() + t], omega, out);
    });
  }

 private:
  double base_;
};
}  // namespace

SchemeInfo sinusoidal_scheme() {
  SchemeInfo info{
      "sinusoidal", "fixed sin/cos table added to (or concatenated with) the input",
      input_scheme_keys({{.name = "base",
                          .type = SchemeKey::Type::Number,
                          .default_value = 10000.0,
                          .help = "the base of the frequencies `ω_i = base^(−2i/d_pe)`"}}),
      [](const SchemeContext& c) { return std::make_unique<Sinusoidal>(c); }};
  info.acts = SchemeInfo::Acts::Input;
  return info;
}

}  // namespace pelab
