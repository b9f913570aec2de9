// The whole model's gradient by finite differences, every scheme, both norms, with dropout
// (its masks are pure functions of the seed, so the perturbed runs see the same masks).
#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "ops/gradcheck.h"

namespace pelab::testing {
namespace {

class ModelGradient : public ::testing::TestWithParam<std::string> {};

// Both norms (post-LN causal), with dropout, for one scheme and its keys.
void expect_gradient_matches(const std::string& scheme, const KeyValues& keys) {
  for (const std::string norm : {"pre", "post"}) {
    ModelConfig config = tiny_config(scheme, 8, 2, 1);
    config.norm = norm;
    config.causal = norm == "post" || scheme_info(scheme).causal_only;
    config.dropout = 0.1;
    config.d_ff = 12;
    for (const auto& [key, value] : keys.all()) config.positional.keys.set(key, value);
    Encoder model(config, make_scheme, 3);
    randomize_parameters(model, 4, 0.4f);
    keep_inside_projections(model);
    const Batch batch = make_batch({5, 3}, 5, 5);
    GradCheckOptions options;
    options.max_elements_per_input = 12;
    // fire's ReLU units have kinks, where finite differences average two slopes: a smaller
    // step (still far above float32's rounding here) keeps clear of them.
    if (scheme == "fire") options.epsilon = 1e-3;
    const GradCheckResult r = gradcheck(
        [&](const TensorList&) { return model.forward(batch, /*training=*/true, 17).loss; },
        model.params().all(), options);
    EXPECT_TRUE(r.ok) << scheme << " " << norm << ":\n" << r.message;
  }
}

TEST_P(ModelGradient, MatchesFiniteDifferences) {
  KeyValues keys;
  if (GetParam() == "relative") keys.set("max_distance", int64_t{2});
  if (GetParam() == "learned") keys.set("max_len", int64_t{8});
  expect_gradient_matches(GetParam(), keys);
}

// The options whose gradients the defaults do not reach: KERPLE's power kernel (its ∂/∂r2 is
// d^r2·ln d), CoPE's clamp, and FIRE with a threshold L below most positions (the default's L =
// |ℓ|·512 is above every position of these batches, so ∂/∂ℓ never meets the p_i > L branch).
TEST(ModelGradientOptions, MatchFiniteDifferences) {
  expect_gradient_matches("kerple", {{"kernel", std::string("power")}});
  expect_gradient_matches("fire", {{"threshold", 2.0}, {"mlp_width", int64_t{6}}});
  expect_gradient_matches("alibi", {{"bidirectional", std::string("deepmind")}});
  // CoPE with counts past npos − 1 (clamped, no derivative through ν) and below it; xpos with
  // a decay that matters over these few positions; xl_relative's angles at a small base.
  expect_gradient_matches("cope", {{"max_position", int64_t{3}}});
  expect_gradient_matches("xpos", {{"scale_base", 4.0}});
  expect_gradient_matches("xl_relative", {{"base", 10.0}});
}

INSTANTIATE_TEST_SUITE_P(Schemes, ModelGradient, ::testing::ValuesIn(scheme_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace pelab::testing
