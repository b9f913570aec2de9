// Every scheme can fit one small batch of random targets: the whole path — forward, fused
// attention with its positional terms, backward, AdamW — drives the loss near zero.
// Each token occurrence in the batch has its own id, so the batch is fittable by every
// scheme, also by those that cannot tell some positions apart (none; index and normalized,
// whose constant column a pre-LN model's first LayerNorm removes; symmetric ALiBi, which is
// blind to left and right). What a scheme can represent is tested elsewhere, exactly.
#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "pelab/positional/scheme.h"
#include "pelab/train/optimizer.h"

namespace pelab::testing {
namespace {

class OverfitSlow : public ::testing::TestWithParam<std::string> {};

TEST_P(OverfitSlow, DrivesTheLossOfOneBatchNearZero) {
  ModelConfig config = tiny_config(GetParam(), 32, 4, 2);
  config.vocab_in = 24;
  Encoder model(config, make_scheme, 11);
  Batch batch = make_batch({6, 5, 6, 3}, 6, 12);
  for (size_t k = 0; k < batch.tokens.values.size(); ++k)
    batch.tokens.values[k] = static_cast<int32_t>(k);
  AdamOptions options;
  AdamW optimizer(model.params().all(), options);
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    const Encoder::Output out = model.forward(batch, true, static_cast<uint64_t>(step));
    optimizer.zero_grad();
    out.loss.backward();
    optimizer.step(step < 20 ? 1e-2f * (step + 1) / 20 : 1e-2f);
    if (step == 0) first = out.loss.item();
    last = out.loss.item();
  }
  EXPECT_GT(first, 1.0f);
  EXPECT_LT(last, 0.02f) << "first loss " << first;
}

INSTANTIATE_TEST_SUITE_P(Schemes, OverfitSlow, ::testing::ValuesIn(scheme_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace pelab::testing
