// The logit-bias schemes' own rules that the fixtures and the tests over every scheme do not
// reach: KERPLE's projection and its gradient, and the one-line errors of their keys.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/model_util.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"
#include "positional/scheme_errors.h"

namespace pelab::testing {
namespace {

// One forward and backward of a 2-head kerple model whose stored r1[0] and r2[1] are set:
// its logits and the stored parameters' gradients.
struct KerpleRun {
  std::vector<float> logits, grad_r1, grad_r2;
};

KerpleRun run_kerple(const std::string& kernel, float r1_0, float r2_1,
                     Encoder::AttentionImpl impl) {
  ModelConfig config = tiny_config("kerple");
  config.positional.keys.set("kernel", kernel);
  Encoder model(config, make_scheme, 1);
  randomize_parameters(model, 2);
  Tensor r1 = model.params().get("kerple.r1"), r2 = model.params().get("kerple.r2");
  r1.data()[0] = r1_0;
  r1.data()[1] = 0.7f;  // the other head inside the bounds
  r2.data()[0] = 0.4f;
  r2.data()[1] = r2_1;
  model.set_attention_impl(impl);
  const Encoder::Output out = model.forward(make_batch({9, 6}, 9, 5));
  out.loss.backward();
  return {out.logits.to_vector(), r1.grad().to_vector(), r2.grad().to_vector()};
}

// The forward sees max(r, 0.01) (power: r2 also ≤ 2), so a stored value past a bound gives the
// bound's logits exactly, and its gradient is the one at the bound, not a clamp's 0: an
// optimizer can bring it back. The controls, inside the bounds, change the logits.
TEST(Kerple, ProjectionFeedsTheBoundToTheForwardAndItsGradientBack) {
  for (const Encoder::AttentionImpl impl :
       {Encoder::AttentionImpl::Fused, Encoder::AttentionImpl::Composed}) {
    const std::string how = impl == Encoder::AttentionImpl::Fused ? "fused" : "composed";
    for (const std::string kernel : {"log", "power"}) {
      const KerpleRun bound = run_kerple(kernel, 0.01f, 0.01f, impl);
      const KerpleRun below = run_kerple(kernel, -0.5f, 0.003f, impl);
      EXPECT_EQ(below.logits, bound.logits) << kernel << " " << how;
      EXPECT_EQ(below.grad_r1, bound.grad_r1) << kernel << " " << how;
      EXPECT_EQ(below.grad_r2, bound.grad_r2) << kernel << " " << how;
      EXPECT_NE(below.grad_r1[0], 0.0f) << kernel << " " << how;
      EXPECT_NE(below.grad_r2[1], 0.0f) << kernel << " " << how;
      const KerpleRun inside = run_kerple(kernel, 0.5f, 0.3f, impl);
      EXPECT_GT(max_abs_diff(inside.logits, bound.logits), 1e-2f) << kernel << " " << how;
    }
    // power: r2 is also capped at 2; log takes any r2 ≥ 0.01.
    const KerpleRun at_two = run_kerple("power", 0.5f, 2.0f, impl);
    const KerpleRun above = run_kerple("power", 0.5f, 3.5f, impl);
    EXPECT_EQ(above.logits, at_two.logits) << how;
    EXPECT_EQ(above.grad_r2, at_two.grad_r2) << how;
    EXPECT_NE(above.grad_r2[1], 0.0f) << how;
    EXPECT_GT(max_abs_diff(run_kerple("log", 0.5f, 3.5f, impl).logits,
                           run_kerple("log", 0.5f, 2.0f, impl).logits),
              1e-2f)
        << how;
  }
}

// The fused kernel takes one log (or pow) per distance when a block meets fewer distances than
// pairs, and one per pair when positions lie far apart: both agree with the composed oracle,
// which takes one per pair always.
TEST(Kerple, NearAndFarPositionsMatchTheOracle) {
  for (const std::string kernel : {"log", "power"})
    for (const int32_t gap : {1, 5000}) {  // distances up to 8, or to 40000 > 9·9 pairs
      ModelConfig config = tiny_config("kerple");
      config.positional.keys.set("kernel", kernel);
      Encoder model(config, make_scheme, 1);
      randomize_parameters(model, 2);
      keep_inside_projections(model);
      Batch batch = make_batch({9, 6}, 9, 5);
      for (int32_t& p : batch.positions.values) p *= gap;
      NoGradGuard no_grad;
      model.set_attention_impl(Encoder::AttentionImpl::Fused);
      const std::vector<float> fused = model.forward(batch).logits.to_vector();
      model.set_attention_impl(Encoder::AttentionImpl::Composed);
      const std::vector<float> composed = model.forward(batch).logits.to_vector();
      EXPECT_LT(max_abs_diff(fused, composed), 2e-4f) << kernel << " gap " << gap;
    }
}

// A fresh model stores what the forward uses: the sources' uniform draws, projected.
TEST(Kerple, InitialisationIsTheSourcesDrawProjected) {
  for (const std::string kernel : {"log", "power"}) {
    ModelConfig config = tiny_config("kerple", 64, 16, 1);
    config.positional.keys.set("kernel", kernel);
    const Encoder a(config, make_scheme, 7), b(config, make_scheme, 7), c(config, make_scheme, 8);
    const std::vector<float> r1 = a.params().get("kerple.r1").to_vector(),
                             r2 = a.params().get("kerple.r2").to_vector();
    const float r1_max = kernel == "log" ? 2.0f : 1.0f, r2_max = kernel == "log" ? 1.0f : 2.0f;
    for (size_t h = 0; h < r1.size(); ++h) {
      EXPECT_GE(r1[h], 0.01f);
      EXPECT_LE(r1[h], r1_max);
      EXPECT_GE(r2[h], 0.01f);
      EXPECT_LE(r2[h], r2_max);
    }
    EXPECT_EQ(a.params().get("kerple.r1").to_vector(), b.params().get("kerple.r1").to_vector());
    EXPECT_NE(a.params().get("kerple.r1").to_vector(), c.params().get("kerple.r1").to_vector());
  }
}

TEST(BiasSchemeKeys, EachBadValueIsOneLineNamingTheKey) {
  EXPECT_EQ(key_error("kerple", "kernel", "cubic"),
            "positional.kernel: 'cubic' is not valid (valid: log, power)");
  EXPECT_EQ(key_error("alibi", "bidirectional", "left"),
            "positional.bidirectional: 'left' is not valid (valid: symmetric, deepmind)");
  EXPECT_EQ(key_error("fire", "mlp_width", int64_t{0}),
            "positional.mlp_width: must be in [1, 65536], got 0");
  // A key of one scheme under another is refused by the other's table.
  EXPECT_EQ(
      key_error("alibi", "kernel", "log"),
      "positional.kernel: the 'alibi' scheme does not take this key (it takes: bidirectional)");
  EXPECT_EQ(key_error("kerple", "bidirectional", "deepmind"),
            "positional.bidirectional: the 'kerple' scheme does not take this key (it takes: "
            "kernel)");
  EXPECT_EQ(key_error("sandwich", "threshold", 4.0),
            "positional.threshold: the 'sandwich' scheme does not take this key (it takes: base)");
  EXPECT_EQ(key_error("rotary", "mlp_width", int64_t{8}),
            "positional.mlp_width: the 'rotary' scheme does not take this key (it takes: base, "
            "fraction, scaling.type, scaling.factor, scaling.original_length)");

  ModelConfig fire = tiny_config("fire");
  fire.positional.keys.set("threshold", 0.0);
  EXPECT_EQ(build_error(fire), "positional.threshold: must be > 0, got 0");
  ModelConfig sandwich = tiny_config("sandwich");
  sandwich.positional.keys.set("base", -1.0);
  EXPECT_EQ(build_error(sandwich), "positional.base: must be > 0, got -1");
  ModelConfig odd = tiny_config("sandwich", 12, 4);  // d_h = 3
  EXPECT_EQ(build_error(odd), "sandwich needs an even head width: d_model / heads = 12 / 4 = 3");
  ModelConfig even = tiny_config("sandwich", 12, 3);  // the control: d_h = 4
  EXPECT_EQ(build_error(even), "no error");
}

// On the command line the odd head width is a user error (exit 2) at the key just changed.
TEST(BiasSchemeKeys, SandwichWithAnOddHeadWidthIsAUserError) {
  TempDir dir;
  write_file(dir / "tiny.yaml", tiny_config("tiny", ""));
  const Outcome odd =
      run_pelab({"print-config", dir / "tiny.yaml", "positional.type=sandwich", "model.d_model=6"});
  EXPECT_EQ(user_error_problem(odd, {"model.d_model", "sandwich needs an even head width"}), "");
  const Outcome even =
      run_pelab({"print-config", dir / "tiny.yaml", "positional.type=sandwich", "model.d_model=8"});
  EXPECT_EQ(even.exit_code, 0) << even.err;
}

}  // namespace
}  // namespace pelab::testing
