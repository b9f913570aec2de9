// xpos (Sun et al. 2022), rotary with an exponential decay per pair: q', k' are q, k rotated as
// rotary (every pair, positional.base), and the content score becomes
//
//   Σ_k ζ_k^((p_i − p_j)/B) · (q'_{i,2k} k'_{j,2k} + q'_{i,2k+1} k'_{j,2k+1}) / sqrt(d_h),
//   ζ_k = (2k + 0.4 d_h) / (1.4 d_h),  k < d_h/2,  B = positional.scale_base.
//
// As microsoft/torchscale's XPOS it acts through queries and keys: q' takes ζ_k^((p − c)/B) and
// k' takes ζ_k^(−(p − c)/B) on pair k, so their dot product carries ζ_k^((p_i − p_j)/B) whatever
// c is, as long as one c serves the whole sequence. pelab takes the middle of the sequence's
// real positions, rounded down (torchscale centres on the middle index): the factors then stay
// within ζ^(±spread/2B). Causal only, as the paper's model: where p_i ≥ p_j the factor is ≤ 1.
#include <algorithm>
#include <cmath>
#include <limits>

#include "pelab/core/error.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
// |ln ζ| · |p − c| / B above this and a factor would leave float32's range (e^88).
constexpr double kLargestExponent = 80.0;
}  // namespace

std::vector<int64_t> xpos_centres(const IntTensor& positions, const IntTensor& key_mask) {
  const int64_t B = positions.shape[0], T = positions.shape[1];
  std::vector<int64_t> centres(B, 0);
  for (int64_t b = 0; b < B; ++b) {
    const int32_t* p = positions.data() + b * T;
    const int32_t* real = key_mask.data() + b * T;
    const bool any_real = std::any_of(real, real + T, [](int32_t m) { return m != 0; });
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (int64_t t = 0; t < T; ++t)
      if (real[t] || !any_real) {  // a row of padding only: its own positions
        lo = std::min<int64_t>(lo, p[t]);
        hi = std::max<int64_t>(hi, p[t]);
      }
    if (T > 0) centres[b] = static_cast<int64_t>(std::floor(0.5 * static_cast<double>(lo + hi)));
  }
  return centres;
}

Tensor xpos_scales(const IntTensor& positions, const std::vector<int64_t>& centres, int64_t heads,
                   int64_t head_dim, double scale_base, int sign) {
  const int64_t B = positions.shape[0], T = positions.shape[1], d = heads * head_dim;
  std::vector<double> log_zeta(head_dim / 2);
  for (int64_t k = 0; k < head_dim / 2; ++k)
    log_zeta[k] = std::log((2.0 * k + 0.4 * head_dim) / (1.4 * head_dim));
  std::vector<float> scales(static_cast<size_t>(B * T * d));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const double x = sign * static_cast<double>(positions.values[b * T + t] - centres[b]) /
                       scale_base;  // ζ^x, x = ±(p − c)/B
      PELAB_CHECK(std::fabs(x * log_zeta[0]) <= kLargestExponent,
                  "xpos: position {} lies {} from its sequence's centre {}, too far for "
                  "positional.scale_base {} (the factor ζ^((p − c)/B) would leave float range)",
                  positions.values[b * T + t], std::abs(positions.values[b * T + t] - centres[b]),
                  centres[b], scale_base);
      float* row = scales.data() + (b * T + t) * d;
      for (int64_t k = 0; k < head_dim / 2; ++k) {
        const float f = static_cast<float>(std::exp(x * log_zeta[k]));
        for (int64_t h = 0; h < heads; ++h)
          row[h * head_dim + 2 * k] = row[h * head_dim + 2 * k + 1] = f;
      }
    }
  return Tensor::from_vector({B, T, d}, scales);
}

namespace {
class Xpos : public PositionalScheme {
 public:
  explicit Xpos(const SchemeContext& c)
      : heads_(c.model.heads),
        head_dim_(checked_head_dim(c)),
        scale_base_(c.keys.number("scale_base")),
        angles_(head_dim_, c.keys.number("base")) {
    PELAB_CHECK(scale_base_ > 0.0, "positional.scale_base: must be > 0, got {}", scale_base_);
  }

  std::pair<Tensor, Tensor> transform_qk(const Tensor& q, const Tensor& k, const Batch& batch,
                                         int /*layer*/) const override {
    const std::vector<int64_t> centres = xpos_centres(batch.positions, batch.key_mask);
    const Tensor up = xpos_scales(batch.positions, centres, heads_, head_dim_, scale_base_, 1);
    const Tensor down = xpos_scales(batch.positions, centres, heads_, head_dim_, scale_base_, -1);
    return {mul(rotary(q, batch.positions, heads_, angles_), up),
            mul(rotary(k, batch.positions, heads_, angles_), down)};
  }

 private:
  // The checks before any member needs them, each naming its key.
  static int64_t checked_head_dim(const SchemeContext& c) {
    const ModelConfig& m = c.model;
    PELAB_CHECK(m.causal,
                "model.causal: xpos is causal only (its decay ζ^((p_i − p_j)/B) grows without "
                "bound towards later keys); it needs model.causal: true, got false");
    PELAB_CHECK(m.head_dim() % 2 == 0,
                "xpos needs an even head width: d_model / heads = {} / {} = {}", m.d_model, m.heads,
                m.head_dim());
    const double base = c.keys.number("base");
    PELAB_CHECK(base > 0.0, "positional.base: must be > 0, got {}", base);
    return m.head_dim();
  }

  int64_t heads_, head_dim_;
  double scale_base_;
  // The rotation of every layer and step, formed once (as rotary's).
  RotaryAngles angles_;
};
}  // namespace

SchemeInfo xpos_scheme() {
  SchemeInfo info{"xpos",
                  "rotary with a per-pair decay ζ_k^((p_i − p_j)/B) on the scores (causal only)",
                  {{.name = "base",
                    .type = SchemeKey::Type::Number,
                    .default_value = 10000.0,
                    .help = "the base of the rotary angles `θ_i = base^(−2i/d_h)`; > 0"},
                   {.name = "scale_base",
                    .type = SchemeKey::Type::Number,
                    .default_value = 512.0,
                    .help = "`B`, the distance over which the decay ζ_k^(δ/B) acts; > 0"}},
                  [](const SchemeContext& c) { return std::make_unique<Xpos>(c); }};
  info.acts = SchemeInfo::Acts::QueriesAndKeys;
  info.shift_invariant = true;
  info.causal_only = true;
  return info;
}

}  // namespace pelab
