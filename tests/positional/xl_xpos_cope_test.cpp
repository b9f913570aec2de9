// xl_relative, xpos and cope: the exact properties docs/model.md states for them that the tests
// over every scheme do not reach, each with a control that breaks it, and the one-line errors
// of their keys and of the models they refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn/model_util.h"
#include "ops/gradcheck.h"
#include "pelab/core/error.h"
#include "pelab/core/rng.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"
#include "positional/scheme_errors.h"

namespace pelab::testing {
namespace {

// Every sequence's positions replaced by a sorted draw from [0, 1000) (padding included): no
// longer 0..T-1, nor a shift of it.
Batch with_scattered_positions(Batch batch, uint64_t seed) {
  Generator rng(seed);
  const int64_t B = batch.batch_size(), T = batch.length();
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> p(T);
    for (int32_t& x : p) x = static_cast<int32_t>(rng.uniform_int(0, 999));
    std::sort(p.begin(), p.end());
    std::copy(p.begin(), p.end(), batch.positions.values.begin() + b * T);
  }
  return batch;
}

// CoPE's position is what its gates count: `positions` are never read, so any positions give
// the same logits bit for bit. The controls, which read them, change.
TEST(Cope, IgnoresPositions) {
  const Batch batch = make_batch({9, 6}, 9, 5);
  const Batch scattered = with_scattered_positions(batch, 8);
  for (const std::string scheme : {"cope", "xpos", "xl_relative", "rotary"}) {
    ModelConfig config = tiny_config(scheme);
    config.causal = true;
    config.norm = "post";
    Encoder model(config, make_scheme, 1);
    randomize_parameters(model, 2);
    if (scheme == "cope")
      EXPECT_EQ(logits(model, batch), logits(model, scattered));
    else
      EXPECT_GT(max_abs_diff(logits(model, batch), logits(model, scattered)), kDiffers) << scheme;
  }
}

// The counts are capped at npos − 1: with npos = 1 every count reads e[0], so CoPE adds q·e[0]
// to every logit of a row, which the softmax removes: the model is the same as with e = 0. With
// npos = 2 the counts interpolate between two rows and it is not (the control).
TEST(Cope, OneEmbeddingRowIsNoPositionAtAll) {
  const Batch batch = make_batch({9, 6}, 9, 5);
  for (const int64_t npos : {int64_t{1}, int64_t{2}}) {
    ModelConfig config = tiny_config("cope");
    config.positional.keys.set("max_position", npos);
    Encoder model(config, make_scheme, 1);
    randomize_parameters(model, 2);
    const std::vector<float> with_e = logits(model, batch);
    for (int64_t l = 0; l < config.layers; ++l) {
      Tensor e = model.params().get("layers." + std::to_string(l) + ".attn.cope_emb");
      std::fill_n(e.data(), e.numel(), 0.0f);
    }
    const float diff = max_abs_diff(with_e, logits(model, batch));
    if (npos == 1)
      EXPECT_LT(diff, kSame);
    else
      EXPECT_GT(diff, kDiffers);
  }
}

// q'·k' over every head's columns, each token's q and k scaled by xpos_scales with the centres
// given: [B, T, T].
std::vector<double> factored_scores(const Tensor& q, const Tensor& k, const IntTensor& positions,
                                    const std::vector<int64_t>& q_centres,
                                    const std::vector<int64_t>& k_centres, double scale_base) {
  const int64_t B = q.size(0), T = q.size(1), d = q.size(2);
  const Tensor up = xpos_scales(positions, q_centres, 2, d / 2, scale_base, 1);
  const Tensor down = xpos_scales(positions, k_centres, 2, d / 2, scale_base, -1);
  const Tensor qs = mul(q, up), ks = mul(k, down);
  std::vector<double> s(static_cast<size_t>(B * T * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        for (int64_t c = 0; c < d; ++c)
          s[(b * T + i) * T + j] +=
              static_cast<double>(qs.data()[(b * T + i) * d + c]) * ks.data()[(b * T + j) * d + c];
  return s;
}

double max_relative_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t x = 0; x < a.size(); ++x)
    m = std::max(m, std::fabs(a[x] - b[x]) / std::max(1.0, std::fabs(b[x])));
  return m;
}

// xpos factors q and k with a centre c: ζ^((p_i − c)/B)·ζ^(−(p_j − c)/B) = ζ^((p_i − p_j)/B)
// for any c the sequence's queries and keys share, so the scores do not depend on it. The
// control gives the keys another centre than the queries: every score moves by ζ^(Δc/B).
TEST(Xpos, ScoresDoNotDependOnTheCommonCentre) {
  const Batch batch = with_scattered_positions(make_batch({7, 7}, 7, 3), 4);
  const Tensor q = random_tensor({2, 7, 16}, 5), k = random_tensor({2, 7, 16}, 6);
  const std::vector<int64_t> centres = xpos_centres(batch.positions, batch.key_mask);
  const double B = 64.0;
  const std::vector<double> reference = factored_scores(q, k, batch.positions, centres, centres, B);
  for (const int64_t offset : {int64_t{-300}, int64_t{17}, int64_t{500}}) {
    std::vector<int64_t> moved = centres;
    for (int64_t& c : moved) c += offset;
    EXPECT_LT(max_relative_diff(factored_scores(q, k, batch.positions, moved, moved, B), reference),
              1e-5)
        << offset;
    EXPECT_GT(
        max_relative_diff(factored_scores(q, k, batch.positions, centres, moved, B), reference),
        1e-2)
        << "keys centred apart from queries, offset " << offset;
  }
}

// The centre is the middle of the real positions, rounded down; padding does not move it.
TEST(Xpos, CentreIsTheMiddleOfTheRealPositions) {
  Batch batch = make_batch({5, 2}, 5, 1);
  batch.positions.values = {3, 4, 8, 9, 10, 0, 7, 100, 200, 300};
  EXPECT_EQ(xpos_centres(batch.positions, batch.key_mask), (std::vector<int64_t>{6, 3}));
}

// As B grows ζ^((p_i − p_j)/B) → 1: at B = 1e30 every factor is exactly 1 and xpos is rotary,
// bit for bit (same parameters, same rotation). The control, B = 8, is not.
TEST(Xpos, WithoutDecayIsRotaryBitForBit) {
  const Batch batch = with_scattered_positions(make_batch({9, 6}, 9, 5), 3);
  ModelConfig rotary = tiny_config("rotary");
  rotary.causal = true;
  Encoder reference(rotary, make_scheme, 1);
  randomize_parameters(reference, 2);
  for (const double scale_base : {1e30, 8.0}) {
    ModelConfig config = tiny_config("xpos");
    config.positional.keys.set("scale_base", scale_base);
    Encoder model(config, make_scheme, 1);
    randomize_parameters(model, 2);
    if (scale_base > 1.0e10)
      EXPECT_EQ(logits(model, batch), logits(reference, batch));
    else
      EXPECT_GT(max_abs_diff(logits(model, batch), logits(reference, batch)), kDiffers);
  }
}

// Positions far apart at a small B would take a factor past float range: refused, not inf.
TEST(Xpos, FactorsOutOfFloatRangeAreAnError) {
  ModelConfig config = tiny_config("xpos");
  config.positional.keys.set("scale_base", 1.0);
  const Encoder model(config, make_scheme, 1);
  Batch batch = make_batch({4}, 4, 1);
  batch.positions.values = {0, 1, 2, 400};
  std::string message;
  try {
    logits(model, batch);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message,
            "xpos: position 0 lies 200 from its sequence's centre 200, too far for "
            "positional.scale_base 1 (the factor ζ^((p − c)/B) would leave float range)");
  batch.positions.values = {0, 1, 2, 40};  // the control
  EXPECT_NO_THROW(logits(model, batch));
}

// xl_relative's shift invariance holds at any offset: the fused kernel turns r(p_j) by p_i
// (angle addition) instead of forming r(p_j − p_i), so far-off positions are where rounding
// would show. The control: the same positions not shifted together.
TEST(XlRelative, ShiftInvariantAtLargeOffsets) {
  ModelConfig config = tiny_config("xl_relative");
  config.norm = "post";
  Encoder model(config, make_scheme, 1);
  randomize_parameters(model, 2);
  const Batch batch = with_scattered_positions(make_batch({9, 6}, 9, 5), 7);
  const std::vector<float> y = logits(model, batch);
  for (const int32_t offset : {1000, 100000, 2000000}) {
    Batch shifted = batch;
    for (int32_t& p : shifted.positions.values) p += offset;
    EXPECT_LT(max_abs_diff(y, logits(model, shifted)), kSame) << offset;
    for (int64_t t = 0; t < 9; t += 2) shifted.positions.values[t] += 3;  // not together
    EXPECT_GT(max_abs_diff(y, logits(model, shifted)), kDiffers) << offset;
  }
}

// ---- errors --------------------------------------------------------------------------------

TEST(XlXposCopeKeys, EachBadValueIsOneLineNamingTheKey) {
  EXPECT_EQ(key_error("cope", "max_position", int64_t{0}),
            "positional.max_position: must be in [1, 1048576], got 0");
  EXPECT_EQ(key_error("cope", "scale_base", 8.0),
            "positional.scale_base: the 'cope' scheme does not take this key (it takes: "
            "max_position)");
  EXPECT_EQ(key_error("xpos", "max_position", int64_t{3}),
            "positional.max_position: the 'xpos' scheme does not take this key (it takes: base, "
            "scale_base)");
  EXPECT_EQ(key_error("xl_relative", "scale_base", 8.0),
            "positional.scale_base: the 'xl_relative' scheme does not take this key (it takes: "
            "base)");
  EXPECT_EQ(key_error("sandwich", "scale_base", 8.0),
            "positional.scale_base: the 'sandwich' scheme does not take this key (it takes: base)");

  const auto with = [](const std::string& scheme, const std::string& key, double value) {
    ModelConfig c = tiny_config(scheme);
    c.positional.keys.set(key, value);
    return c;
  };
  EXPECT_EQ(build_error(with("xpos", "scale_base", 0.0)),
            "positional.scale_base: must be > 0, got 0");
  EXPECT_EQ(build_error(with("xpos", "base", -1.0)), "positional.base: must be > 0, got -1");
  EXPECT_EQ(build_error(with("xl_relative", "base", 0.0)), "positional.base: must be > 0, got 0");
  EXPECT_EQ(build_error(with("xpos", "scale_base", 0.5)), "no error");  // the control
}

TEST(XlXposCopeKeys, ModelsTheyCannotTakeAreOneLineNamingTheKey) {
  for (const std::string scheme : {"xpos", "cope"}) {
    ModelConfig bidirectional = tiny_config(scheme);
    bidirectional.causal = false;
    EXPECT_EQ(build_error(bidirectional).rfind("model.causal: " + scheme + " ", 0), 0u)
        << build_error(bidirectional);
    EXPECT_NE(build_error(bidirectional).find("needs model.causal: true, got false"),
              std::string::npos);
    EXPECT_EQ(build_error(tiny_config(scheme)), "no error") << scheme;  // causal: the control
  }
  EXPECT_EQ(build_error(tiny_config("xpos", 12, 4)),  // d_h = 3
            "xpos needs an even head width: d_model / heads = 12 / 4 = 3");
  EXPECT_EQ(build_error(tiny_config("xpos", 12, 3)), "no error");
  EXPECT_EQ(build_error(tiny_config("xl_relative", 7, 1)),
            "xl_relative needs an even d_model (r(δ) pairs sines and cosines over the model "
            "width), got 7");
  EXPECT_EQ(build_error(tiny_config("xl_relative", 12, 4)), "no error");  // odd d_h is fine
}

// On the command line each is a user error (exit 2) at the key it concerns.
TEST(XlXposCopeKeys, OnTheCommandLineEachIsAUserError) {
  TempDir dir;
  write_file(dir / "tiny.yaml", testing::tiny_config("tiny", ""));
  const auto run = [&](const std::vector<std::string>& overrides) {
    std::vector<std::string> args = {"print-config", dir / "tiny.yaml"};
    args.insert(args.end(), overrides.begin(), overrides.end());
    return run_pelab(args);
  };
  for (const std::string scheme : {"xpos", "cope"}) {
    EXPECT_EQ(user_error_problem(run({"positional.type=" + scheme}),
                                 {"model.causal", scheme + " ", "needs model.causal: true"}),
              "");
    const Outcome causal = run({"positional.type=" + scheme, "model.causal=true"});
    EXPECT_EQ(causal.exit_code, 0) << causal.err;
  }
  EXPECT_EQ(
      user_error_problem(run({"positional.type=xpos", "model.causal=true", "model.d_model=6"}),
                         {"model.d_model", "xpos needs an even head width"}),
      "");
  EXPECT_EQ(
      user_error_problem(run({"positional.type=xl_relative", "model.d_model=7", "model.heads=1"}),
                         {"model.d_model", "xl_relative needs an even d_model"}),
      "");
  EXPECT_EQ(user_error_problem(
                run({"positional.type=cope", "model.causal=true", "positional.max_position=0"}),
                {"positional.max_position", "must be in [1, 1048576], got 0"}),
            "");
  EXPECT_EQ(user_error_problem(
                run({"positional.type=xpos", "model.causal=true", "positional.scale_base=-2"}),
                {"positional.scale_base", "must be > 0, got -2"}),
            "");
}

}  // namespace
}  // namespace pelab::testing
