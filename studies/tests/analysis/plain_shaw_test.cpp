// The plain Shaw terms (a [T, T, d_h] tensor, as Shaw relative attention is usually
// implemented) give the same scores, outputs and gradients as pelab's relative scheme, which
// never forms that tensor: only then is timing one beside the other a fair comparison.
#include "pelab/analysis/plain_shaw.h"

#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

struct ShawCase {
  std::unique_ptr<Encoder> model;  // owns the relative tables
  Batch batch;
  Tensor q, k, v;
  std::shared_ptr<const AttentionTerms> fused, plain;
};

ShawCase make_case(int64_t T, int64_t k) {
  ShawCase s;
  ModelConfig config = tiny_config("relative", 12, 2, 1);
  config.positional.keys.set("max_distance", k);
  s.model = std::make_unique<Encoder>(config, make_scheme, 3);
  randomize_parameters(*s.model, 4);
  s.batch = make_batch({T, T - 2, 1}, T, 5);
  for (int32_t& p : s.batch.positions.values) p += 3;  // positions are data, not indices
  s.q = random_tensor({3, T, 12}, 6);
  s.k = random_tensor({3, T, 12}, 7);
  s.v = random_tensor({3, T, 12}, 8);
  s.fused = s.model->scheme().attention_terms(s.batch, 0);
  const TensorList tables = s.fused->parameters();
  s.plain = plain_shaw_terms(s.batch.positions, tables[0], tables[1], k);
  return s;
}

TEST(PlainShaw, SameScoresAsTheFusedScheme) {
  for (const int64_t k : {2, 9}) {  // clipped, and k beyond every distance
    ShawCase s = make_case(7, k);
    const Tensor q = random_tensor({3, 2, 7, 6}, 9);  // [B, H, T, d_h]
    EXPECT_LE(closeness(s.plain->composed_bias(q), s.fused->composed_bias(q), 1e-5, 1e-6), 1.0);
    const Tensor alpha = random_tensor({3, 2, 7, 7}, 10);
    EXPECT_LE(
        closeness(s.plain->composed_values(alpha), s.fused->composed_values(alpha), 1e-5, 1e-6),
        1.0);
  }
}

TEST(PlainShaw, SameAttentionAndGradientsAsTheFusedScheme) {
  for (const bool causal : {false, true}) {
    ShawCase s = make_case(7, 2);
    AttentionOptions o;
    o.heads = 2;
    o.causal = causal;
    o.block_rows = 3;
    TensorList inputs{s.q, s.k, s.v};
    for (const Tensor& t : s.fused->parameters()) inputs.push_back(t);
    auto run = [&](const std::shared_ptr<const AttentionTerms>& terms, bool fused_op) {
      for (Tensor& x : inputs) {
        x.zero_grad();
        if (x.is_leaf()) x.set_requires_grad(true);
      }
      Tensor z = fused_op ? attention(s.q, s.k, s.v, s.batch.key_mask, terms, o)
                          : attention_composed(s.q, s.k, s.v, s.batch.key_mask, terms, o);
      sum_all(mul(z, random_tensor(z.shape(), 11))).backward();
      TensorList out{z.detach()};
      for (Tensor& x : inputs)
        out.push_back(x.grad().defined() ? x.grad() : Tensor::zeros(x.shape()));
      return out;
    };
    const TensorList fused = run(s.fused, true);
    for (const bool fused_op : {true, false}) {
      const TensorList plain = run(s.plain, fused_op);
      for (size_t i = 0; i < fused.size(); ++i)
        EXPECT_LE(closeness(plain[i], fused[i], 1e-4, 1e-5), 1.0)
            << "output/gradient " << i << (fused_op ? " (fused op)" : " (composed)")
            << (causal ? ", causal" : "");
    }
  }
}

TEST(PlainShaw, RefusesRowsWithDifferentPositions) {
  ShawCase s = make_case(5, 2);
  s.batch.positions.values[5] += 1;
  const TensorList tables = s.fused->parameters();
  EXPECT_THROW(plain_shaw_terms(s.batch.positions, tables[0], tables[1], 2), Error);
}

}  // namespace
}  // namespace pelab::testing
