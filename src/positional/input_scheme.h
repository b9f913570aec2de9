// Shared by the input-side schemes (sinusoidal, learned, index, normalized, binary): they
// differ only in the table P(positions); adding or concatenating it is done here once.
//   add:    X = E[tokens]·s_emb + s_pe·P            (d_pe = d)
//   concat: X = [E[tokens]·s_emb, s_pe·P]           (d_pe = positional.dim)
#pragma once

#include <functional>

#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/positional/scheme.h"

namespace pelab {

class InputScheme : public PositionalScheme {
 public:
  explicit InputScheme(const SchemeContext& c)
      : concat_(c.keys.text("combine") == "concat"),
        scale_(static_cast<float>(c.keys.number("scale"))),
        // Without dim, concat reports 0 columns below: the message says what is valid.
        d_pe_(!concat_            ? c.model.d_model
              : c.keys.has("dim") ? c.keys.integer("dim")
                                  : 0) {
    if (concat_) {
      PELAB_CHECK(d_pe_ >= 1 && d_pe_ < c.model.d_model,
                  "positional.dim: {} is not valid with combine: concat (it must be in [1, {}], "
                  "leaving token columns out of d_model = {})",
                  d_pe_, c.model.d_model - 1, c.model.d_model);
    } else {
      PELAB_CHECK(!c.keys.has("dim"),
                  "positional.dim applies only with combine: concat (with add, d_pe = d_model)");
    }
  }

  int64_t token_width(int64_t d_model) const override {
    return concat_ ? d_model - d_pe_ : d_model;
  }

  Tensor embed(const Tensor& x, const Batch& batch) const override {
    Tensor p = encode(batch);  // [B, T, d_pe]
    if (scale_ != 1.0f) p = mul_scalar(p, scale_);
    return concat_ ? concat({x, p}, -1) : add(x, p);
  }

 protected:
  // P(positions): [B, T, d_pe].
  virtual Tensor encode(const Batch& batch) const = 0;
  int64_t d_pe() const { return d_pe_; }

  // A constant table: row(b, t, out) writes the d_pe values for token (b, t).
  Tensor constant_table(const Batch& batch,
                        const std::function<void(int64_t b, int64_t t, float* out)>& row) const {
    const int64_t B = batch.batch_size(), T = batch.length();
    Tensor p = Tensor::empty({B, T, d_pe_});
    float* data = p.data();
    parallel_for(0, B * T, 64, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) row(k / T, k % T, data + k * d_pe_);
    });
    return p;
  }

 private:
  bool concat_;
  float scale_;
  int64_t d_pe_;
};

// The keys every input-side scheme takes, then the scheme's own.
inline std::vector<SchemeKey> input_scheme_keys(std::vector<SchemeKey> own = {}) {
  std::vector<SchemeKey> keys{
      {.name = "combine",
       .type = SchemeKey::Type::Text,
       .default_value = "add",
       .choices = {"add", "concat"},
       .help = "add the table to the token embedding, or concatenate it"},
      {.name = "dim",
       .type = SchemeKey::Type::Integer,
       .min = 0,
       .max = 1 << 20,
       .help = "with `concat`: the columns `d_pe` of the positional part (required)"},
      {.name = "scale",
       .type = SchemeKey::Type::Number,
       .default_value = 1.0,
       .help = "`s_pe`, the factor on the table"},
  };
  keys.insert(keys.end(), own.begin(), own.end());
  return keys;
}

}  // namespace pelab
