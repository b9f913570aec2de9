// The rows-in-lanes attention kernel (heads of width 8 or 16 without positional terms or with
// a logit bias of positions) against its oracles: the composed op and the block kernel, on z
// and every gradient; finite differences; its two vector widths bit for bit; thread counts
// bit for bit. Lengths of 7, 21 and 40 give one group, a partial group and several groups at
// both vector widths (16 and 8 rows); heads of width 16 take two tiles of columns at the
// narrower.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <tuple>

#include "nn/model_util.h"
#include "ops/gradcheck.h"
#include "pelab/core/parallel.h"
#include "pelab/nn/attention.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

constexpr int64_t kModel = 32;
const std::vector<int64_t> kHeadWidths{8, 16};

struct LanesCase {
  IntTensor mask;
  Tensor q, k, v;
};

// Three sequences of lengths T, T − 5 and 1; with left_pad the real tokens of the last two sit
// at the end. The first has a padding key inside it (key 2), which every row must pass over.
LanesCase make_case(int64_t T, bool left_pad, uint64_t seed) {
  LanesCase c;
  const std::vector<int64_t> lengths{T, std::max<int64_t>(1, T - 5), 1};
  c.mask = IntTensor({3, T});
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const bool real = left_pad && b > 0 ? t >= T - lengths[b] : t < lengths[b];
      c.mask.values[b * T + t] = real && !(b == 0 && t == 2);
    }
  c.q = random_tensor({3, T, kModel}, seed);
  c.k = random_tensor({3, T, kModel}, seed + 1);
  c.v = random_tensor({3, T, kModel}, seed + 2);
  return c;
}

AttentionOptions options(bool causal, float dropout, int64_t head_width = 8) {
  AttentionOptions o;
  o.heads = kModel / head_width;
  o.causal = causal;
  o.dropout = dropout;
  o.dropout_seed = 77;
  o.block_rows = 5;
  return o;
}

// The widths this CPU runs.
std::vector<VectorKernel> widths() {
  std::vector<VectorKernel> out;
  for (VectorKernel w : {VectorKernel::Avx512, VectorKernel::Avx2})
    if (vector_kernel_runs_here(w)) out.push_back(w);
  return out;
}

// z, dq, dk, dv and the terms' parameter gradients under the loss Σ z ⊙ r (r fixed); from
// the composed op when `composed`.
TensorList outputs(const LanesCase& c, const AttentionOptions& o, bool composed = false,
                   const std::shared_ptr<const AttentionTerms>& terms = nullptr) {
  TensorList inputs{c.q, c.k, c.v};
  for (Tensor& x : inputs) {
    x.zero_grad();
    x.set_requires_grad(true);
  }
  if (terms)
    for (Tensor p : terms->parameters()) {
      p.zero_grad();
      inputs.push_back(p);
    }
  Tensor z = composed ? attention_composed(c.q, c.k, c.v, c.mask, terms, o)
                      : attention(c.q, c.k, c.v, c.mask, terms, o);
  sum_all(mul(z, random_tensor(z.shape(), 5))).backward();
  TensorList out{z.detach()};
  for (Tensor& x : inputs) out.push_back(x.grad().defined() ? x.grad() : Tensor::zeros(x.shape()));
  return out;
}

std::vector<float> flat(const TensorList& list) {
  std::vector<float> all;
  for (const Tensor& t : list) {
    const std::vector<float> v = t.to_vector();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TEST(AttentionLanes, MatchesTheComposedOpWithGradients) {
  for (VectorKernel width : widths())
    for (int64_t head_width : kHeadWidths)
      for (int64_t T : {7, 21, 40})
        for (bool causal : {false, true})
          for (bool left_pad : {false, true})
            for (float p : {0.0f, 0.3f}) {
              const LanesCase c = make_case(T, left_pad, 11 + T);
              AttentionOptions o = options(causal, p, head_width);
              o.row_lanes_width = width;
              const TensorList lanes = outputs(c, o), composed = outputs(c, o, true);
              for (size_t i = 0; i < lanes.size(); ++i)
                EXPECT_LE(closeness(lanes[i], composed[i], 1e-4, 1e-5), 1.0)
                    << fmt::format("{} d_h {} T {} causal {} left_pad {} p {} output {}",
                                   describe(width), head_width, T, causal, left_pad, p, i);
            }
}

// The kernel runs (its bits are not the block kernel's) and agrees with the block kernel,
// padded query rows skipped or not, with dropout; skipped rows' z is exactly 0, and without
// dropout (which can drop a one-key row's only key) no other row's is.
TEST(AttentionLanes, MatchesTheBlockKernelAndSkipsPaddedRows) {
  for (int64_t head_width : kHeadWidths)
    for (bool skip : {false, true})
      for (bool causal : {false, true}) {
        const LanesCase c = make_case(21, false, 5);
        AttentionOptions o = options(causal, 0.2f, head_width);
        o.skip_padded_queries = skip;
        const TensorList lanes = outputs(c, o);
        o.row_lanes = false;
        const TensorList block = outputs(c, o);
        for (size_t i = 0; i < lanes.size(); ++i)
          EXPECT_LE(closeness(lanes[i], block[i], 1e-4, 1e-5), 1.0)
              << head_width << skip << causal << i;
        if (widths().empty()) continue;
        EXPECT_NE(lanes[0].to_vector(), block[0].to_vector());  // the lanes kernel ran
        o.row_lanes = true;
        o.dropout = 0.0f;
        const std::vector<float> z = outputs(c, o)[0].to_vector();
        int64_t zero_rows = 0;
        for (int64_t b = 0; b < 3; ++b)
          for (int64_t t = 0; t < 21; ++t) {
            const bool past_last_key = t >= (b == 0 ? 21 : b == 1 ? 16 : 1);
            const float* row = z.data() + (b * 21 + t) * kModel;
            const bool zero = std::all_of(row, row + kModel, [](float x) { return x == 0.0f; });
            EXPECT_EQ(zero, skip && past_last_key) << b << " " << t;
            zero_rows += zero;
          }
        EXPECT_EQ(zero_rows, skip ? 5 + 20 : 0);
      }
}

// Each lane computes its row alone, in key order, with the same fused operations, so the two
// widths give the same bits. The control: the block kernel's bits differ, so the comparison
// sees a change in how the sums are formed.
TEST(AttentionLanes, BothWidthsGiveTheSameBits) {
  if (widths().size() < 2) GTEST_SKIP() << "this CPU runs one width only";
  for (int64_t head_width : kHeadWidths)
    for (int64_t T : {7, 40})
      for (bool causal : {false, true})
        for (bool skip : {false, true}) {
          const LanesCase c = make_case(T, true, 3);
          AttentionOptions o = options(causal, 0.3f, head_width);
          o.skip_padded_queries = skip;
          o.row_lanes_width = VectorKernel::Avx512;
          const std::vector<float> wide = flat(outputs(c, o));
          o.row_lanes_width = VectorKernel::Avx2;
          EXPECT_EQ(wide, flat(outputs(c, o))) << head_width << T << causal << skip;
          o.row_lanes = false;
          EXPECT_NE(wide, flat(outputs(c, o))) << head_width << T << causal << skip;
        }
}

// A scheme whose terms are a logit bias of positions, for the case's mask at length 21,
// positions shifted by 3 (they are data, not indices), its parameters moved off their initial
// values (T5's start near 0).
struct PositionTerms {
  std::string what;
  std::unique_ptr<Encoder> model;
  std::shared_ptr<const AttentionTerms> terms;
};
PositionTerms position_terms(const std::string& scheme, const std::string& key,
                             const std::string& value, int64_t head_width, const IntTensor& mask) {
  PositionTerms t;
  t.what = fmt::format("{} {} d_h {}", scheme, value, head_width);
  ModelConfig config = tiny_config(scheme, kModel, kModel / head_width, 1);
  if (!key.empty()) config.positional.keys.set(key, value);
  t.model = std::make_unique<Encoder>(config, make_scheme, 3);
  Batch batch = make_batch({21, 21, 21}, 21, 4);
  batch.key_mask = mask;
  for (int32_t& position : batch.positions.values) position += 3;
  t.terms = t.model->scheme().attention_terms(batch, 0);
  uint64_t seed = 60;
  for (Tensor p : t.terms->parameters()) {
    const std::vector<float> noise = random_tensor(p.shape(), ++seed).to_vector();
    for (int64_t e = 0; e < p.numel(); ++e) p.data()[e] += 0.5f * noise[e];
  }
  return t;
}

// scheme, key, value: ALiBi's two variants, sandwich, T5, KERPLE's two kernels, FIRE.
const std::vector<std::tuple<std::string, std::string, std::string>> kPositionBiasSchemes{
    {"alibi", "bidirectional", "symmetric"},
    {"alibi", "bidirectional", "deepmind"},
    {"sandwich", "", ""},
    {"t5", "", ""},
    {"kerple", "kernel", "log"},
    {"kerple", "kernel", "power"},
    {"fire", "", ""}};

// The lanes kernel adds the bias a group of rows at a time, and the parameters take their
// gradients from the groups' dS: z, dq, dk, dv and every parameter's gradient against the
// composed op with the same terms, at both head and vector widths. Controls: the lanes kernel
// ran (its bits are not the block kernel's), and with the bias left out its z is far from
// the oracle's.
TEST(AttentionLanes, PositionBiasSchemesMatchTheComposedOp) {
  for (const auto& [scheme, key, value] : kPositionBiasSchemes)
    for (int64_t head_width : kHeadWidths)
      for (bool causal : {false, true}) {
        const LanesCase c = make_case(21, true, 7);
        const PositionTerms t = position_terms(scheme, key, value, head_width, c.mask);
        const std::string what = fmt::format("{} causal {}", t.what, causal);
        ASSERT_TRUE(t.terms && t.terms->position_bias_only()) << what;
        const AttentionOptions o = options(causal, 0.2f, head_width);
        const TensorList composed = outputs(c, o, true, t.terms);
        for (VectorKernel width : widths()) {
          AttentionOptions lanes_o = o;
          lanes_o.row_lanes_width = width;
          const TensorList lanes = outputs(c, lanes_o, false, t.terms);
          for (size_t i = 0; i < lanes.size(); ++i)
            EXPECT_LE(closeness(lanes[i], composed[i], 1e-4, 1e-5), 1.0)
                << what << " " << describe(width) << " output " << i;
        }
        if (widths().empty()) continue;
        AttentionOptions block_o = o;  // the lanes kernel ran: its bits are not the block's
        block_o.row_lanes = false;
        EXPECT_NE(outputs(c, o, false, t.terms)[0].to_vector(),
                  outputs(c, block_o, false, t.terms)[0].to_vector())
            << what;
        EXPECT_GT(closeness(outputs(c, o)[0], composed[0], 1e-4, 1e-5), 10.0) << what;
      }
}

// The parameters' gradients too have the same bits at both vector widths (bias_backward takes
// every row of a (b, h) in one call at either) and at one or two threads. Control: the block
// kernel's parameter gradients differ.
TEST(AttentionLanes, PositionBiasGradientsHaveTheSameBitsEverywhere) {
  if (widths().empty()) GTEST_SKIP() << "this CPU runs no lanes kernel";
  const int before = num_threads();
  for (const auto& [scheme, key, value] : kPositionBiasSchemes) {
    const LanesCase c = make_case(21, true, 9);
    const PositionTerms t = position_terms(scheme, key, value, 8, c.mask);
    AttentionOptions o = options(true, 0.2f, 8);
    set_num_threads(1);
    const TensorList reference = outputs(c, o, false, t.terms);
    const std::vector<float> all = flat(reference);
    set_num_threads(2);
    EXPECT_EQ(all, flat(outputs(c, o, false, t.terms))) << t.what << " two threads";
    if (widths().size() == 2) {
      o.row_lanes_width = VectorKernel::Avx2;
      EXPECT_EQ(all, flat(outputs(c, o, false, t.terms))) << t.what << " AVX2";
    }
    if (reference.size() == 4) continue;  // no parameters (ALiBi, sandwich)
    o.row_lanes = false;
    const TensorList block = outputs(c, o, false, t.terms);
    EXPECT_NE(flat(TensorList(reference.begin() + 4, reference.end())),
              flat(TensorList(block.begin() + 4, block.end())))
        << t.what;
  }
  set_num_threads(before);
}

TEST(AttentionLanes, GradientMatchesFiniteDifferences) {
  for (VectorKernel width : widths())
    for (int64_t head_width : kHeadWidths) {
      const LanesCase c = make_case(9, true, 21);
      AttentionOptions o = options(true, 0.25f, head_width);
      o.row_lanes_width = width;
      const GradCheckResult r = gradcheck(
          [&](const TensorList& x) { return attention(x[0], x[1], x[2], c.mask, nullptr, o); },
          {c.q, c.k, c.v}, GradCheckOptions{});
      EXPECT_TRUE(r.ok) << describe(width) << " d_h " << head_width << ": " << r.message;
    }
}

TEST(AttentionLanes, ResultsDoNotDependOnThreadCount) {
  const LanesCase c = make_case(40, true, 41);
  const AttentionOptions o = options(false, 0.2f);
  const int before = num_threads();
  set_num_threads(1);
  const std::vector<float> one = flat(outputs(c, o));
  set_num_threads(2);
  const std::vector<float> two = flat(outputs(c, o));
  set_num_threads(before);
  EXPECT_EQ(one, two);  // bit for bit
}

// Long evaluation without gradients: many groups, nothing kept for a backward.
TEST(AttentionLanes, LongSequencesWithoutGradientsMatchTheOracle) {
  for (int64_t head_width : kHeadWidths)
    for (bool causal : {false, true}) {
      const LanesCase c = make_case(300, false, 31);
      NoGradGuard no_grad;
      const AttentionOptions o = options(causal, 0.0f, head_width);
      EXPECT_LE(closeness(attention(c.q, c.k, c.v, c.mask, nullptr, o),
                          attention_composed(c.q, c.k, c.v, c.mask, nullptr, o), 1e-4, 1e-5),
                1.0)
          << head_width << causal;
    }
}

}  // namespace
}  // namespace pelab::testing
