// What the encoder holds of a positional scheme: how position enters the model. It acts
// through three hooks, each doing nothing by default; the encoder calls all three and never
// asks which scheme it holds.
//
//   1. embed:        the input embedding (add s_pe·P(positions), or concatenate it)
//   2. transform_qk: queries and keys after their projections (rotary)
//   3. attention_terms: a logit bias R and value terms U inside attention (Shaw, ALiBi, T5)
//
// The schemes themselves, their keys and their registry are the positional layer's
// (include/pelab/positional/scheme.h), one layer up. The encoder is given the factory that
// builds its scheme (the registry's make_scheme, or a test's), so nn uses nothing above itself.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "pelab/data/batch.h"
#include "pelab/nn/attention.h"
#include "pelab/nn/model_config.h"
#include "pelab/nn/parameters.h"

namespace pelab {

class PositionalScheme {
 public:
  virtual ~PositionalScheme() = default;

  // Columns of the token embedding (d, or d − d_pe when concatenating).
  virtual int64_t token_width(int64_t d_model) const { return d_model; }
  // Hook 1. x: [B, T, token_width] → [B, T, d].
  virtual Tensor embed(const Tensor& x, const Batch& /*batch*/) const { return x; }
  // Hook 2. q, k: [B, T, d] (heads as column blocks) → transformed q, k.
  virtual std::pair<Tensor, Tensor> transform_qk(const Tensor& q, const Tensor& k,
                                                 const Batch& /*batch*/, int /*layer*/) const {
    return {q, k};
  }
  // Hook 3. The terms of layer `layer` for this batch, or null.
  virtual std::shared_ptr<const AttentionTerms> attention_terms(const Batch& /*batch*/,
                                                                int /*layer*/) const {
    return nullptr;
  }
  // The largest position the scheme can represent (learned: max_len − 1); -1 = unbounded.
  virtual int64_t max_position() const { return -1; }
};

// What a scheme's factory gets: the model config, the scheme's keys with their defaults
// filled in and checked against the scheme's key table, and the parameter store to register
// its parameters in (under MODEL.md's names).
struct SchemeContext {
  const ModelConfig& model;
  const KeyValues& keys;
  ParameterStore& params;
};

// Builds the scheme a model config names and registers its parameters in `params` (under
// MODEL.md's names): what the encoder is given. The positional layer's registry provides the
// one every run uses, make_scheme (pelab/positional/scheme.h).
using SchemeFactory =
    std::function<std::unique_ptr<PositionalScheme>(const ModelConfig&, ParameterStore&)>;

}  // namespace pelab
