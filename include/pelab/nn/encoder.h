// The encoder of MODEL.md: token embedding (scaled), the scheme's input hook, L pre-LN or
// post-LN layers of multi-head attention and FFN, final LN (pre-LN), linear head, and the
// mean cross-entropy over scored positions. Dropout at MODEL.md's four places.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pelab/data/batch.h"
#include "pelab/nn/model_config.h"
#include "pelab/nn/parameters.h"
#include "pelab/nn/positional_scheme.h"

namespace pelab {

// Checks the model.* keys on their own (heads divide d_model, known norm/activation, ...);
// throws an error naming the key and what would be valid. The positional.* keys are checked
// by their scheme's key table when the encoder builds the scheme.
void validate_model_config(const ModelConfig& config);

class Encoder {
 public:
  // Builds the model with the positional scheme `make_scheme` builds for `config` (the
  // registry's make_scheme, pelab/positional/scheme.h) and initialises its parameters from
  // `init_seed` (docs/model.md); `Values::Unset` builds it without drawing the values, to
  // check a config.
  Encoder(const ModelConfig& config, const SchemeFactory& make_scheme, uint64_t init_seed,
          ParameterStore::Values values = ParameterStore::Values::Drawn);

  struct Output {
    Tensor logits;  // [B, T, V_out]
    Tensor loss;    // [] — undefined when the batch scores no position
  };
  // training = true turns dropout on; its masks are a pure function of dropout_seed.
  Output forward(const Batch& batch, bool training = false, uint64_t dropout_seed = 0) const;

  // The attention weights α of every layer, [B, H, T, T] each, in evaluation mode (no
  // dropout, no gradients): what `pelab analyze attention` plots.
  std::vector<Tensor> attention_maps(const Batch& batch) const;

  // Fused attention (default) or the composed oracle, for tests.
  enum class AttentionImpl { Fused, Composed };
  void set_attention_impl(AttentionImpl impl) { attention_impl_ = impl; }

  // Training runs the row-wise parts of every layer (projections, FFN, layer norm, residuals,
  // the head) on the batch's real tokens only: padding never reaches a real token (it is
  // masked as a key) and is never scored, so its rows are work whose results nobody reads —
  // about half the rows of a batch with lengths uniform in [1, T]. Their logits are 0.
  // Evaluation computes every row (docs/model.md). `Compute` makes training do so too (tests).
  enum class PaddedRows { SkipInTraining, Compute };
  void set_padded_rows(PaddedRows rows) { padded_rows_ = rows; }

  const ModelConfig& config() const { return config_; }
  ParameterStore& params() { return params_; }
  const ParameterStore& params() const { return params_; }
  const PositionalScheme& scheme() const { return *scheme_; }

 private:
  struct Linear {
    Tensor weight, bias;
  };
  struct Norm {
    Tensor weight, bias;
  };
  struct Layer {
    Norm ln1, ln2;
    Linear q, k, v, o, fc1, fc2;
  };
  // The rows a forward pass runs its row-wise parts on (encoder.cpp): the B·T token slots,
  // or only the real tokens' N.
  struct TokenRows;

  Tensor attention_block(const Tensor& x, const Batch& batch, const TokenRows& rows, int layer,
                         bool training, uint64_t dropout_seed) const;
  Tensor ffn_block(const Tensor& x, const Layer& layer) const;
  Linear make_linear(const std::string& name, int64_t in, int64_t out);
  Norm make_norm(const std::string& name, int64_t width);

  ModelConfig config_;
  ParameterStore params_;
  Tensor embed_;
  std::unique_ptr<PositionalScheme> scheme_;
  std::vector<Layer> layers_;
  Norm ln_f_;  // pre-LN only
  Linear head_;
  AttentionImpl attention_impl_ = AttentionImpl::Fused;
  PaddedRows padded_rows_ = PaddedRows::SkipInTraining;
  // Set only inside attention_maps(): where attention_block records each layer's α.
  mutable std::vector<Tensor>* attention_record_ = nullptr;
};

}  // namespace pelab
