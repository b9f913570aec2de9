// Small models and batches for the encoder's tests.
#pragma once

#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "pelab/autograd/autograd.h"
#include "pelab/core/rng.h"
#include "pelab/nn/encoder.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {

// Tolerances of the model-level property tests, whose logits are O(1..10).
inline constexpr float kSame = 2e-4f;     // agreement up to rounding
inline constexpr float kDiffers = 1e-2f;  // a real difference

// The model's logits for `batch`, without recording a graph.
inline std::vector<float> logits(const Encoder& model, const Batch& batch) {
  NoGradGuard no_grad;
  return model.forward(batch).logits.to_vector();
}

inline ModelConfig tiny_config(const std::string& scheme, int64_t d_model = 16, int64_t heads = 2,
                               int64_t layers = 2) {
  ModelConfig c;
  c.vocab_in = 9;
  c.vocab_out = 6;
  c.d_model = d_model;
  c.heads = heads;
  c.layers = layers;
  c.positional.type = scheme;
  c.causal = scheme_info(scheme).causal_only;
  resolve_run_facts(c.positional, {512, 512});  // learned: a table of 512 rows
  return c;
}

// The registered schemes for which `keep` holds, in registry order: the lists of schemes a
// test runs over come from the schemes' own facts (SchemeInfo), never a hand-written list.
inline std::vector<std::string> schemes_where(const std::function<bool(const SchemeInfo&)>& keep) {
  std::vector<std::string> names;
  for (const SchemeInfo& info : scheme_table())
    if (keep(info)) names.push_back(info.name);
  return names;
}

// The schemes that act inside attention (a logit bias, value terms, or queries and keys).
inline bool acts_in_attention(const SchemeInfo& info) {
  return info.acts == SchemeInfo::Acts::QueriesAndKeys || info.acts == SchemeInfo::Acts::Logits ||
         info.acts == SchemeInfo::Acts::LogitsAndValues;
}

// Replaces every parameter with N(0, scale²) values so that every term of the model matters
// (the default initialisation makes attention nearly uniform, which would hide position).
inline void randomize_parameters(Encoder& model, uint64_t seed, float scale = 0.5f) {
  Generator rng(seed);
  for (const Tensor& p : model.params().all()) {
    Tensor t = p;
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.normal(0.0f, scale);
  }
}

// Moves KERPLE's stored r1, r2 inside the projection's bounds [0.01, 2), where the derivative
// the model hands back is the function's own: past a bound the forward is flat and the model
// passes the bound's derivative on, on purpose, which finite differences cannot see
// (tests/positional/bias_schemes_test.cpp checks that rule).
inline void keep_inside_projections(Encoder& model) {
  if (!model.params().contains("kerple.r1")) return;
  for (const std::string name : {"kerple.r1", "kerple.r2"}) {
    Tensor r = model.params().get(name);
    for (int64_t h = 0; h < r.numel(); ++h)
      r.data()[h] = std::min(0.1f + std::fabs(r.data()[h]), 1.9f);
  }
}

// lengths[b] real tokens (right-padded to T), positions 0..T-1, random tokens and targets.
inline Batch make_batch(const std::vector<int64_t>& lengths, int64_t T, uint64_t seed,
                        int64_t vocab_in = 9, int64_t vocab_out = 6) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  Generator rng(seed);
  Batch batch;
  batch.tokens = IntTensor({B, T});
  batch.positions = IntTensor({B, T});
  batch.key_mask = IntTensor({B, T});
  batch.targets = IntTensor({B, T}, -1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t k = b * T + t;
      const bool real = t < lengths[b];
      batch.tokens.values[k] = static_cast<int32_t>(real ? rng.uniform_int(0, vocab_in - 1) : 0);
      batch.positions.values[k] = static_cast<int32_t>(t);
      batch.key_mask.values[k] = real;
      if (real) batch.targets.values[k] = static_cast<int32_t>(rng.uniform_int(0, vocab_out - 1));
    }
  return batch;
}

inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = a.size() == b.size() ? 0.0f : INFINITY;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace pelab::testing
