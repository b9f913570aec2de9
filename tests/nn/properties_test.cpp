// Exact properties of the encoder and its schemes, checked directly (no training). "Exact" up
// to float32 rounding: a permutation or a shift changes the order of sums, so outputs agree
// to ~1e-6 relative, while a violated property changes them at the 1e-1 level (parameters are
// drawn large on purpose). Each invariance is paired with a scheme that must break it, so the
// checks are shown to be able to fail.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/model_util.h"
#include "pelab/core/error.h"
#include "pelab/positional/functions.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

// ---- none: a set, not a sequence -------------------------------------------------------
// Every scheme but those that act nowhere must see the order (a causal model sees it anyway),
// in a post-LN model: pre-LN's first layer norm erases a table that adds one value to every
// column of a token (index, normalized), as the notes' claim C2 measures.
TEST(Properties, NoneIsPermutationEquivariant) {
  for (const std::string& scheme :
       schemes_where([](const SchemeInfo& info) { return !info.causal_only; })) {
    ModelConfig config = tiny_config(scheme);
    config.norm = "post";
    // Sandwich's cosines at base 10000 barely move within 9 positions: base 10 makes them.
    if (scheme == "sandwich") config.positional.keys.set("base", 10.0);
    Encoder model(config, make_scheme, 1);
    randomize_parameters(model, 2);
    // KERPLE projected to r2 = 0.01 is d^0.01 ≈ 1 for every d > 0, blind to order: its
    // parameters are set where the kernel grows with distance.
    if (scheme == "kerple")
      for (const std::string name : {"kerple.r1", "kerple.r2"})
        for (int64_t h = 0; h < config.heads; ++h) model.params().get(name).data()[h] = 1.0f;
    const int64_t T = 9;
    const Batch batch = make_batch({T, T}, T, 3);
    const std::vector<int64_t> perm = {4, 0, 8, 2, 7, 1, 6, 3, 5};
    Batch permuted = batch;  // tokens permuted, positions left as 0..T-1
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < T; ++t) {
        permuted.tokens.values[b * T + t] = batch.tokens.values[b * T + perm[t]];
        permuted.targets.values[b * T + t] = batch.targets.values[b * T + perm[t]];
      }
    const std::vector<float> y = logits(model, batch), yp = logits(model, permuted);
    const int64_t V = 6;
    std::vector<float> y_then_perm(y.size());
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < V; ++c)
          y_then_perm[(b * T + t) * V + c] = y[(b * T + perm[t]) * V + c];
    if (scheme_info(scheme).acts == SchemeInfo::Acts::Nowhere)
      EXPECT_LT(max_abs_diff(yp, y_then_perm), kSame) << scheme;
    else
      EXPECT_GT(max_abs_diff(yp, y_then_perm), kDiffers) << scheme << " must see the order";
  }
}

// ---- relative schemes: shifting every position together changes nothing ---------------
// Each scheme's SchemeInfo says whether it is shift-invariant; the test holds every scheme to
// what it says, both ways: invariance in both norms, a change in post-LN (pre-LN's first layer
// norm erases a shift that adds one value to every column, as index and normalized do).
TEST(Properties, RelativeSchemesAreShiftInvariant) {
  for (const std::string& scheme : scheme_names())
    for (const std::string norm : {"pre", "post"}) {
      ModelConfig config = tiny_config(scheme);
      config.norm = norm;
      if (scheme == "relative")
        config.positional.keys.set("max_distance", int64_t{3});  // clipping inside T
      if (scheme == "fire")  // L = |ℓ|·0.01 < 1: positions sit past L, where fire is not invariant
        config.positional.keys.set("threshold", 0.01);
      Encoder model(config, make_scheme, 1);
      randomize_parameters(model, 2);
      const Batch batch = make_batch({8, 5}, 8, 4);
      for (int32_t offset : {1, 37, 300}) {
        Batch shifted = batch;
        for (int32_t& p : shifted.positions.values) p += offset;
        const float diff = max_abs_diff(logits(model, batch), logits(model, shifted));
        if (scheme_info(scheme).shift_invariant) {
          EXPECT_LT(diff, kSame) << scheme << " " << norm << " offset " << offset;
        } else if (norm == "post") {
          EXPECT_GT(diff, kDiffers) << scheme << " is not shift-invariant and must change";
        }
      }
    }
}

// fire divides by ψ(max(p_i, L)): while every position stays ≤ L the divisor is ψ(L) and the
// bias depends on p_i − p_j alone; once a position passes L it depends on p_i too.
TEST(Properties, FireIsShiftInvariantOnlyWhilePositionsStayWithinL) {
  ModelConfig config = tiny_config("fire");
  config.norm = "post";
  config.positional.keys.set("threshold", 20.0);
  Encoder model(config, make_scheme, 1);
  randomize_parameters(model, 2);
  for (int64_t l = 0; l < config.layers; ++l) {  // L = 20 and a c far from 0 in every layer
    const std::string p = "layers." + std::to_string(l) + ".attn.fire.";
    model.params().get(p + "l_mult").data()[0] = 1.0f;
    model.params().get(p + "c").data()[0] = 0.5f;
  }
  const Batch batch = make_batch({8, 5}, 8, 4);  // positions 0..7
  auto shifted_by = [&](int32_t offset) {
    Batch shifted = batch;
    for (int32_t& p : shifted.positions.values) p += offset;
    return max_abs_diff(logits(model, batch), logits(model, shifted));
  };
  EXPECT_LT(shifted_by(5), kSame);
  EXPECT_LT(shifted_by(12), kSame) << "the largest position is 19 ≤ L = 20";
  EXPECT_GT(shifted_by(40), kDiffers) << "every position is past L";
  EXPECT_GT(shifted_by(100), kDiffers);
}

// ---- reversal: a bias that depends on |p_j − p_i| alone sees no direction --------------
// Reversing the tokens and mapping p ↦ P − p (no causal mask) reverses the outputs of such a
// scheme; ALiBi's deepmind form, fire, xl_relative and t5 tell left from right and must break it.
TEST(Properties, SymmetricBiasesAreReversalSymmetric) {
  struct Case {
    std::string scheme, key, value;
    bool symmetric;
  };
  const std::vector<Case> cases = {{"alibi", "bidirectional", "symmetric", true},
                                   {"kerple", "kernel", "log", true},
                                   {"kerple", "kernel", "power", true},
                                   {"sandwich", "", "", true},
                                   {"alibi", "bidirectional", "deepmind", false},
                                   {"fire", "", "", false},
                                   {"xl_relative", "", "", false},
                                   {"t5", "", "", false}};
  const int64_t T = 9;
  const std::vector<int32_t> positions = {0, 2, 3, 7, 8, 12, 19, 20, 26};  // not 0..T-1
  const int32_t P = 30;
  for (const Case& c : cases) {
    ModelConfig config = tiny_config(c.scheme, 16, 8);  // 8 heads: ALiBi slopes up to 1/2
    config.norm = "post";
    if (!c.key.empty()) config.positional.keys.set(c.key, c.value);
    Encoder model(config, make_scheme, 1);
    randomize_parameters(model, 2);
    Batch batch = make_batch({T, T}, T, 3);
    for (int64_t b = 0; b < 2; ++b)
      std::copy(positions.begin(), positions.end(), batch.positions.values.begin() + b * T);
    Batch reversed = batch;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t from = b * T + (T - 1 - t);
        reversed.tokens.values[b * T + t] = batch.tokens.values[from];
        reversed.targets.values[b * T + t] = batch.targets.values[from];
        reversed.positions.values[b * T + t] = P - batch.positions.values[from];
      }
    const std::vector<float> y = logits(model, batch), yr = logits(model, reversed);
    const int64_t V = 6;
    std::vector<float> y_reversed(y.size());
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t v = 0; v < V; ++v)
          y_reversed[(b * T + t) * V + v] = y[(b * T + (T - 1 - t)) * V + v];
    const std::string name = c.scheme + " " + c.value;
    if (c.symmetric)
      EXPECT_LT(max_abs_diff(yr, y_reversed), kSame) << name;
    else
      EXPECT_GT(max_abs_diff(yr, y_reversed), kDiffers) << name << " must tell left from right";
  }
}

TEST(Properties, RotaryKeepsNormsAndScoresDependOnlyOnDistance) {
  const int64_t heads = 2, dh = 8, T = 6;
  Generator rng(5);
  Tensor q = Tensor::empty({1, T, heads * dh}), k = Tensor::empty({1, T, heads * dh});
  for (int64_t i = 0; i < q.numel(); ++i) {
    q.data()[i] = rng.normal(0.0f, 1.0f);
    k.data()[i] = rng.normal(0.0f, 1.0f);
  }
  // Every token carries the same q and k vectors, so a score can only depend on positions.
  for (int64_t t = 1; t < T; ++t)
    for (int64_t c = 0; c < heads * dh; ++c) {
      q.data()[t * heads * dh + c] = q.data()[c];
      k.data()[t * heads * dh + c] = k.data()[c];
    }
  IntTensor positions({1, T}, std::vector<int32_t>{0, 3, 10, 11, 250, 1000});
  const Tensor rq = rotary(q, positions, heads, 10000.0), rk = rotary(k, positions, heads, 10000.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t pair = 0; pair < heads * dh / 2; ++pair) {
      const float* a = q.data() + t * heads * dh + 2 * pair;
      const float* b = rq.data() + t * heads * dh + 2 * pair;
      EXPECT_NEAR(std::hypot(a[0], a[1]), std::hypot(b[0], b[1]), 1e-5f);
    }
  auto score = [&](int64_t i, int64_t j) {  // head 0
    double s = 0;
    for (int64_t c = 0; c < dh; ++c)
      s += rq.data()[i * heads * dh + c] * rk.data()[j * heads * dh + c];
    return s;
  };
  // (1, 2) are 7 apart, as are (0, 1)+... use pairs with equal p_j − p_i: (3 → 10) and (10 → 17)
  IntTensor shifted({1, T}, std::vector<int32_t>{7, 10, 17, 18, 257, 1007});  // every p + 7
  const Tensor sq = rotary(q, shifted, heads, 10000.0), sk = rotary(k, shifted, heads, 10000.0);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      double s2 = 0;
      for (int64_t c = 0; c < dh; ++c)
        s2 += sq.data()[i * heads * dh + c] * sk.data()[j * heads * dh + c];
      EXPECT_NEAR(score(i, j), s2, 2e-4) << i << "," << j;
    }
}

TEST(Properties, RelativeUsesExactly2kPlus1RowsAtAnyLength) {
  ModelConfig config = tiny_config("relative");
  config.positional.keys.set("max_distance", int64_t{4});
  Encoder model(config, make_scheme, 1);
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".attn.";
    EXPECT_EQ(model.params().get(p + "rel_k").shape(), Shape({9, 8}));
    EXPECT_EQ(model.params().get(p + "rel_v").shape(), Shape({9, 8}));
  }
  const int64_t count = model.params().count();
  for (int64_t T : {3, 40, 300}) {  // any length runs with the same parameters
    const Batch batch = make_batch({T}, T, 6);
    Encoder::Output out = model.forward(batch);
    out.loss.backward();
    EXPECT_EQ(out.logits.shape(), Shape({1, T, 6}));
    // At T = 300 every one of the 2k+1 rows receives gradient, and there is no other row.
    if (T == 300) {
      const std::vector<float> g = model.params().get("layers.0.attn.rel_k").grad().to_vector();
      for (int64_t row = 0; row < 9; ++row) {
        float norm = 0;
        for (int64_t c = 0; c < 8; ++c) norm += std::fabs(g[row * 8 + c]);
        EXPECT_GT(norm, 0.0f) << "row " << row;
      }
    }
    for (const Tensor& p : model.params().all()) Tensor(p).zero_grad();
  }
  EXPECT_EQ(model.params().count(), count);
}

TEST(Properties, SinusoidalShiftIsALinearMap) {
  // PE(x + Δ) = PE(x)·T(Δ) with T(Δ) block-diagonal: for each pair (sin, cos) at ω_i,
  // [sin(x+Δ)ω, cos(x+Δ)ω] = [sin xω, cos xω]·[[cos Δω, −sin Δω], [sin Δω, cos Δω]].
  const int64_t dim = 32;
  std::vector<int64_t> positions(257);
  std::iota(positions.begin(), positions.end(), 0);
  const Tensor pe = sinusoidal_encoding(positions, dim, 10000.0);
  double worst = 0.0;
  for (int64_t delta : {1, 7, 50}) {
    for (int64_t x = 0; x + delta < 257; ++x)
      for (int64_t i = 0; i < dim / 2; ++i) {
        const double w = std::pow(10000.0, -2.0 * i / dim);
        const double s = pe.at({x, 2 * i}), c = pe.at({x, 2 * i + 1});
        const double s2 = s * std::cos(delta * w) + c * std::sin(delta * w);
        const double c2 = -s * std::sin(delta * w) + c * std::cos(delta * w);
        worst = std::max({worst, std::fabs(s2 - pe.at({x + delta, 2 * i})),
                          std::fabs(c2 - pe.at({x + delta, 2 * i + 1}))});
      }
  }
  EXPECT_LT(worst, 1e-6);  // float32 rounding of the stored table
}

TEST(Properties, LearnedPositionPastMaxLenIsAClearError) {
  ModelConfig config = tiny_config("learned");
  config.positional.keys.set("max_len", int64_t{10});
  Encoder model(config, make_scheme, 1);
  Batch batch = make_batch({4}, 4, 7);
  batch.positions.values[3] = 10;
  try {
    model.forward(batch);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("position 10"), std::string::npos) << m;
    EXPECT_NE(m.find("max_len = 10"), std::string::npos) << m;
  }
}

// ---- padding and causality, for every scheme --------------------------------------------
class EveryScheme : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScheme, PaddingLeavesRealTokensUnchanged) {
  Encoder model(tiny_config(GetParam()), make_scheme, 1);
  randomize_parameters(model, 2);
  const Batch batch = make_batch({7, 4}, 7, 8);
  const Batch wider = make_batch({7, 4}, 12, 8);  // same real tokens, five more pad columns
  Batch padded = wider;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 7; ++t) {
      padded.tokens.values[b * 12 + t] = batch.tokens.values[b * 7 + t];
      padded.targets.values[b * 12 + t] = batch.targets.values[b * 7 + t];
    }
  const std::vector<float> y = logits(model, batch), yp = logits(model, padded);
  float worst = 0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < (b == 0 ? 7 : 4); ++t)
      for (int64_t c = 0; c < 6; ++c)
        worst = std::max(worst, std::fabs(y[(b * 7 + t) * 6 + c] - yp[(b * 12 + t) * 6 + c]));
  EXPECT_LT(worst, kSame);
}

// Training runs the row-wise parts on the real tokens only (Encoder::PaddedRows): the real
// positions' logits, the loss and every gradient are those of computing every row, up to
// rounding; padded slots' logits are 0; a batch without padding takes the same path exactly.
TEST_P(EveryScheme, TrainingSkipsPaddedRowsWithTheSameResults) {
  for (const bool causal : {false, true}) {
    if (!causal && scheme_info(GetParam()).causal_only) continue;  // refused, tested elsewhere
    ModelConfig config = tiny_config(GetParam());
    config.causal = causal;
    Encoder skip(config, make_scheme, 1), every(config, make_scheme, 1);
    randomize_parameters(skip, 2);
    randomize_parameters(every, 2);
    every.set_padded_rows(Encoder::PaddedRows::Compute);
    const std::vector<int64_t> lengths{7, 4, 1};
    const Batch batch = make_batch(lengths, 7, 8);
    const Encoder::Output a = skip.forward(batch, true), b = every.forward(batch, true);
    const std::vector<float> ya = a.logits.to_vector(), yb = b.logits.to_vector();
    float worst = 0, padded = 0;
    for (int64_t s = 0; s < 3 * 7; ++s)
      for (int64_t c = 0; c < 6; ++c) {
        const float d = std::fabs(ya[s * 6 + c] - yb[s * 6 + c]);
        if (batch.key_mask.values[s])
          worst = std::max(worst, d);
        else
          padded = std::max(padded, std::fabs(ya[s * 6 + c]));
      }
    EXPECT_LT(worst, kSame) << "causal " << causal;
    EXPECT_EQ(padded, 0.0f);
    EXPECT_NEAR(a.loss.item(), b.loss.item(), 1e-5);
    a.loss.backward();
    b.loss.backward();
    for (size_t p = 0; p < skip.params().all().size(); ++p) {
      const Tensor ga = skip.params().all()[p].grad();
      const Tensor gb = every.params().all()[p].grad();
      ASSERT_EQ(ga.defined(), gb.defined()) << skip.params().all()[p].name();
      if (!ga.defined()) continue;
      EXPECT_LT(max_abs_diff(ga.to_vector(), gb.to_vector()), kSame)
          << skip.params().all()[p].name() << " causal " << causal;
    }
    // No padding: no rows left out, the same computation.
    const Batch full = make_batch({7, 7}, 7, 9);
    EXPECT_EQ(skip.forward(full, true).logits.to_vector(),
              every.forward(full, true).logits.to_vector());
  }
}

TEST_P(EveryScheme, CausalOutputsIgnoreLaterTokens) {
  ModelConfig config = tiny_config(GetParam());
  config.causal = true;
  Encoder model(config, make_scheme, 1);
  randomize_parameters(model, 2);
  const int64_t T = 8;
  const Batch batch = make_batch({T}, T, 9);
  const int64_t cut = 4;
  Batch changed = batch;
  for (int64_t t = cut + 1; t < T; ++t)
    changed.tokens.values[t] = (batch.tokens.values[t] + 1 + static_cast<int32_t>(t)) % 9;
  const std::vector<float> y = logits(model, batch), yc = logits(model, changed);
  const std::vector<float> head(y.begin(), y.begin() + (cut + 1) * 6),
      head_c(yc.begin(), yc.begin() + (cut + 1) * 6);
  EXPECT_LT(max_abs_diff(head, head_c), kSame);
  EXPECT_GT(max_abs_diff(y, yc), kDiffers) << "later outputs must see the change";
}

// A config check builds the model without drawing its values: the same names, shapes and
// count as the real model, so every construction-time check sees the same parameters.
TEST_P(EveryScheme, UnsetValuesBuildTheSameParameters) {
  const ModelConfig config = tiny_config(GetParam());
  const Encoder drawn(config, make_scheme, 1),
      unset(config, make_scheme, 1, ParameterStore::Values::Unset);
  ASSERT_EQ(drawn.params().all().size(), unset.params().all().size());
  int64_t total = 0;
  for (size_t i = 0; i < drawn.params().all().size(); ++i) {
    const Tensor& a = drawn.params().all()[i];
    const Tensor& b = unset.params().all()[i];
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_TRUE(unset.params().contains(a.name()));
    total += a.numel();
  }
  EXPECT_EQ(drawn.params().count(), total);
  EXPECT_EQ(unset.params().count(), total);
  EXPECT_FALSE(unset.params().contains("no.such.parameter"));
}

INSTANTIATE_TEST_SUITE_P(Schemes, EveryScheme, ::testing::ValuesIn(scheme_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace pelab::testing
