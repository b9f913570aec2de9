// learned: P[p] = pos.weight[p], a trained table of max_len rows. A position ≥ max_len has
// no row: it is an error naming the position and the table size, never a silent clamp.
#include <cmath>

#include "input_scheme.h"

namespace pelab {

namespace {
class Learned : public InputScheme {
 public:
  explicit Learned(const SchemeContext& c) : InputScheme(c), max_len_(c.keys.integer("max_len")) {
    PELAB_CHECK(max_len_ >= 1,
                "learned positions need positional.max_len >= 1 (the longest length the run "
                "trains or evaluates on), got {}",
                max_len_);
    // N(0, 1/√2): the same per-coordinate RMS as the sinusoidal table's sin/cos entries,
    // so learned and fixed tables start at the same scale next to the unit-scale tokens.
    table_ = c.params.add_normal("pos.weight", {max_len_, d_pe()}, 0.70710678f);
  }

  int64_t max_position() const override { return max_len_ - 1; }

 protected:
  Tensor encode(const Batch& batch) const override {
    for (int64_t i = 0; i < batch.positions.numel(); ++i) {
      const int32_t p = batch.positions.values[i];
      PELAB_CHECK(p < max_len_,
                  "learned positions: position {} has no row in pos.weight (positional.max_len "
                  "= {}, so positions must be < {}); raise positional.max_len",
                  p, max_len_, max_len_);
    }
    return embedding(table_, batch.positions);
  }

 private:
  int64_t max_len_;
  Tensor table_;
};
}  // namespace

SchemeInfo learned_scheme() {
  SchemeInfo info{
      "learned", "a trained table of max_len position vectors added to the input",
      input_scheme_keys({{.name = "max_len",
                          .type = SchemeKey::Type::Integer,
                          .default_value = int64_t{0},
                          .min = 0,
                          .max = 1 << 24,
                          .help = "rows of the table; 0 = the longest length the run trains "
                                  "or evaluates on (or `randomize.max_position`)"}}),
      [](const SchemeContext& c) { return std::make_unique<Learned>(c); },
      // The table must hold every position the run uses: the longest sequence, or M
      // when positions are randomized.
      [](const RunFacts& run, KeyValues& keys) {
        const int64_t max_len = keys.has("max_len") ? keys.integer("max_len") : 0;
        if (max_len == 0) {
          keys.set("max_len", run.positions);
        } else if (max_len < run.positions) {
          throw Error(fmt::format(
              "positional.max_len: the learned table has {} rows but the run uses positions "
              "up to {} (sequences of up to {} tokens); raise it or shorten "
              "evaluation.lengths",
              max_len, run.positions - 1, run.longest_sequence));
        }
      }};
  info.acts = SchemeInfo::Acts::Input;
  return info;
}

}  // namespace pelab
