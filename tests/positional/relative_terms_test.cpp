// Shaw's relative terms, hook by hook, against their definition written out here: for each
// query row i and key j in order, c = clip(p_j − p_i, −k, k) + k, then
//   add_bias:        S[i, j] += P[i, c]            (P = q·wKᵀ/√d_h, the same product)
//   add_values:      W[i, c] += α[i, j];  z += W·wV
//   bias_backward:   dP[i, c] += dS[i, j];  dq += dP·wK/√d_h;  dwK += dPᵀ·q/√d_h
//   values_backward: W as above, dwV += Wᵀ·dz;  dα[i, j] += (dz·wVᵀ)[i, c]
// compared bit for bit: the kernel's fast paths (consecutive positions; positions spread
// out, as randomized ones are) must add the same terms in the same order as the definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "nn/model_util.h"
#include "pelab/backend/gemm.h"
#include "pelab/nn/attention.h"
#include "pelab/positional/scheme.h"

namespace pelab::testing {
namespace {

constexpr int64_t kK = 3, kRows = 2 * kK + 1, kDh = 4, kHeads = 2, kD = kDh * kHeads;

// Normal values; with `special`, a quarter of them +0 or −0 and one +inf, as α and dS have
// (zeros at masked keys; a signed zero must keep its sign through the sums).
std::vector<float> random_values(int64_t n, uint64_t seed, bool special = false) {
  Generator rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    const int64_t kind = special ? rng.uniform_int(0, 7) : 7;
    x = kind == 0 ? 0.0f : kind == 1 ? -0.0f : rng.normal(0.0f, 1.0f);
  }
  if (special) v[static_cast<size_t>(n / 2)] = INFINITY;
  return v;
}

// The position layouts the kernel meets: consecutive (shifted), randomized (sorted, far
// apart, padding numbered 0, 1, ... after the real tokens), and anything else (repeats,
// descending runs, negatives, distances within ±k among far ones).
std::vector<int32_t> layout(const std::string& kind, int64_t T, uint64_t seed) {
  std::vector<int32_t> p(static_cast<size_t>(T));
  Generator rng(seed);
  if (kind == "consecutive") {
    for (int64_t t = 0; t < T; ++t) p[t] = static_cast<int32_t>(t + 5);
  } else if (kind == "randomized") {
    const int64_t n = T - 4;  // 4 padding keys
    int32_t at = 0;
    for (int64_t t = 0; t < n; ++t) p[t] = at += static_cast<int32_t>(rng.uniform_int(1, 9));
    for (int64_t t = n; t < T; ++t) p[t] = static_cast<int32_t>(t);
  } else {
    for (int32_t& x : p) x = static_cast<int32_t>(rng.uniform_int(-6, 6));
  }
  return p;
}

struct Shaw {
  std::unique_ptr<Encoder> model;  // owns the scheme and its tables
  std::shared_ptr<const AttentionTerms> terms;
  const float *wk = nullptr, *wv = nullptr;
};

// A batch of two rows: `other` positions in row 0, `positions` in row 1 (the one the hooks
// are called for), so that a row's lookups cannot come from the wrong row.
Shaw make_shaw(const std::vector<int32_t>& other, const std::vector<int32_t>& positions,
               int64_t T) {
  Shaw s;
  ModelConfig config = tiny_config("relative", kD, kHeads, 1);
  config.positional.keys.set("max_distance", kK);
  s.model = std::make_unique<Encoder>(config, make_scheme, 3);
  randomize_parameters(*s.model, 4);
  Batch batch = make_batch({T, T}, T, 5);
  batch.positions.values = other;
  batch.positions.values.insert(batch.positions.values.end(), positions.begin(), positions.end());
  s.terms = s.model->scheme().attention_terms(batch, 0);
  s.wk = s.terms->parameters()[0].data();
  s.wv = s.terms->parameters()[1].data();
  return s;
}

int64_t bucket(const std::vector<int32_t>& p, int64_t i, int64_t j) {
  return std::clamp<int64_t>(int64_t{p[j]} - p[i], -kK, kK) + kK;
}

// out[r, c(i0 + r, j)] += in[r, j] (row stride ld), key by key: the definition.
void scatter(const std::vector<int32_t>& p, int64_t i0, int64_t n, int64_t T, const float* in,
             int64_t ld, float* out) {
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < T; ++j) out[r * kRows + bucket(p, i0 + r, j)] += in[r * ld + j];
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << what;
}

TEST(RelativeTerms, EveryHookAddsInTheDefinitionsOrderBitForBit) {
  for (const std::string kind : {"consecutive", "randomized", "arbitrary"})
    for (const int64_t T : {6, 37}) {
      const std::vector<int32_t> p = layout(kind, T, 7 + T);
      const Shaw s =
          make_shaw(layout(kind == "consecutive" ? "arbitrary" : "consecutive", T, 1), p, T);
      const float scale = 1.0f / std::sqrt(static_cast<float>(kDh));
      const int64_t b = 1, i0 = T / 3, i1 = T, n = i1 - i0;  // one block of query rows
      const int64_t ld = T + 3;  // rows of S, α, dS and dα: strided, with 3 columns to spare
      const std::string what = kind + ", T = " + std::to_string(T);
      const std::vector<float> q = random_values(n * kD, 11), dz = random_values(n * kD, 12);
      const std::vector<float> a = random_values(n * ld, 13, true);  // α or dS
      {                                                              // add_bias
        std::vector<float> S = random_values(n * ld, 14), want = S, P(n * kRows);
        s.terms->add_bias(b, 1, i0, i1, T, q.data(), kD, S.data(), ld);
        gemm(false, true, n, kRows, kDh, scale, q.data(), kD, s.wk, kDh, 0.0f, P.data(), kRows);
        for (int64_t r = 0; r < n; ++r)
          for (int64_t j = 0; j < T; ++j) want[r * ld + j] += P[r * kRows + bucket(p, i0 + r, j)];
        expect_same_bits(S, want, "add_bias, " + what);
      }
      {  // add_values
        std::vector<float> z = random_values(n * kD, 15), want = z, W(n * kRows, 0.0f);
        s.terms->add_values(b, 1, i0, i1, T, a.data(), ld, z.data(), kD);
        scatter(p, i0, n, T, a.data(), ld, W.data());
        gemm(false, false, n, kDh, kRows, 1.0f, W.data(), kRows, s.wv, kDh, 1.0f, want.data(), kD);
        expect_same_bits(z, want, "add_values, " + what);
      }
      {  // bias_backward
        std::vector<float> dq = random_values(n * kD, 16), want_dq = dq;
        std::vector<float> dwk(kRows * kDh, 0.0f), want_dwk = dwk, dP(n * kRows, 0.0f);
        s.terms->bias_backward(b, 1, i0, i1, T, q.data(), kD, a.data(), ld, dq.data(), kD,
                               {dwk.data(), nullptr});
        scatter(p, i0, n, T, a.data(), ld, dP.data());
        gemm(false, false, n, kDh, kRows, scale, dP.data(), kRows, s.wk, kDh, 1.0f, want_dq.data(),
             kD);
        gemm(true, false, kRows, kDh, n, scale, dP.data(), kRows, q.data(), kD, 1.0f,
             want_dwk.data(), kDh);
        expect_same_bits(dq, want_dq, "bias_backward dq, " + what);
        expect_same_bits(dwk, want_dwk, "bias_backward dwK, " + what);
      }
      {  // values_backward
        std::vector<float> da = random_values(n * ld, 17), want_da = da;
        std::vector<float> dwv(kRows * kDh, 0.0f), want_dwv = dwv, W(n * kRows, 0.0f),
                                                   dW(n * kRows);
        s.terms->values_backward(b, 1, i0, i1, T, a.data(), ld, dz.data(), kD, da.data(), ld,
                                 {nullptr, dwv.data()});
        scatter(p, i0, n, T, a.data(), ld, W.data());
        gemm(true, false, kRows, kDh, n, 1.0f, W.data(), kRows, dz.data(), kD, 1.0f,
             want_dwv.data(), kDh);
        gemm(false, true, n, kRows, kDh, 1.0f, dz.data(), kD, s.wv, kDh, 0.0f, dW.data(), kRows);
        for (int64_t r = 0; r < n; ++r)
          for (int64_t j = 0; j < T; ++j)
            want_da[r * ld + j] += dW[r * kRows + bucket(p, i0 + r, j)];
        expect_same_bits(dwv, want_dwv, "values_backward dwV, " + what);
        expect_same_bits(da, want_da, "values_backward dα, " + what);
      }
    }
}

}  // namespace
}  // namespace pelab::testing
