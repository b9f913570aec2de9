// The whole model's gradient by finite differences, every scheme, both norms, with dropout
// (its masks are pure functions of the seed, so the perturbed runs see the same masks).
#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "ops/gradcheck.h"

namespace pelab::testing {
namespace {

class ModelGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelGradient, MatchesFiniteDifferences) {
  for (const std::string norm : {"pre", "post"}) {
    ModelConfig config = tiny_config(GetParam(), 8, 2, 1);
    config.norm = norm;
    config.causal = norm == "post";
    config.dropout = 0.1;
    config.d_ff = 12;
    if (GetParam() == "relative") config.positional.keys.set("max_distance", int64_t{2});
    if (GetParam() == "learned") config.positional.keys.set("max_len", int64_t{8});
    Encoder model(config, make_scheme, 3);
    randomize_parameters(model, 4, 0.4f);
    const Batch batch = make_batch({5, 3}, 5, 5);
    GradCheckOptions options;
    options.max_elements_per_input = 12;
    const GradCheckResult r = gradcheck(
        [&](const TensorList&) { return model.forward(batch, /*training=*/true, 17).loss; },
        model.params().all(), options);
    EXPECT_TRUE(r.ok) << GetParam() << " " << norm << ":\n" << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, ModelGradient, ::testing::ValuesIn(scheme_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace pelab::testing
