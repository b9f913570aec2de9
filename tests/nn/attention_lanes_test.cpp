// The rows-in-lanes attention kernel (heads of width 8 or 16, without positional terms or with
// terms that read no keys) against its oracles: the composed op and the block kernel, on z
// and every gradient; finite differences; its two vector widths bit for bit; thread counts
// bit for bit. Lengths of 7, 21 and 40 give one group, a partial group and several groups at
// both vector widths (16 and 8 rows); heads of width 16 take two tiles of columns at the
// narrower.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <tuple>
#include <variant>

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

// A scheme the lanes kernel serves with terms: for the case's mask at length 21, positions
// 3, 4, … (they are data, not indices) or, with `spread`, 3, 5, 7, … (Shaw's terms then take
// their path for positions that are not consecutive); its parameters moved off their initial
// values (T5's start near 0).
struct SchemeCase {
  std::string scheme, key;
  KeyValue value;
  bool spread = false;
};
struct SchemeTerms {
  std::string what;
  std::unique_ptr<Encoder> model;
  std::shared_ptr<const AttentionTerms> terms;
};
SchemeTerms scheme_terms(const SchemeCase& s, int64_t head_width, const IntTensor& mask) {
  const int64_t T = mask.shape[1];
  SchemeTerms t;
  const std::string value = std::visit([](const auto& v) { return fmt::format("{}", v); }, s.value);
  t.what = fmt::format("{} {} {} spread {} d_h {}", s.scheme, s.key, value, s.spread, head_width);
  ModelConfig config = tiny_config(s.scheme, kModel, kModel / head_width, 1);
  if (!s.key.empty()) config.positional.keys.set(s.key, s.value);
  t.model = std::make_unique<Encoder>(config, make_scheme, 3);
  Batch batch = make_batch({T, T, T}, T, 4);
  batch.key_mask = mask;
  for (int32_t& position : batch.positions.values) position = (s.spread ? 2 : 1) * position + 3;
  t.terms = t.model->scheme().attention_terms(batch, 0);
  uint64_t seed = 60;
  for (Tensor p : t.terms->parameters()) {
    const std::vector<float> noise = random_tensor(p.shape(), ++seed).to_vector();
    for (int64_t e = 0; e < p.numel(); ++e) p.data()[e] += 0.5f * noise[e];
  }
  return t;
}

// The schemes with terms that read no keys: a logit bias of positions (ALiBi's two variants,
// sandwich, T5, KERPLE's two kernels, FIRE) and Shaw's relative, whose bias reads q and whose
// terms add values (max_distance 4 < 21: clipped and unclipped distances).
const std::vector<SchemeCase> kLanesSchemes{{"alibi", "bidirectional", "symmetric"},
                                            {"alibi", "bidirectional", "deepmind"},
                                            {"sandwich", "", {}},
                                            {"t5", "", {}},
                                            {"kerple", "kernel", "log"},
                                            {"kerple", "kernel", "power"},
                                            {"fire", "", {}},
                                            {"relative", "max_distance", int64_t{4}},
                                            {"relative", "max_distance", int64_t{4}, true}};

// The lanes kernel calls the terms' hooks once per (b, h) with every row: z, dq, dk, dv and
// every parameter's gradient against the composed op with the same terms, at both head and
// vector widths, with dropout. Controls: the lanes kernel ran (its bits are not the block
// kernel's), and with the terms left out its z is far from the oracle's.
TEST(AttentionLanes, SchemesWithTermsMatchTheComposedOp) {
  for (const SchemeCase& scheme : kLanesSchemes)
    for (int64_t head_width : kHeadWidths)
      for (bool causal : {false, true}) {
        const LanesCase c = make_case(21, true, 7);
        const SchemeTerms t = scheme_terms(scheme, head_width, c.mask);
        const std::string what = fmt::format("{} causal {}", t.what, causal);
        ASSERT_TRUE(t.terms && !t.terms->bias_reads_keys()) << what;
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

// At length 300 the forward calls the hooks on two chunks of rows (kTermChunkRows = 256,
// then 44): z and every gradient against the composed op, Shaw's terms (bias and values) and
// T5's; and without gradients, as a long evaluation runs.
TEST(AttentionLanes, SchemesWithTermsOverSeveralChunksOfRows) {
  if (widths().empty()) GTEST_SKIP() << "this CPU runs no lanes kernel";
  for (const SchemeCase& scheme : {kLanesSchemes[3], kLanesSchemes[7]}) {
    const LanesCase c = make_case(300, true, 19);
    const SchemeTerms t = scheme_terms(scheme, 16, c.mask);
    const AttentionOptions o = options(true, 0.1f, 16);
    const TensorList lanes = outputs(c, o, false, t.terms), composed = outputs(c, o, true, t.terms);
    for (size_t i = 0; i < lanes.size(); ++i)
      EXPECT_LE(closeness(lanes[i], composed[i], 1e-4, 1e-5), 1.0) << t.what << " output " << i;
    NoGradGuard no_grad;
    const AttentionOptions eval = options(false, 0.0f, 16);
    EXPECT_LE(closeness(attention(c.q, c.k, c.v, c.mask, t.terms, eval),
                        attention_composed(c.q, c.k, c.v, c.mask, t.terms, eval), 1e-4, 1e-5),
              1.0)
        << t.what;
  }
}

// Padded query rows skipped: the terms' hooks take the computed rows only, and the skipped
// rows' z and gradients are exactly 0 as the block kernel's (Shaw's values would otherwise
// add to them). Against the block kernel on every output, with and without dropout.
TEST(AttentionLanes, SchemesWithTermsSkipPaddedRows) {
  if (widths().empty()) GTEST_SKIP() << "this CPU runs no lanes kernel";
  for (const SchemeCase& scheme : {kLanesSchemes[3], kLanesSchemes[7]})
    for (bool causal : {false, true})
      for (float p : {0.0f, 0.2f}) {
        const LanesCase c = make_case(21, false, 13);
        const SchemeTerms t = scheme_terms(scheme, 16, c.mask);
        AttentionOptions o = options(causal, p, 16);
        o.skip_padded_queries = true;
        const TensorList lanes = outputs(c, o, false, t.terms);
        o.row_lanes = false;
        const TensorList block = outputs(c, o, false, t.terms);
        for (size_t i = 0; i < lanes.size(); ++i)
          EXPECT_LE(closeness(lanes[i], block[i], 1e-4, 1e-5), 1.0)
              << t.what << " causal " << causal << " p " << p << " output " << i;
        const std::vector<float> z = lanes[0].to_vector();  // sequence 2 has one real token
        for (int64_t i = 1; i < 21; ++i)
          for (int64_t c0 = 0; c0 < kModel; ++c0)
            ASSERT_EQ(z[(2 * 21 + i) * kModel + c0], 0.0f) << t.what << " row " << i;
      }
}

// A logit bias that reads q and has no parameters: R[i, j] = q_i · M[:, j] for a fixed
// M [d_h, T]. No scheme is like it; it checks that the kernel passes such a bias's gradient
// on to q (a bias without parameters is skipped in the backward only when it says it reads
// no q). `claims_no_queries` makes it say so wrongly: the control.
class QueryBias : public AttentionTerms {
 public:
  QueryBias(int64_t head_width, int64_t T, bool claims_no_queries)
      : m_(random_tensor({head_width, T}, 99)), claims_no_queries_(claims_no_queries) {}
  bool has_bias() const override { return true; }
  bool bias_reads_queries() const override { return !claims_no_queries_; }
  void add_bias(int64_t, int64_t, int64_t i0, int64_t i1, int64_t T, const float* q, int64_t ldq,
                float* S, int64_t lds) const override {
    const int64_t dh = m_.size(0);
    for (int64_t r = 0; r < i1 - i0; ++r)
      for (int64_t c = 0; c < dh; ++c)
        for (int64_t j = 0; j < T; ++j) S[r * lds + j] += q[r * ldq + c] * m_.data()[c * T + j];
  }
  void bias_backward(int64_t, int64_t, int64_t i0, int64_t i1, int64_t T, const float*, int64_t,
                     const float* dS, int64_t lds, float* dq, int64_t lddq,
                     const GradBuffers&) const override {
    const int64_t dh = m_.size(0);
    for (int64_t r = 0; r < i1 - i0; ++r)
      for (int64_t c = 0; c < dh; ++c)
        for (int64_t j = 0; j < T; ++j) dq[r * lddq + c] += dS[r * lds + j] * m_.data()[c * T + j];
  }
  Tensor composed_bias(const Tensor& q) const override { return matmul(q, m_); }

 private:
  Tensor m_;
  bool claims_no_queries_;
};

TEST(AttentionLanes, ABiasThatReadsQueriesGivesTheirGradient) {
  if (widths().empty()) GTEST_SKIP() << "this CPU runs no lanes kernel";
  const LanesCase c = make_case(21, true, 17);
  const AttentionOptions o = options(true, 0.2f, 8);
  const auto honest = std::make_shared<QueryBias>(8, 21, false);
  const TensorList lanes = outputs(c, o, false, honest), composed = outputs(c, o, true, honest);
  for (size_t i = 0; i < lanes.size(); ++i)
    EXPECT_LE(closeness(lanes[i], composed[i], 1e-4, 1e-5), 1.0) << "output " << i;
  const TensorList wrong = outputs(c, o, false, std::make_shared<QueryBias>(8, 21, true));
  EXPECT_GT(closeness(wrong[1], composed[1], 1e-4, 1e-5), 10.0);  // dq
}

// The parameters' gradients too have the same bits at both vector widths (each hook takes
// every row of a (b, h) in one call at either) and at one or two threads. Control: the block
// kernel's parameter gradients differ.
TEST(AttentionLanes, SchemeGradientsHaveTheSameBitsEverywhere) {
  if (widths().empty()) GTEST_SKIP() << "this CPU runs no lanes kernel";
  const int before = num_threads();
  for (const SchemeCase& scheme : kLanesSchemes) {
    const LanesCase c = make_case(21, true, 9);
    const SchemeTerms t = scheme_terms(scheme, 8, c.mask);
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

// Shaw's terms (a bias that reads q, values) and T5's (a bias of positions): every input's
// gradient and the parameters' against finite differences, through the lanes kernel.
TEST(AttentionLanes, SchemeGradientsMatchFiniteDifferences) {
  for (VectorKernel width : widths())
    for (const SchemeCase& scheme : {kLanesSchemes[3], kLanesSchemes[7], kLanesSchemes[8]}) {
      const LanesCase c = make_case(21, true, 23);
      const SchemeTerms t = scheme_terms(scheme, 8, c.mask);
      AttentionOptions o = options(true, 0.25f, 8);
      o.row_lanes_width = width;
      TensorList inputs{c.q, c.k, c.v};
      for (const Tensor& p : t.terms->parameters()) inputs.push_back(p);
      const GradCheckResult r = gradcheck(
          [&](const TensorList& x) { return attention(x[0], x[1], x[2], c.mask, t.terms, o); },
          inputs, GradCheckOptions{});
      EXPECT_TRUE(r.ok) << describe(width) << " " << t.what << ": " << r.message;
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
