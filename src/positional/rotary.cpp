// rotary (Su et al. 2021): queries and keys of every head are rotated pairwise by m·θ_i after
// their projections (bias included). Scores then depend on positions only through p_j − p_i.
// Its options (MODEL.md, "Rotary options"): positional.fraction rotates only the first pairs
// (partial rotary, as GPT-NeoX), positional.scaling stretches the angles for lengths past the
// trained ones (position interpolation, NTK, dynamic NTK, YaRN). Left out, both are plain
// rotary, by the same code path.
#include <cmath>
#include <limits>

#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/positional/scheme.h"

namespace pelab {

namespace {
using Scaling = RotaryOptions::Scaling;

// A function, not a global: the registry's table is built during static initialisation.
std::vector<std::string> scaling_types() {
  return {"none", "pi", "ntk", "dynamic_ntk", "yarn"};
}

Scaling scaling_of(const std::string& type) {
  if (type == "pi") return Scaling::Pi;
  if (type == "ntk") return Scaling::Ntk;
  if (type == "dynamic_ntk") return Scaling::DynamicNtk;
  if (type == "yarn") return Scaling::Yarn;
  PELAB_CHECK(type == "none", "positional.scaling.type: '{}' is not valid (valid: {})", type,
              join(scaling_types()));
  return Scaling::None;
}

// The options from the keys, each refusal naming its key: n_rot = ⌊f·d_h/2⌋ (the 1e-9 counts
// a product that should be an integer but rounds just below it as that integer).
RotaryOptions rotary_options(const KeyValues& keys, int64_t head_dim) {
  RotaryOptions o;
  const double fraction = keys.number("fraction");
  o.pairs = static_cast<int64_t>(std::floor(fraction * static_cast<double>(head_dim) / 2.0 + 1e-9));
  PELAB_CHECK(o.pairs >= 1,
              "positional.fraction: {} of d_h / 2 = {} pairs leaves none to rotate (n_rot = "
              "⌊f·d_h/2⌋ must be at least 1)",
              fraction, head_dim / 2);
  const std::string& type = keys.text("scaling.type");
  o.scaling = scaling_of(type);
  o.factor = keys.number("scaling.factor");
  PELAB_CHECK(std::isfinite(o.factor), "positional.scaling.factor: must be finite, got {}",
              o.factor);
  if (keys.has("scaling.original_length"))
    o.original_length = keys.integer("scaling.original_length");
  // Said at the type's line: the key missing has none.
  const bool needs_length = o.scaling == Scaling::DynamicNtk || o.scaling == Scaling::Yarn;
  PELAB_CHECK(
      !needs_length || keys.has("scaling.original_length"),
      "positional.scaling.type: {} needs positional.scaling.original_length (the length the "
      "model was trained on), which is not given",
      type);
  // b' = base·s^(d_r/(d_r−2)) has no value at d_r = 2.
  const bool ntk = o.scaling == Scaling::Ntk || o.scaling == Scaling::DynamicNtk;
  PELAB_CHECK(!ntk || o.pairs >= 2,
              "positional.fraction: scaling.type {} needs at least 2 pairs rotated, got n_rot = "
              "{} of d_h / 2 = {}",
              type, o.pairs, head_dim / 2);
  return o;
}

class Rotary : public PositionalScheme {
 public:
  explicit Rotary(const SchemeContext& c) : heads_(c.model.heads), angles_(make_angles(c)) {}

  std::pair<Tensor, Tensor> transform_qk(const Tensor& q, const Tensor& k, const Batch& batch,
                                         int /*layer*/) const override {
    return {rotary(q, batch.positions, heads_, angles_, batch.key_mask),
            rotary(k, batch.positions, heads_, angles_, batch.key_mask)};
  }

 private:
  static RotaryAngles make_angles(const SchemeContext& c) {
    const ModelConfig& m = c.model;
    PELAB_CHECK(m.head_dim() % 2 == 0,
                "rotary needs an even head width: d_model / heads = {} / {} = {}", m.d_model,
                m.heads, m.head_dim());
    const double base = c.keys.number("base");
    PELAB_CHECK(base > 0.0, "positional.base must be positive, got {}", base);
    return RotaryAngles(m.head_dim(), base, rotary_options(c.keys, m.head_dim()));
  }

  int64_t heads_;
  // Every layer and step rotates by the same angles per position: formed once, not per call.
  RotaryAngles angles_;
};

// The keys added after rotary runs were made leave config.yaml while at their defaults, so
// that those runs' configs stay as they were.
std::vector<SchemeKey> rotary_keys() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {{.name = "base",
           .type = SchemeKey::Type::Number,
           .default_value = 10000.0,
           .help = "the base of the angles `θ_i = base^(−2i/d_r)`"},
          {.name = "fraction",
           .type = SchemeKey::Type::Number,
           .default_value = 1.0,
           .min = 0.0,
           .max = 1.0,
           .help = "the first `n_rot = ⌊f·d_h/2⌋ ≥ 1` pairs rotate, over `d_r = 2·n_rot`; the "
                   "other features pass through",
           .omitted_at_default = true},
          {.name = "scaling.type",
           .type = SchemeKey::Type::Text,
           .default_value = std::string("none"),
           .choices = scaling_types(),
           .help = "how the angles are scaled for longer sequences (the options' table above)",
           .omitted_at_default = true},
          {.name = "scaling.factor",
           .type = SchemeKey::Type::Number,
           .default_value = 1.0,
           .min = 1.0,
           .max = kInf,
           .help = "`s`, the factor by which the trained length is stretched",
           .omitted_at_default = true},
          {.name = "scaling.original_length",
           .type = SchemeKey::Type::Integer,
           .min = 1.0,
           .max = static_cast<double>(std::numeric_limits<int32_t>::max()),  // a position
           .help = "`L`, the length trained on; required by `dynamic_ntk` and `yarn`"}};
}
}  // namespace

SchemeInfo rotary_scheme() {
  SchemeInfo info{"rotary", "queries and keys rotated by position (RoPE, interleaved pairs)",
                  rotary_keys(),
                  [](const SchemeContext& c) { return std::make_unique<Rotary>(c); }};
  info.acts = SchemeInfo::Acts::QueriesAndKeys;
  // Except dynamic NTK beyond its original length: MODEL.md's invariances.
  info.shift_invariant = true;
  return info;
}

}  // namespace pelab
