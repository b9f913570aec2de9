#include "pelab/nn/encoder.h"

#include <algorithm>
#include <cmath>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"

namespace pelab {

void validate_model_config(const ModelConfig& c) {
  // Upper bounds keep every size computed from these (4·d_model, d_model + dim, ...) far from
  // overflow; the parameter budget (ParameterStore) bounds their product.
  constexpr int64_t kMaxWidth = int64_t{1} << 20, kMaxLayers = 4096;
  PELAB_CHECK(
      c.vocab_in >= 1 && c.vocab_out >= 1 && c.vocab_in <= kMaxWidth && c.vocab_out <= kMaxWidth,
      "model.vocab_in and model.vocab_out must be in [1, {}] (got {} and {})", kMaxWidth,
      c.vocab_in, c.vocab_out);
  PELAB_CHECK(c.d_model >= 1 && c.d_model <= kMaxWidth, "model.d_model must be in [1, {}], got {}",
              kMaxWidth, c.d_model);
  PELAB_CHECK(c.heads >= 1 && c.d_model % c.heads == 0,
              "model.heads: {} heads do not divide model.d_model = {} (valid: a divisor of {})",
              c.heads, c.d_model, c.d_model);
  PELAB_CHECK(c.layers >= 1 && c.layers <= kMaxLayers, "model.layers must be in [1, {}], got {}",
              kMaxLayers, c.layers);
  PELAB_CHECK(c.d_ff >= 0 && c.d_ff <= kMaxWidth,
              "model.d_ff must be in [1, {}] (or 0 for 4·d_model), got {}", kMaxWidth, c.d_ff);
  PELAB_CHECK(c.dropout >= 0.0 && c.dropout < 1.0, "model.dropout must be in [0, 1), got {}",
              c.dropout);
  PELAB_CHECK(c.norm == "pre" || c.norm == "post",
              "model.norm: '{}' is not valid (valid: pre, post)", c.norm);
  PELAB_CHECK(c.activation == "gelu" || c.activation == "relu",
              "model.activation: '{}' is not valid (valid: gelu, relu)", c.activation);
  PELAB_CHECK(!c.embed_scale || std::isfinite(*c.embed_scale),
              "model.embed_scale must be a finite number");
}

Encoder::Linear Encoder::make_linear(const std::string& name, int64_t in, int64_t out) {
  return {params_.add_normal(name + ".weight", {out, in}, 0.02f),
          params_.add_constant(name + ".bias", {out}, 0.0f)};
}

Encoder::Norm Encoder::make_norm(const std::string& name, int64_t width) {
  return {params_.add_constant(name + ".weight", {width}, 1.0f),
          params_.add_constant(name + ".bias", {width}, 0.0f)};
}

Encoder::Encoder(const ModelConfig& config, const SchemeFactory& make_scheme, uint64_t init_seed,
                 ParameterStore::Values values)
    : config_(config), params_(init_seed, values) {
  validate_model_config(config_);
  const int64_t d = config_.d_model;
  // Registration order follows MODEL.md's table; each parameter's values depend only on the
  // seed and its name. The scheme is built first so that it can fix the token width.
  scheme_ = make_scheme(config_, params_);
  // N(0, 1/d): with s_emb = √d the embedded tokens have unit scale.
  embed_ = params_.add_normal("embed.weight", {config_.vocab_in, scheme_->token_width(d)},
                              static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  for (int64_t l = 0; l < config_.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer layer;
    layer.ln1 = make_norm(p + "ln1", d);
    layer.q = make_linear(p + "attn.q", d, d);
    layer.k = make_linear(p + "attn.k", d, d);
    layer.v = make_linear(p + "attn.v", d, d);
    layer.o = make_linear(p + "attn.o", d, d);
    layer.ln2 = make_norm(p + "ln2", d);
    layer.fc1 = make_linear(p + "ffn.fc1", d, config_.ffn_width());
    layer.fc2 = make_linear(p + "ffn.fc2", config_.ffn_width(), d);
    layers_.push_back(layer);
  }
  if (config_.norm == "pre") ln_f_ = make_norm("ln_f", d);
  head_ = make_linear("head", d, config_.vocab_out);
}

// `gather` lists the slots b·T + t the rows hold, in order (N of them); `scatter` gives each of
// the B·T slots its row, or N (a zero row) for a slot left out. Every slot (`all`): no copies.
struct Encoder::TokenRows {
  IntTensor gather, scatter;
  bool all = true;

  // Every slot, or (skip_padding) the real tokens' slots only.
  TokenRows(const Batch& batch, bool skip_padding) {
    const std::vector<int32_t>& real = batch.key_mask.values;
    const int64_t slots = static_cast<int64_t>(real.size());
    all = !skip_padding || std::all_of(real.begin(), real.end(), [](int32_t m) { return m != 0; });
    if (all) return;
    std::vector<int32_t> kept;
    for (int64_t s = 0; s < slots; ++s)
      if (real[s]) kept.push_back(static_cast<int32_t>(s));
    const auto n = static_cast<int32_t>(kept.size());
    std::vector<int32_t> row_of(static_cast<size_t>(slots), n);
    for (int32_t r = 0; r < n; ++r) row_of[kept[r]] = r;
    gather = IntTensor({n}, std::move(kept));
    scatter = IntTensor({slots}, std::move(row_of));
  }

  // [B, T, w] → [N, w]: the rows kept.
  Tensor to_rows(const Tensor& x) const {
    const Tensor flat = reshape(x, {x.size(0) * x.size(1), x.size(2)});
    return all ? flat : gather_rows(flat, gather);
  }

  // [N, w] → [B, T, w], zeros in the slots left out.
  Tensor to_slots(const Tensor& rows, int64_t B, int64_t T) const {
    return reshape(all ? rows : scatter_rows(rows, scatter), {B, T, rows.size(1)});
  }
};

namespace {
// Dropout sites of one forward pass: 0 = input; per layer l: 1 + 3l (α), 2 + 3l (MHA out),
// 3 + 3l (FFN out). Each site's mask comes from its own derived seed.
uint64_t site_seed(uint64_t seed, int64_t site) {
  return mix64(seed ^ mix64(static_cast<uint64_t>(site) + 1));
}
}  // namespace

// x: [N, d], the rows of `rows`; attention itself runs on the [B, T, d] slots.
Tensor Encoder::attention_block(const Tensor& x, const Batch& batch, const TokenRows& rows, int l,
                                bool training, uint64_t dropout_seed) const {
  const int64_t B = batch.batch_size(), T = batch.length();
  const Layer& layer = layers_[l];
  Tensor q = rows.to_slots(linear(x, layer.q.weight, layer.q.bias), B, T);  // [B, T, d]
  Tensor k = rows.to_slots(linear(x, layer.k.weight, layer.k.bias), B, T);
  const Tensor v = rows.to_slots(linear(x, layer.v.weight, layer.v.bias), B, T);
  std::tie(q, k) = scheme_->transform_qk(q, k, batch, l);
  const std::shared_ptr<const AttentionTerms> terms = scheme_->attention_terms(batch, l);
  AttentionOptions options;
  options.heads = config_.heads;
  options.causal = config_.causal;
  options.dropout = training ? static_cast<float>(config_.dropout) : 0.0f;
  options.dropout_seed = site_seed(dropout_seed, 1 + 3 * l);
  options.skip_padded_queries = !rows.all;  // to_rows below drops the padded rows' z
  if (attention_record_)
    attention_record_->push_back(attention_weights(q, k, batch.key_mask, terms, options));
  const Tensor z = attention_impl_ == AttentionImpl::Fused
                       ? attention(q, k, v, batch.key_mask, terms, options)
                       : attention_composed(q, k, v, batch.key_mask, terms, options);
  return linear(rows.to_rows(z), layer.o.weight, layer.o.bias);  // [N, d]
}

Tensor Encoder::ffn_block(const Tensor& x, const Layer& layer) const {
  const Tensor hidden = linear(x, layer.fc1.weight, layer.fc1.bias);
  const Tensor act = config_.activation == "gelu" ? gelu(hidden) : relu(hidden);
  return linear(act, layer.fc2.weight, layer.fc2.bias);
}

std::vector<Tensor> Encoder::attention_maps(const Batch& batch) const {
  NoGradGuard no_grad;
  std::vector<Tensor> maps;
  attention_record_ = &maps;
  try {
    forward(batch, false);
  } catch (...) {
    attention_record_ = nullptr;
    throw;
  }
  attention_record_ = nullptr;
  return maps;
}

Encoder::Output Encoder::forward(const Batch& batch, bool training, uint64_t dropout_seed) const {
  batch.validate(config_.vocab_in, config_.vocab_out);
  const float p = training ? static_cast<float>(config_.dropout) : 0.0f;
  auto drop = [&](const Tensor& t, int64_t site) {
    return p > 0.0f ? dropout(t, p, site_seed(dropout_seed, site)) : t;
  };
  const int64_t B = batch.batch_size(), T = batch.length();
  Tensor x = mul_scalar(embedding(embed_, batch.tokens),
                        static_cast<float>(config_.embedding_scale()));  // [B, T, token width]
  x = scheme_->embed(x, batch);                                          // [B, T, d]
  x = drop(x, 0);
  const TokenRows rows(batch, training && padded_rows_ == PaddedRows::SkipInTraining);
  x = rows.to_rows(x);  // [N, d]
  for (int l = 0; l < static_cast<int>(layers_.size()); ++l) {
    const Layer& layer = layers_[l];
    if (config_.norm == "pre") {
      x = add(x, drop(attention_block(layer_norm(x, layer.ln1.weight, layer.ln1.bias), batch, rows,
                                      l, training, dropout_seed),
                      2 + 3 * l));
      x = add(x,
              drop(ffn_block(layer_norm(x, layer.ln2.weight, layer.ln2.bias), layer), 3 + 3 * l));
    } else {
      x = layer_norm(
          add(x, drop(attention_block(x, batch, rows, l, training, dropout_seed), 2 + 3 * l)),
          layer.ln1.weight, layer.ln1.bias);
      x = layer_norm(add(x, drop(ffn_block(x, layer), 3 + 3 * l)), layer.ln2.weight,
                     layer.ln2.bias);
    }
  }
  if (config_.norm == "pre") x = layer_norm(x, ln_f_.weight, ln_f_.bias);
  Output out;
  out.logits = rows.to_slots(linear(x, head_.weight, head_.bias), B, T);  // [B, T, V_out]
  bool scored = false;
  for (int32_t y : batch.targets.values) scored = scored || y != -1;
  if (scored) {
    const IntTensor flat_targets({B * T}, batch.targets.values);
    out.loss = cross_entropy(reshape(out.logits, {B * T, config_.vocab_out}), flat_targets, -1);
  }
  return out;
}

}  // namespace pelab
