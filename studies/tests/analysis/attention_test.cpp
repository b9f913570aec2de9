// Attention maps and the by-distance analysis.
#include "pelab/analysis/attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/model_util.h"
#include "pelab/core/rng.h"
#include "pelab/data/batching.h"
#include "pelab/data/position_ids.h"
#include "pelab/data/task.h"
#include "pelab/nn/attention.h"
#include "pelab/positional/scheme.h"

namespace pelab {
namespace {

using testing::make_batch;
using testing::randomize_parameters;
using testing::tiny_config;

// For every scheme that acts inside attention: the maps come through each one's own terms.
TEST(AttentionMaps, RowsAreDistributionsOverRealKeys) {
  for (const std::string& scheme : testing::schemes_where(testing::acts_in_attention))
    for (const bool causal : {false, true}) {
      if (!causal && scheme_info(scheme).causal_only) continue;
      SCOPED_TRACE(scheme);
      ModelConfig c = tiny_config(scheme, 16, 2, 2);
      c.causal = causal;
      Encoder model(c, make_scheme, 1);
      randomize_parameters(model, 2);
      const Batch batch = make_batch({7, 4}, 7, 3);
      const std::vector<Tensor> maps = model.attention_maps(batch);
      ASSERT_EQ(maps.size(), 2u);
      for (const Tensor& alpha : maps) {
        ASSERT_EQ(alpha.shape(), (Shape{2, 2, 7, 7}));
        for (int64_t b = 0; b < 2; ++b)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t i = 0; i < 7; ++i) {
              double sum = 0;
              for (int64_t j = 0; j < 7; ++j) {
                const float w = alpha.at({b, h, i, j});
                const bool allowed = batch.key_mask.values[b * 7 + j] && (!causal || j <= i);
                if (!allowed) {
                  EXPECT_EQ(w, 0.0f) << b << h << i << j;
                }
                sum += w;
              }
              EXPECT_NEAR(sum, 1.0, 1e-5);
            }
      }
    }
}

TEST(AttentionWeights, AreWhatTheFusedOpAppliesToTheValues) {
  // With v holding one-hot rows (v[j] = e_j in every head's columns), the fused op's output
  // is α itself: z[i, h·d_h + j] = α[h, i, j].
  const int64_t T = 6, H = 2, dh = 8, d = H * dh;
  Generator rng(4);
  std::vector<float> qv(T * d), kv(T * d), vv(T * d, 0.0f);
  for (float& x : qv) x = rng.normal(0.0f, 1.0f);
  for (float& x : kv) x = rng.normal(0.0f, 1.0f);
  for (int64_t j = 0; j < T; ++j)
    for (int64_t h = 0; h < H; ++h) vv[j * d + h * dh + j] = 1.0f;
  const Tensor q = Tensor::from_vector({1, T, d}, qv), k = Tensor::from_vector({1, T, d}, kv),
               v = Tensor::from_vector({1, T, d}, vv);
  const IntTensor mask({1, T}, std::vector<int32_t>{1, 1, 1, 1, 1, 0});
  for (const bool causal : {false, true}) {
    AttentionOptions o;
    o.heads = H;
    o.causal = causal;
    o.block_rows = 4;  // two blocks of query rows
    const Tensor z = attention(q, k, v, mask, nullptr, o);
    const Tensor alpha = attention_weights(q, k, mask, nullptr, o);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          EXPECT_NEAR(alpha.at({0, h, i, j}), z.at({0, i, h * dh + j}), 1e-6f) << h << i << j;
  }
}

TEST(AttentionMaps, LeaveLaterForwardsUnchanged) {
  ModelConfig c = tiny_config("t5", 16, 2, 1);
  Encoder model(c, make_scheme, 1);
  randomize_parameters(model, 5);
  const Batch batch = make_batch({6}, 6, 7);
  const std::vector<float> before = model.forward(batch).logits.to_vector();
  EXPECT_EQ(model.attention_maps(batch).size(), 1u);
  EXPECT_EQ(model.forward(batch).logits.to_vector(), before);
}

// A one-layer model of `scheme` sized for `task`'s vocabulary.
ModelConfig config_for(const Task& task, const std::string& scheme) {
  ModelConfig c = tiny_config(scheme, 16, 2, 1);
  c.vocab_in = task.info().vocab_in();
  c.vocab_out = task.info().vocab_out();
  return c;
}

TEST(AnalyzeAttention, UniformAttentionWithoutPositionsIsFlatByDistance) {
  // `none`, bidirectional, with q = k = 0 (all weights zero): every real key gets 1/T.
  const std::unique_ptr<Task> task = make_task("shift");
  Encoder model(config_for(*task, "none"), make_scheme, 1);
  for (const std::string name : {"layers.0.attn.q.weight", "layers.0.attn.k.weight"}) {
    Tensor w = model.params().get(name);
    for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = 0.0f;
  }
  for (const std::string name : {"layers.0.attn.q.bias", "layers.0.attn.k.bias"}) {
    Tensor w = model.params().get(name);
    for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = 0.0f;
  }
  AttentionAnalysisOptions o;
  o.length = 5;
  o.examples = 3;
  const AttentionAnalysis a = analyze_attention(model, *task, o);
  EXPECT_EQ(a.tokens, 5);
  ASSERT_EQ(a.distances.size(), 9u);
  for (const auto& curve : a.by_distance)
    for (double v : curve) EXPECT_NEAR(v, 0.2, 1e-6);
  EXPECT_EQ(a.shown_tokens.size(), 5u);
}

TEST(AnalyzeAttention, CausalShiftModelLooksBackOnly) {
  const std::unique_ptr<Task> task = make_task("shift");
  ModelConfig c = config_for(*task, "alibi");
  c.causal = true;
  Encoder model(c, make_scheme, 1);
  randomize_parameters(model, 9);
  AttentionAnalysisOptions o;
  o.length = 6;
  o.examples = 4;
  const AttentionAnalysis a = analyze_attention(model, *task, o);
  for (const auto& curve : a.by_distance)
    for (size_t k = 0; k < a.distances.size(); ++k)
      if (a.distances[k] > 0) {
        EXPECT_EQ(curve[k], 0.0);
      }
}

// A run trained with task.position_ids: digit_runs is read at the positions its evaluation
// uses (each digit's index in its run, no offset), not at 0..T-1: the map shown is the
// model's own on that input alone, and a learned table makes the control, 0..T-1, differ.
// decimal_addition's inputs of one size differ in length, and 40 of them go in batches of
// 16: the shown one (in the third batch) is shorter than the longest.
TEST(AnalyzeAttention, DigitRunsNumberTheInputsAsEvaluationDoes) {
  const std::unique_ptr<Task> task = make_task("decimal_addition");
  Encoder model(config_for(*task, "learned"), make_scheme, 1);
  randomize_parameters(model, 5);
  AttentionAnalysisOptions o;
  o.length = 3;
  o.examples = 40;
  o.position_ids = "digit_runs";
  const std::vector<Example> inputs = evaluation_examples(*task, o.length, o.examples, o.eval_seed);
  o.shown = 32;
  while (o.shown < 39 && std::ssize(inputs[static_cast<size_t>(o.shown)].tokens) ==
                             task->sequence_length(static_cast<int>(o.length)))
    ++o.shown;
  const int64_t S = std::ssize(inputs[static_cast<size_t>(o.shown)].tokens);
  const AttentionAnalysis runs = analyze_attention(model, *task, o);
  ASSERT_LT(S, runs.tokens) << "no input in the third batch is shorter than the longest";
  ASSERT_EQ(std::ssize(runs.shown_tokens), S);

  const DigitRuns digits = digit_runs_of(task->info(), 0);
  const Batch alone = collate({inputs[static_cast<size_t>(o.shown)]}, nullptr, nullptr, &digits);
  const std::vector<float> alpha = model.attention_maps(alone)[0].to_vector();  // [1, H, S, S]
  for (int64_t h = 0; h < runs.heads; ++h)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j)
        EXPECT_NEAR(runs.shown[static_cast<size_t>(h)].at(i, j),
                    alpha[static_cast<size_t>((h * S + i) * S + j)], 1e-6);
  for (const auto& curve : runs.by_distance)
    for (double v : curve) EXPECT_TRUE(std::isnan(v) || (v >= 0 && v <= 1)) << v;

  o.position_ids = "index";
  const AttentionAnalysis index = analyze_attention(model, *task, o);
  EXPECT_NE(index.shown[0].values, runs.shown[0].values);
}

}  // namespace
}  // namespace pelab
