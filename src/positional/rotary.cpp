// rotary (Su et al. 2021): queries and keys of every head are rotated pairwise by m·θ_i after
// their projections (bias included). Scores then depend on positions only through p_j − p_i.
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
class Rotary : public PositionalScheme {
 public:
  explicit Rotary(const SchemeContext& c) : heads_(c.model.heads), angles_(make_angles(c)) {}

  std::pair<Tensor, Tensor> transform_qk(const Tensor& q, const Tensor& k, const Batch& batch,
                                         int /*layer*/) const override {
    return {rotary(q, batch.positions, heads_, angles_),
            rotary(k, batch.positions, heads_, angles_)};
  }

 private:
  static RotaryAngles make_angles(const SchemeContext& c) {
    const ModelConfig& m = c.model;
    PELAB_CHECK(m.head_dim() % 2 == 0,
                "rotary needs an even head width: d_model / heads = {} / {} = {}", m.d_model,
                m.heads, m.head_dim());
    const double base = c.keys.number("base");
    PELAB_CHECK(base > 0.0, "positional.base must be positive, got {}", base);
    return RotaryAngles(m.head_dim(), base);
  }

  int64_t heads_;
  // Every layer and step rotates by the same angles per position: formed once, not per call.
  RotaryAngles angles_;
};
}  // namespace

SchemeInfo rotary_scheme() {
  SchemeInfo info{"rotary",
                  "queries and keys rotated by position (RoPE, interleaved pairs)",
                  {{.name = "base",
                    .type = SchemeKey::Type::Number,
                    .default_value = 10000.0,
                    .help = "the base of the angles `θ_i = base^(−2i/d_h)`"}},
                  [](const SchemeContext& c) { return std::make_unique<Rotary>(c); }};
  info.acts = SchemeInfo::Acts::QueriesAndKeys;
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
