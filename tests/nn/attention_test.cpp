// The fused attention op against its composed oracle, and its gradient by finite
// differences, with every scheme's positional terms: padding on both sides (rows with no
// admissible key), causal or not, attention dropout, several query blocks, long lengths.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "nn/model_util.h"
#include "ops/gradcheck.h"
#include "pelab/backend/gemm.h"
#include "pelab/core/parallel.h"
#include "pelab/nn/attention.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

struct AttentionCase {
  std::unique_ptr<Encoder> model;  // owns the scheme and its parameters
  Batch batch;
  Tensor q, k, v;
  std::shared_ptr<const AttentionTerms> terms;
};

AttentionCase make_setup(const std::string& scheme, int64_t T, bool left_pad, uint64_t seed) {
  AttentionCase s;
  ModelConfig config = tiny_config(scheme, 12, 2, 1);
  if (scheme == "relative") config.positional.keys.set("max_distance", int64_t{2});
  if (scheme == "t5") {
    config.positional.keys.set("num_buckets", int64_t{8});
    config.positional.keys.set("max_distance", int64_t{5});
  }
  if (scheme == "fire") config.positional.keys.set("mlp_width", int64_t{3});  // placed below
  // CoPE's counts of up to T gates: npos = 3 takes some past the cap npos − 1, some not.
  if (scheme == "cope") config.positional.keys.set("max_position", int64_t{3});
  s.model = std::make_unique<Encoder>(config, make_scheme, seed);
  randomize_parameters(*s.model, seed + 1);
  keep_inside_projections(*s.model);
  if (scheme == "fire") {
    // Finite differences average two slopes across a kink: |c| away from 0, and ReLU units
    // whose kinks lie between the values u takes here (c = 0.5, L = 512: u = ±0.073, ±0.125,
    // ±0.165, ±0.198, ±0.227 and 0), at least 0.02 in z from each.
    const std::string p = "layers.0.attn.fire.";
    const auto set = [&](const std::string& name, const std::vector<float>& values) {
      std::copy(values.begin(), values.end(), s.model->params().get(p + name).data());
    };
    set("c", {0.5f});
    set("l_mult", {1.0f});
    set("fc1.weight", {1.0f, -1.0f, 2.0f});  // kinks at u = −0.05, 0.05, 0.175
    set("fc1.bias", {0.05f, 0.05f, -0.35f});
  }
  s.batch = make_batch({T, T - 3, 1}, T, seed + 2);
  if (left_pad) {  // move the real tokens of rows 1 and 2 to the end
    for (int64_t b = 1; b < 3; ++b) {
      std::vector<int32_t> mask(T);
      for (int64_t t = 0; t < T; ++t)
        mask[t] = s.batch.key_mask.values[b * T + (t + T - (b == 1 ? T - 3 : 1)) % T];
      for (int64_t t = 0; t < T; ++t) s.batch.key_mask.values[b * T + t] = mask[t];
    }
  }
  for (int32_t& p : s.batch.positions.values) p += 3;  // positions are data, not indices
  s.q = random_tensor({3, T, 12}, seed + 3);
  s.k = random_tensor({3, T, 12}, seed + 4);
  s.v = random_tensor({3, T, 12}, seed + 5);
  s.terms = s.model->scheme().attention_terms(s.batch, 0);
  return s;
}

// The schemes with attention terms (a logit bias or value terms: hook 3), and none as the
// control without any.
const std::vector<std::string> kSchemes = schemes_where([](const SchemeInfo& info) {
  return info.acts == SchemeInfo::Acts::Logits || info.acts == SchemeInfo::Acts::LogitsAndValues ||
         info.acts == SchemeInfo::Acts::Nowhere;
});

// z and the gradients of q, k, v and the terms' parameters, from the fused op or its composed
// oracle, under the loss Σ z ⊙ r with one fixed random r. Every input must get a gradient (a
// missing one fails here, and compares as zeros).
TensorList output_and_gradients(const AttentionCase& s, const AttentionOptions& o, bool fused) {
  TensorList inputs{s.q, s.k, s.v};
  if (s.terms)
    for (const Tensor& t : s.terms->parameters()) inputs.push_back(t);
  for (Tensor& x : inputs) {
    x.zero_grad();
    if (x.is_leaf()) x.set_requires_grad(true);
  }
  Tensor z = fused ? attention(s.q, s.k, s.v, s.batch.key_mask, s.terms, o)
                   : attention_composed(s.q, s.k, s.v, s.batch.key_mask, s.terms, o);
  sum_all(mul(z, random_tensor(z.shape(), 5))).backward();
  TensorList out{z.detach()};
  for (Tensor& x : inputs) {
    EXPECT_TRUE(x.grad().defined()) << (fused ? "fused: " : "composed: ") << "no gradient";
    out.push_back(x.grad().defined() ? x.grad() : Tensor::zeros(x.shape()));
  }
  return out;
}

// The fused op matches its oracle on z and on every gradient; returns the fused outputs.
TensorList expect_fused_matches_composed(const AttentionCase& s, const AttentionOptions& o,
                                         const std::string& what) {
  const TensorList fused = output_and_gradients(s, o, true);
  const TensorList composed = output_and_gradients(s, o, false);
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_LE(closeness(fused[i], composed[i], 1e-4, 1e-5), 1.0) << what << " output " << i;
  return fused;
}

TEST(Attention, FusedMatchesComposedWithGradients) {
  for (const std::string& scheme : kSchemes)
    for (bool causal : {false, true})
      for (bool left_pad : {false, true})
        for (float p : {0.0f, 0.3f}) {
          AttentionCase s = make_setup(scheme, 7, left_pad, 11);
          AttentionOptions o;
          o.heads = 2;
          o.causal = causal;
          o.dropout = p;
          o.dropout_seed = 99;
          o.block_rows = 3;  // three blocks for T = 7
          const TensorList fused = expect_fused_matches_composed(
              s, o,
              fmt::format("{} causal {} left_pad {} dropout {}", scheme, causal, left_pad, p));
          for (float x : fused[0].to_vector()) ASSERT_TRUE(std::isfinite(x));
        }
}

// fire tabulates f per distance for the rows under its threshold L (one divisor) and computes
// the other rows directly; sequences whose positions spread wide are never tabulated. Every
// mix matches the oracle, gradients included: all rows tabulated (L = 512), some (L = 7 with
// positions 3..11), none (L = 1), and a first sequence spread 40 times wider.
TEST(Attention, FireTabulatedAndDirectRowsMatchTheOracle) {
  for (float L : {512.0f, 7.0f, 1.0f})
    for (bool spread : {false, true}) {
      AttentionCase s = make_setup("fire", 9, false, 17);
      std::fill_n(s.model->params().get("layers.0.attn.fire.l_mult").data(), 1, L / 512.0f);
      if (spread)
        for (int64_t t = 0; t < 9; ++t) s.batch.positions.values[t] *= 40;
      s.terms = s.model->scheme().attention_terms(s.batch, 0);
      AttentionOptions o;
      o.heads = 2;
      o.block_rows = 4;
      expect_fused_matches_composed(s, o, fmt::format("L {} spread {}", L, spread));
    }
}

// xl_relative tabulates ρ(δ) for sequences whose positions span little and takes the direct
// route for the others: a first sequence spread 40 times wider (the direct route beside the
// tabulated one), both match the oracle, gradients included, causal or not.
TEST(Attention, XlRelativeTabulatedAndDirectSequencesMatchTheOracle) {
  for (bool spread : {false, true})
    for (bool causal : {false, true}) {
      AttentionCase s = make_setup("xl_relative", 9, true, 19);
      if (spread)
        for (int64_t t = 0; t < 9; ++t) s.batch.positions.values[t] *= 40;
      s.terms = s.model->scheme().attention_terms(s.batch, 0);
      AttentionOptions o;
      o.heads = 2;
      o.causal = causal;
      o.block_rows = 4;
      expect_fused_matches_composed(s, o, fmt::format("spread {} causal {}", spread, causal));
    }
}

// Training drops the padded rows' z: with skip_padded_queries the rows from the last real key
// on are 0, every other row and every gradient (the padded rows' dz being 0) as without it.
// Terms whose bias reads the keys' scores keep every row and key.
TEST(Attention, SkippingPaddedQueriesChangesOnlyThoseRows) {
  for (const std::string& scheme : kSchemes)
    for (bool causal : {false, true}) {
      AttentionCase s = make_setup(scheme, 7, false, 13);  // real lengths 7, 4, 1
      const IntTensor& mask = s.batch.key_mask;
      Tensor weight = random_tensor(s.q.shape(), 6);  // dz, 0 at the padded rows
      for (int64_t slot = 0; slot < mask.shape[0] * mask.shape[1]; ++slot)
        if (!mask.values[slot]) std::fill_n(weight.data() + slot * 12, 12, 0.0f);
      TensorList inputs{s.q, s.k, s.v};
      if (s.terms)
        for (const Tensor& t : s.terms->parameters()) inputs.push_back(t);
      auto run = [&](bool skip) {
        AttentionOptions o;
        o.heads = 2;
        o.causal = causal;
        o.dropout = 0.3f;
        o.dropout_seed = 5;
        o.block_rows = 3;
        o.skip_padded_queries = skip;
        for (Tensor& x : inputs) {
          x.zero_grad();
          if (x.is_leaf()) x.set_requires_grad(true);
        }
        Tensor z = attention(s.q, s.k, s.v, mask, s.terms, o);
        sum_all(mul(z, weight)).backward();
        TensorList out{z.detach()};
        for (Tensor& x : inputs)
          out.push_back(x.grad().defined() ? x.grad() : Tensor::zeros(x.shape()));
        return out;
      };
      const TensorList skipped = run(true), full = run(false);
      const std::vector<float> z_skip = skipped[0].to_vector(), z_full = full[0].to_vector();
      if (s.terms && s.terms->needs_every_key()) {  // CoPE's gates count whole rows: kept
        EXPECT_EQ(z_skip, z_full) << scheme;
        continue;
      }
      int64_t zero_rows = 0;
      for (int64_t slot = 0; slot < mask.shape[0] * mask.shape[1]; ++slot) {
        const bool padded = !mask.values[slot];
        zero_rows += padded;
        for (int64_t c = 0; c < 12; ++c) {
          const float got = z_skip[slot * 12 + c], want = z_full[slot * 12 + c];
          if (padded)
            ASSERT_EQ(got, 0.0f) << scheme << " slot " << slot;
          else
            ASSERT_NEAR(got, want, 1e-5f * (1.0f + std::abs(want))) << scheme << " slot " << slot;
        }
      }
      EXPECT_EQ(zero_rows, 3 + 6);
      for (size_t i = 1; i < skipped.size(); ++i)
        EXPECT_LE(closeness(skipped[i], full[i], 1e-5, 1e-6), 1.0) << scheme << " input " << i;
      // The control: without skipping, the padded rows' z is not 0.
      double padded_sum = 0.0;
      for (int64_t slot = 0; slot < mask.shape[0] * mask.shape[1]; ++slot)
        if (!mask.values[slot]) padded_sum += std::abs(z_full[slot * 12]);
      EXPECT_GT(padded_sum, 0.0) << scheme;
    }
}

TEST(Attention, GradientMatchesFiniteDifferences) {
  for (const std::string& scheme : kSchemes) {
    AttentionCase s = make_setup(scheme, 6, true, 21);
    AttentionOptions o;
    o.heads = 2;
    o.causal = true;
    o.dropout = 0.25f;
    o.dropout_seed = 7;
    o.block_rows = 4;
    TensorList inputs{s.q, s.k, s.v};
    if (s.terms)
      for (const Tensor& t : s.terms->parameters()) inputs.push_back(t);
    GradCheckOptions options;
    // fire's ReLU units have kinks where finite differences average two slopes: a smaller
    // step (still far above float32's rounding of these O(1) outputs) keeps clear of them.
    if (scheme == "fire") options.epsilon = 1e-3;
    const GradCheckResult r = gradcheck(
        [&](const TensorList& x) {
          return attention(x[0], x[1], x[2], s.batch.key_mask, s.terms, o);
        },
        inputs, options);
    EXPECT_TRUE(r.ok) << scheme << ": " << r.message;
  }
}

TEST(Attention, LongSequencesInBlocksMatchTheOracle) {
  // Without gradients the fused op holds one block of scores per thread, never [T, T].
  for (const std::string& scheme : kSchemes) {
    AttentionCase s = make_setup(scheme, 300, false, 31);
    NoGradGuard no_grad;
    AttentionOptions o;
    o.heads = 2;
    o.block_rows = 64;
    const Tensor fused = attention(s.q, s.k, s.v, s.batch.key_mask, s.terms, o);
    const Tensor composed = attention_composed(s.q, s.k, s.v, s.batch.key_mask, s.terms, o);
    EXPECT_LE(closeness(fused, composed, 1e-4, 1e-5), 1.0) << scheme;
  }
}

// Narrow heads' per-head products go to the small GEMM directly, which adds the products in
// the packed kernel's order: under `packed` routing the direct and the routed products give
// z and every gradient bit for bit, for every scheme with terms, causal or not, with dropout,
// over blocks and (T = 300) over reductions longer than one block. The controls: routed
// through the reference kernel, which adds without fused multiply-adds, the bits differ, so
// the comparison can see a change in how the sums are formed; and under auto the direct and
// the routed products differ, so the direct path is taken.
TEST(Attention, DirectHeadProductsGiveThePackedKernelsBits) {
  const GemmBackend saved = gemm_backend();
  const auto run = [](const AttentionCase& s, AttentionOptions o, bool direct) {
    o.direct_head_products = direct;
    return output_and_gradients(s, o, true);
  };
  for (const std::string& scheme : kSchemes)
    for (int64_t T : {7, 300}) {
      AttentionCase s = make_setup(scheme, T, true, 13);
      AttentionOptions o;
      o.heads = 2;  // d_h = 6
      o.causal = T == 7;
      o.dropout = 0.2f;
      o.dropout_seed = 5;
      o.block_rows = T == 7 ? 3 : 64;
      set_gemm_backend(GemmBackend::Packed);
      const TensorList direct = run(s, o, true), routed = run(s, o, false);
      for (size_t i = 0; i < direct.size(); ++i)
        EXPECT_EQ(direct[i].to_vector(), routed[i].to_vector()) << scheme << " T " << T << " " << i;
      if (scheme == "none" && T == 7) {
        set_gemm_backend(GemmBackend::Reference);
        EXPECT_NE(run(s, o, false)[1].to_vector(), direct[1].to_vector());
      }
      if (scheme == "none" && T == 300) {     // the direct path is taken: under auto the routed
        set_gemm_backend(GemmBackend::Auto);  // 64 × 300 × 6 products go to oneDNN instead
        EXPECT_NE(run(s, o, true)[0].to_vector(), run(s, o, false)[0].to_vector());
      }
    }
  set_gemm_backend(saved);
}

TEST(Attention, ResultsDoNotDependOnThreadCount) {
  AttentionCase s = make_setup("relative", 9, true, 41);
  AttentionOptions o;
  o.heads = 2;
  o.dropout = 0.2f;
  auto run = [&](int threads) {
    set_num_threads(threads);
    TensorList inputs{s.q, s.k, s.v, s.terms->parameters()[0], s.terms->parameters()[1]};
    for (Tensor& x : inputs) {
      x.zero_grad();
      x.set_requires_grad(true);
    }
    Tensor z = attention(s.q, s.k, s.v, s.batch.key_mask, s.terms, o);
    sum_all(mul(z, random_tensor(z.shape(), 5))).backward();
    std::vector<float> all = z.to_vector();
    for (Tensor& x : inputs) {
      const std::vector<float> g = x.grad().to_vector();
      all.insert(all.end(), g.begin(), g.end());
    }
    return all;
  };
  const int before = num_threads();
  const std::vector<float> one = run(1), two = run(2);
  set_num_threads(before);
  EXPECT_EQ(one, two);  // bit for bit
}

}  // namespace
}  // namespace pelab::testing
