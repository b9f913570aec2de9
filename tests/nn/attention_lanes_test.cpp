// The rows-in-lanes attention kernel (heads of width 8 or 16 without positional terms)
// against its oracles: the composed op and the block kernel, on z and every gradient; finite
// differences; its two vector widths bit for bit; thread counts bit for bit. Lengths of 7, 21
// and 40 give one group, a partial group and several groups at both vector widths (16 and 8
// rows); heads of width 16 take two tiles of columns at the narrower.
#include <fmt/format.h>
#include <gtest/gtest.h>

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

// z, dq, dk, dv under the loss Σ z ⊙ r (r fixed); from the composed op when `composed`.
TensorList outputs(const LanesCase& c, const AttentionOptions& o, bool composed = false,
                   const std::shared_ptr<const AttentionTerms>& terms = nullptr) {
  TensorList inputs{c.q, c.k, c.v};
  for (Tensor& x : inputs) {
    x.zero_grad();
    x.set_requires_grad(true);
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

// ALiBi's and sandwich's terms are a plain logit bias, which the lanes kernel adds a group of
// rows at a time: both ALiBi variants and sandwich against the composed op with the same
// terms, positions shifted (they are data, not indices), at both head and vector widths; the
// controls: the lanes kernel ran (its bits are not the block kernel's), and with the bias
// left out its z is far from the oracle's.
TEST(AttentionLanes, PlainBiasSchemesMatchTheComposedOp) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"alibi", "symmetric"}, {"alibi", "deepmind"}, {"sandwich", ""}};
  for (const auto& [scheme, variant] : cases)
    for (int64_t head_width : kHeadWidths)
      for (bool causal : {false, true}) {
        const std::string what =
            fmt::format("{} {} d_h {} causal {}", scheme, variant, head_width, causal);
        const LanesCase c = make_case(21, true, 7);
        ModelConfig config = tiny_config(scheme, kModel, kModel / head_width, 1);
        if (!variant.empty()) config.positional.keys.set("bidirectional", variant);
        const Encoder model(config, make_scheme, 3);
        Batch batch = make_batch({21, 21, 21}, 21, 4);
        batch.key_mask = c.mask;
        for (int32_t& position : batch.positions.values) position += 3;
        const auto terms = model.scheme().attention_terms(batch, 0);
        ASSERT_TRUE(terms && terms->lanes_bias_only()) << what;
        const AttentionOptions o = options(causal, 0.2f, head_width);
        const TensorList composed = outputs(c, o, true, terms);
        for (VectorKernel width : widths()) {
          AttentionOptions lanes_o = o;
          lanes_o.row_lanes_width = width;
          const TensorList lanes = outputs(c, lanes_o, false, terms);
          for (size_t i = 0; i < lanes.size(); ++i)
            EXPECT_LE(closeness(lanes[i], composed[i], 1e-4, 1e-5), 1.0)
                << what << " " << describe(width) << " output " << i;
        }
        if (widths().empty()) continue;
        AttentionOptions block_o = o;  // the lanes kernel ran: its bits are not the block's
        block_o.row_lanes = false;
        EXPECT_NE(outputs(c, o, false, terms)[0].to_vector(),
                  outputs(c, block_o, false, terms)[0].to_vector())
            << what;
        EXPECT_GT(closeness(outputs(c, o)[0], composed[0], 1e-4, 1e-5), 10.0) << what;
      }
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
