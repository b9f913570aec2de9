// pelab's encoder against an independent PyTorch implementation of MODEL.md
// (tools/make_model_fixtures.py): logits, loss and every parameter's gradient, for every
// scheme, both norms, causal and not, padding on either side, randomized positions.
//
// Tolerances. The reference is float64 rounded to float32; pelab computes in float32. The
// forward's error is a few float32 roundings per op through ~30 ops: relative 1e-5 with an
// absolute floor of 1e-5 on O(1) logits. Gradients pass through twice as many ops and
// through cancellations (softmax, layer norm), so we allow 1e-4 relative with an absolute
// floor of 1e-5 scaled by the gradient's largest magnitude. A wrong positional term moves
// logits and gradients at the 1e-1 level (the fixtures use large parameters on purpose).
#include <gtest/gtest.h>

#include <cmath>

#include "nn/fixture_util.h"
#include "ops/gradcheck.h"
#include "pelab/backend/gemm.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (float v : t.to_vector()) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

struct Compared {
  double logits = 0, loss = 0, worst_grad = 0;
  std::string worst_grad_name;
};

Compared compare(const std::string& name, Encoder::AttentionImpl impl) {
  const SafetensorsFile file = read_safetensors(fixture_dir() + "/" + name + ".safetensors");
  std::unique_ptr<Encoder> model = load_model(file);
  model->set_attention_impl(impl);
  const Batch batch = fixture_batch(file);
  const Encoder::Output out = model->forward(batch);
  Compared c;
  c.logits = closeness(out.logits, file.tensor("output.logits"), 1e-5, 1e-5);
  c.loss = closeness(out.loss, file.tensor("output.loss"), 1e-5, 1e-6);
  out.loss.backward();
  for (const Tensor& p : model->params().all()) {
    const Tensor expected = file.tensor("grad." + p.name());
    const Tensor got = p.grad().defined() ? p.grad() : Tensor::zeros(p.shape());
    const double err = closeness(got, expected, 1e-4, 1e-5 * std::max(1.0, max_abs(expected)));
    if (err > c.worst_grad) {
      c.worst_grad = err;
      c.worst_grad_name = p.name();
    }
  }
  return c;
}

class ModelFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelFixture, FusedMatchesPyTorch) {
  const Compared c = compare(GetParam(), Encoder::AttentionImpl::Fused);
  EXPECT_LE(c.logits, 1.0) << "logits";
  EXPECT_LE(c.loss, 1.0) << "loss";
  EXPECT_LE(c.worst_grad, 1.0) << "gradient of " << c.worst_grad_name;
}

TEST_P(ModelFixture, ComposedMatchesPyTorch) {
  const Compared c = compare(GetParam(), Encoder::AttentionImpl::Composed);
  EXPECT_LE(c.logits, 1.0) << "logits";
  EXPECT_LE(c.loss, 1.0) << "loss";
  EXPECT_LE(c.worst_grad, 1.0) << "gradient of " << c.worst_grad_name;
}

TEST_P(ModelFixture, EveryGemmBackendMatchesPyTorch) {
  const GemmBackend saved = gemm_backend();
  for (GemmBackend b :
       {GemmBackend::OneDnn, GemmBackend::OpenBlas, GemmBackend::Packed, GemmBackend::Reference}) {
    set_gemm_backend(b);
    const Compared c = compare(GetParam(), Encoder::AttentionImpl::Fused);
    EXPECT_LE(c.logits, 1.0) << to_string(b);
    EXPECT_LE(c.worst_grad, 1.0) << to_string(b) << " gradient of " << c.worst_grad_name;
  }
  set_gemm_backend(saved);
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelFixture, ::testing::ValuesIn(fixture_cases()), case_name);

// Every scheme has a pre-LN case and a post-LN causal one: `<scheme>_pre` (`<scheme>_causal_pre`
// for a causal-only scheme) and `<scheme>_post_causal`, or, for a scheme whose cases are named by
// the value of a key with choices (kerple's `kernel`), `<scheme>_<value>_pre` and
// `<scheme>_<value>_post_causal` for every value.
TEST(ModelFixtureSet, CoversEverySchemeAndBothNorms) {
  const std::vector<std::string> cases = fixture_cases();
  auto has = [&](const std::string& name) {
    return std::find(cases.begin(), cases.end(), name) != cases.end();
  };
  for (const SchemeInfo& info : scheme_table()) {
    std::vector<std::string> stems = {info.name};
    for (const SchemeKey& key : info.keys)
      if (!has(info.name + "_pre") && !key.choices.empty() &&
          has(info.name + "_" + key.choices[0] + "_pre")) {
        stems.clear();
        for (const std::string& value : key.choices) stems.push_back(info.name + "_" + value);
      }
    // A causal-only scheme's pre-LN case is causal too: `<scheme>_causal_pre`.
    const std::string pre = info.causal_only ? "_causal_pre" : "_pre";
    for (const std::string& stem : stems) {
      EXPECT_TRUE(has(stem + pre)) << stem;
      EXPECT_TRUE(has(stem + "_post_causal")) << stem;
    }
  }
}

}  // namespace
}  // namespace pelab::testing
