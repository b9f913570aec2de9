// Fused multi-head attention with positional terms; see include/pelab/nn/attention.h. This
// file's block kernel serves every call but those of heads of width 8 or 16 with no terms or
// a logit bias of positions (ALiBi, sandwich, T5, KERPLE, FIRE), which the rows-in-lanes
// kernel takes (attention_lanes.h).
//
// Forward, per (b, h) and block of query rows:
//   S  = scale · q_blk k_hᵀ (+ R via terms)     GEMM [rows, T]
//   α  = masked softmax of S (all-masked row → 0)
//   α' = α ⊙ keep / (1 − p)                     dropout mask drawn from (seed, index)
//   z  = α' v_h (+ Σ α' U via terms)            GEMM [rows, d_h]
// Backward, given dz:
//   dv_h += α'ᵀ dz_blk,  dα' = dz_blk v_hᵀ (+ dz·Uᵀ),  dα = dα' ⊙ keep / (1 − p)
//   dS = α ⊙ (dα − Σ_j α dα),  dq_blk = scale · dS k_h (+ R's part),  dk_h += scale · dSᵀ q_blk
// α (before dropout) and dropout's keep decisions (as bits) are kept for backward only when a
// gradient is needed.
//
// Padding at the end of a sequence costs nothing: keys from the last real one + 1 on (and,
// when causal, keys after the block's last row) get α = 0 without being scored, so the GEMMs,
// the exponentials and the dropout masks run over the first `kc` keys only. The positional
// hooks still see rows of T columns (zeros past kc).
#include "pelab/nn/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "nn/attention_lanes.h"
#include "ops/op_util.h"
#include "pelab/backend/gemm.h"
#include "pelab/backend/packed_gemm.h"
#include "pelab/backend/small_gemm.h"
#include "pelab/core/error.h"
#include "pelab/core/fast_math.h"
#include "pelab/core/parallel.h"
#include "pelab/core/rng.h"

namespace pelab {

Tensor AttentionTerms::composed_bias(const Tensor&) const {
  throw Error("internal error: these attention terms have no composed bias");
}
Tensor AttentionTerms::composed_bias_with_keys(const Tensor&, const Tensor&, const Tensor&) const {
  throw Error("internal error: these attention terms have no composed bias with keys");
}
Tensor AttentionTerms::composed_values(const Tensor&) const {
  throw Error("internal error: these attention terms have no composed values");
}

namespace {

struct Dims {
  int64_t B, T, d, H, dh;
  float scale;
};

Dims check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const IntTensor& key_mask,
                  const AttentionOptions& o) {
  PELAB_CHECK(q.ndim() == 3 && q.shape() == k.shape() && q.shape() == v.shape(),
              "attention: q, k, v must share one [B, T, d] shape, got {}, {}, {}",
              to_string(q.shape()), to_string(k.shape()), to_string(v.shape()));
  Dims dims{q.size(0), q.size(1), q.size(2), o.heads, 0, 0.0f};
  PELAB_CHECK(o.heads >= 1 && dims.d % o.heads == 0, "attention: {} heads do not divide d = {}",
              o.heads, dims.d);
  PELAB_CHECK(key_mask.shape == Shape({dims.B, dims.T}),
              "attention: key_mask {} does not match q {}", to_string(key_mask.shape),
              to_string(q.shape()));
  PELAB_CHECK(o.dropout >= 0.0f && o.dropout < 1.0f, "attention dropout {} is not in [0, 1)",
              o.dropout);
  dims.dh = dims.d / o.heads;
  dims.scale = 1.0f / std::sqrt(static_cast<float>(dims.dh));
  return dims;
}

// The dropout counter of α[b, h, i, 0]: α's row (b, h, i) starts a span of its own, as for
// dropout() on α.
inline uint64_t alpha_row_counter(const Dims& n, int64_t b, int64_t h, int64_t i) {
  return static_cast<uint64_t>((b * n.H + h) * n.T + i) << 32;
}

constexpr float kNone = -std::numeric_limits<float>::infinity();

// max over j < n of row[j] where mask[j] is set (−inf where none is; NaNs are passed over).
// In sixteen lanes of GCC's vector types, so that it compiles to whole-register compares and
// blends for the machine (a float maximum does not vectorise as a plain loop: the compiler
// must keep its order for NaN and −0). Lane by lane it is the scalar `v > m ? v : m`; the
// order the lanes are combined in can only choose between −0 and +0 for a maximum of zero,
// and the softmax below gives the same weights for either (x − ±0 is x, exp(±0) is 1).
inline float masked_row_max(const float* row, const int32_t* mask, int64_t n) {
  constexpr int64_t kLanes = 16;
  using Floats = float __attribute__((vector_size(4 * kLanes)));
  using Ints = int32_t __attribute__((vector_size(4 * kLanes)));
  const Floats none = Floats{} + kNone;
  Floats lane_max = none;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Floats v;
    Ints m;
    std::memcpy(&v, row + j, sizeof v);
    std::memcpy(&m, mask + j, sizeof m);
    v = m != 0 ? v : none;
    lane_max = v > lane_max ? v : lane_max;
  }
  float max = kNone;
  for (; j < n; ++j) {
    const float v = mask[j] ? row[j] : kNone;
    max = v > max ? v : max;
  }
  for (int64_t l = 0; l < kLanes; ++l) max = lane_max[l] > max ? lane_max[l] : max;
  return max;
}

// Turns the score rows [i0, i1) of (b, h) into attention weights in place: masked softmax
// over the first kc keys; α = 0 for the other keys up to `width` (kc, or T where positional
// hooks read whole rows). Keys from kc on are past the last real key, or causal.
void masked_softmax_rows(const Dims& n, int64_t i0, int64_t i1, int64_t kc, const int32_t* mask,
                         bool causal, int64_t width, float* S) {
  for (int64_t i = i0; i < i1; ++i) {
    float* row = S + (i - i0) * n.T;
    const int64_t end = causal ? std::min(i + 1, kc) : kc;  // keys j ≤ i when causal
    std::fill(row + end, row + width, 0.0f);
    const float max = masked_row_max(row, mask, end);
    if (max == kNone) {  // no admissible key: α = 0
      std::fill_n(row, end, 0.0f);
      continue;
    }
    for (int64_t j = 0; j < end; ++j) row[j] = mask[j] ? fast_exp(row[j] - max) : 0.0f;
    const double sum = detail::lane_sum(end, [&](int64_t j) { return double{row[j]}; });
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < end; ++j) row[j] *= inv;
  }
}

// The keys a block of query rows [i0, i1) of sequence b attends to: [0, kc).
struct KeyRange {
  int64_t real_end;  // 1 + the last real key of the sequence (0: none)
  int64_t keys(bool causal, int64_t i1) const { return causal ? std::min(real_end, i1) : real_end; }
  // Query rows processed: all, or (skip_padded_queries) those before real_end.
  int64_t rows_end(const AttentionOptions& o, int64_t T) const {
    return o.skip_padded_queries ? real_end : T;
  }
};
// Terms whose bias reads whole rows of scores (CoPE's gates) keep every key and every row,
// padding included, as the composed definition does.
KeyRange key_range(const int32_t* mask, int64_t T, const AttentionTerms* terms) {
  if (terms && terms->needs_every_key()) return {T};
  int64_t end = T;
  while (end > 0 && !mask[end - 1]) --end;
  return {end};
}

// Words of keep bits per row of α: bit j % 32 of word j / 32 for key j.
inline int64_t keep_words(const Dims& n) {
  return (n.T + 31) / 32;
}

// dst = src ⊙ keep / (1 − p) for the rows [i0, i1) of (b, h), keys [0, kc); with `keep_bits`
// (the rows' words, keep_words apart), the keep decisions too.
void apply_dropout(const Dims& n, int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t kc, float p,
                   uint64_t seed, const float* src, float* dst, uint32_t* keep_bits) {
  const float keep_scale = 1.0f / (1.0f - p);
  for (int64_t i = i0; i < i1; ++i)
    apply_counter_mask(seed, alpha_row_counter(n, b, h, i), kc, p, keep_scale, src + (i - i0) * n.T,
                       dst + (i - i0) * n.T,
                       keep_bits ? keep_bits + (i - i0) * keep_words(n) : nullptr);
}

// The per-head products, C = alpha · A · op(B) + beta · C. With narrow heads (d_h ≤
// kNarrowHead) and gemm() routing by `auto` or `packed`, each whose reduction fits one block
// (K ≤ kPackedKc) goes to the small GEMM directly (backend/small_gemm.h): gemm() would send
// the larger ones to a library whose call costs more than their arithmetic, and the packed
// kernel transposes a Bᵀ in registers on every call. A product with Bᵀ is given B transposed
// once per head instead (`transposed`). The small GEMM adds the same products in the same
// order as the packed kernel, so under `--gemm packed` the bits are those of the routed
// products (tests/nn/attention_test.cpp); under `auto` they may differ in the last bits.
class HeadProducts {
 public:
  static constexpr int64_t kNarrowHead = 16;

  HeadProducts(const Dims& n, const AttentionOptions& o)
      : direct_(o.direct_head_products && n.dh <= kNarrowHead &&
                (gemm_backend() == GemmBackend::Auto || gemm_backend() == GemmBackend::Packed)),
        kernel_(best_vector_kernel()) {}

  bool direct() const { return direct_; }

  // C[M, N] = alpha · op(A) · B + beta · C, B [K, N] at ldb.
  void times(bool trans_a, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
             int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) const {
    if (direct_ && K <= kPackedKc)
      small_gemm_with(kernel_, trans_a, false, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
      gemm(trans_a, false, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }

  // C[M, N] = alpha · A · Bᵀ + beta · C for B [N, K] at ldb, whose first N rows `transposed`
  // (made by transpose() when direct()) holds as [K, N] at ldt.
  void times_transposed(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                        const float* B, int64_t ldb, const float* transposed, int64_t ldt,
                        float beta, float* C, int64_t ldc) const {
    if (direct_)  // K = d_h ≤ kNarrowHead: one block
      small_gemm_with(kernel_, false, false, M, N, K, alpha, A, lda, transposed, ldt, beta, C, ldc);
    else
      gemm(false, true, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }

  // out [cols, ldo] = the first `rows` rows of x [rows, cols] at ldx, transposed (direct only).
  void transpose(int64_t rows, int64_t cols, const float* x, int64_t ldx, float* out,
                 int64_t ldo) const {
    if (!direct_) return;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) out[c * ldo + r] = x[r * ldx + c];
  }

 private:
  bool direct_;
  VectorKernel kernel_;
};

// What the backward kernel reads of one attention call: the inputs, α, and the call's settings.
struct AttentionSaved {
  Dims n;
  int64_t block_rows = 1;           // R: query rows per block
  Tensor q, k, v;                   // [B, T, d], contiguous, detached
  Tensor alpha;                     // [B, H, T, T]: the weights before dropout
  std::vector<uint32_t> keep_bits;  // [B, H, T, keep_words]: dropout's decisions on α (p > 0)
  IntTensor key_mask;               // [B, T]
  std::shared_ptr<const AttentionTerms> terms;
  TensorList term_params;
  AttentionOptions options;
  bool need_q = false, need_k = false, need_v = false;
  // The rows-in-lanes kernel's, when it ran: α [B·H, its layout] and dropout's keep words.
  const row_lanes::Kernel* lanes = nullptr;
  Tensor lanes_alpha;
  std::vector<uint32_t> lanes_keep;
};

// Forward, per (b, h) and block of R query rows: S = scale·q kᵀ (+ bias terms), α = masked
// softmax of S, α' = dropout(α), z = α' v (+ value terms). z [B, T, d]; α [B, H, T, T] is
// kept in `alpha` when it is given (for backward), else each block's scores are scratch;
// dropout's decisions are kept as bits in `keep_bits` when it is given.
void attention_forward_kernel(const Dims& n, int64_t R, const float* qp, const float* kp,
                              const float* vp, const IntTensor& key_mask,
                              const AttentionTerms* terms, const AttentionOptions& options,
                              float* zp, float* alpha, uint32_t* keep_bits) {
  const bool save = alpha != nullptr;
  const bool use_dropout = options.dropout > 0.0f;
  const int64_t row_width = terms ? n.T : 0;  // hooks read rows of T columns; else kc do
  const HeadProducts products(n, options);
  if (terms) terms->prepare();
  parallel_for(0, n.B * n.H, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> scores(save ? 0 : R * n.T), dropped(use_dropout ? R * n.T : 0);
    std::vector<float> k_t(products.direct() ? n.dh * n.T : 0);  // [d_h, T]: k_hᵀ
    for (int64_t w = lo; w < hi; ++w) {
      const int64_t b = w / n.H, h = w % n.H;
      const int32_t* mask = key_mask.data() + b * n.T;
      const KeyRange range = key_range(mask, n.T, terms);
      const int64_t rows_end = range.rows_end(options, n.T);
      const float* k_h = kp + b * n.T * n.d + h * n.dh;
      const float* v_h = vp + b * n.T * n.d + h * n.dh;
      products.transpose(range.keys(options.causal, n.T), n.dh, k_h, n.d, k_t.data(), n.T);
      for (int64_t i0 = 0; i0 < n.T; i0 += R) {
        const int64_t i1 = std::min(rows_end, i0 + R), rows = std::max<int64_t>(0, i1 - i0);
        const int64_t kc = range.keys(options.causal, i1);
        const int64_t width = std::max(row_width, kc);
        float* S = save ? alpha + (w * n.T + i0) * n.T : scores.data();
        float* z_blk = zp + (b * n.T + i0) * n.d + h * n.dh;
        for (int64_t r = rows; r < std::min(R, n.T - i0); ++r)  // skipped rows: z = 0
          std::fill_n(z_blk + r * n.d, n.dh, 0.0f);
        if (rows == 0) continue;
        const float* q_blk = qp + (b * n.T + i0) * n.d + h * n.dh;
        products.times_transposed(rows, kc, n.dh, n.scale, q_blk, n.d, k_h, n.d, k_t.data(), n.T,
                                  0.0f, S, n.T);
        if (terms && terms->bias_reads_keys())
          terms->add_bias_with_keys(b, h, i0, i1, n.T, q_blk, n.d, k_h, n.d, S, n.T);
        if (terms && terms->has_bias()) terms->add_bias(b, h, i0, i1, n.T, q_blk, n.d, S, n.T);
        masked_softmax_rows(n, i0, i1, kc, mask, options.causal, width, S);
        const float* A = S;
        if (use_dropout) {
          apply_dropout(n, b, h, i0, i1, kc, options.dropout, options.dropout_seed, S,
                        dropped.data(),
                        keep_bits ? keep_bits + (w * n.T + i0) * keep_words(n) : nullptr);
          for (int64_t r = 0; r < rows; ++r)
            std::fill(dropped.data() + r * n.T + kc, dropped.data() + r * n.T + width, 0.0f);
          A = dropped.data();
        }
        products.times(false, rows, n.dh, kc, 1.0f, A, n.T, v_h, n.d, 0.0f, z_blk, n.d);
        if (terms && terms->has_values()) terms->add_values(b, h, i0, i1, n.T, A, n.T, z_blk, n.d);
      }
    }
  });
}

// One thread's scratch for the backward, reused from head to head.
struct BackwardScratch {
  std::vector<float> dA;       // [R, T]: dα', then dS
  std::vector<float> dropped;  // [R, T]: α' (dropout only)
  std::vector<float> keep;     // [R, T] + 32: keep / (1 − p) (dropout only; whole words)
  std::vector<float> v_t;      // [d_h, T]: v_hᵀ (direct products only)
  BackwardScratch(const AttentionSaved& s, const HeadProducts& products) {
    const int64_t rows_by_keys = s.block_rows * s.n.T;
    const bool dropout = s.options.dropout > 0.0f;
    dA.resize(rows_by_keys);
    dropped.resize(dropout ? rows_by_keys : 0);
    keep.resize(dropout ? rows_by_keys + 32 : 0);
    v_t.resize(products.direct() ? s.n.dh * s.n.T : 0);
  }
};

// Backward of one (b, h) = work item w, given dz: accumulates dq, dk, dv [B, T, d] of that
// head and the terms' parameter gradients into `grads`.
void attention_backward_head(const AttentionSaved& s, int64_t w, const float* dz, float* dq,
                             float* dk, float* dv, const AttentionTerms::GradBuffers& grads,
                             const HeadProducts& products, BackwardScratch& scratch) {
  std::vector<float>& dA = scratch.dA;
  std::vector<float>& dropped = scratch.dropped;
  std::vector<float>& keep = scratch.keep;
  std::vector<float>& v_t = scratch.v_t;
  const Dims& n = s.n;
  const int64_t R = s.block_rows;
  const bool dropout = s.options.dropout > 0.0f;
  const AttentionTerms* t = s.terms.get();
  const int64_t b = w / n.H, h = w % n.H;
  const int64_t head = b * n.T * n.d + h * n.dh;
  const float* q_h = s.q.data() + head;
  const float* k_h = s.k.data() + head;
  const float* v_h = s.v.data() + head;
  float* dq_h = dq + head;
  float* dk_h = dk + head;
  float* dv_h = dv + head;
  const KeyRange range = key_range(s.key_mask.data() + b * n.T, n.T, t);
  const int64_t rows_end = range.rows_end(s.options, n.T);
  const int64_t row_width = t ? n.T : 0;  // hooks read rows of T columns; else kc do
  products.transpose(range.keys(s.options.causal, n.T), n.dh, v_h, n.d, v_t.data(), n.T);
  for (int64_t i0 = 0; i0 < rows_end; i0 += R) {
    const int64_t i1 = std::min(rows_end, i0 + R), rows = i1 - i0;
    const int64_t kc = range.keys(s.options.causal, i1);
    const int64_t width = std::max(row_width, kc);
    const float* A = s.alpha.data() + (w * n.T + i0) * n.T;
    const float* Ad = A;
    if (dropout) {  // keep[r, j] = [u ≥ p] / (1 − p), once for α' and dα; 0 past kc (α is)
      const float keep_scale = 1.0f / (1.0f - s.options.dropout);
      for (int64_t r = 0; r < rows; ++r) {
        float* k_r = keep.data() + r * n.T;
        const uint32_t* bits = s.keep_bits.data() + (w * n.T + i0 + r) * keep_words(n);
        for (int64_t j0 = 0; j0 < kc; j0 += 32)  // whole words: `keep` has 32 floats of slack
          for (int e = 0; e < 32; ++e) k_r[j0 + e] = (bits[j0 / 32] >> e) & 1U ? keep_scale : 0.0f;
        std::fill(k_r + kc, k_r + width, 0.0f);
        const float* a = A + r * n.T;
        float* ad = dropped.data() + r * n.T;
        for (int64_t j = 0; j < width; ++j) ad[j] = a[j] * k_r[j];
      }
      Ad = dropped.data();
    }
    const float* dz_blk = dz + head + i0 * n.d;
    // dv_h += α'ᵀ dz_blk
    products.times(true, kc, n.dh, rows, 1.0f, Ad, n.T, dz_blk, n.d, 1.0f, dv_h, n.d);
    // dα' = dz_blk v_hᵀ (+ the value terms' part, over whole rows)
    products.times_transposed(rows, kc, n.dh, 1.0f, dz_blk, n.d, v_h, n.d, v_t.data(), n.T, 0.0f,
                              dA.data(), n.T);
    if (t && t->has_values())
      t->values_backward(b, h, i0, i1, n.T, Ad, n.T, dz_blk, n.d, dA.data(), n.T, grads);
    // dS = α ⊙ (dα − Σ_j α dα) in place, dα = dα' ⊙ keep; α = 0 past kc, so dS is too
    for (int64_t r = 0; r < rows; ++r) {
      const float* a = A + r * n.T;
      float* d = dA.data() + r * n.T;
      if (dropout) {
        const float* k_r = keep.data() + r * n.T;
        for (int64_t j = 0; j < kc; ++j) d[j] *= k_r[j];
      }
      const float fdot = static_cast<float>(
          detail::lane_sum(kc, [&](int64_t j) { return static_cast<double>(a[j]) * d[j]; }));
      for (int64_t j = 0; j < kc; ++j) d[j] = a[j] * (d[j] - fdot);
      std::fill(d + kc, d + width, 0.0f);
    }
    const float* q_blk = q_h + i0 * n.d;
    float* dq_blk = dq_h + i0 * n.d;
    if (t && t->has_bias())
      t->bias_backward(b, h, i0, i1, n.T, q_blk, n.d, dA.data(), n.T, dq_blk, n.d, grads);
    if (t && t->bias_reads_keys())
      t->bias_backward_with_keys(b, h, i0, i1, n.T, q_blk, n.d, k_h, n.d, dA.data(), n.T, dq_blk,
                                 n.d, dk_h, n.d, grads);
    products.times(false, rows, n.dh, kc, n.scale, dA.data(), n.T, k_h, n.d, 1.0f, dq_blk, n.d);
    products.times(true, kc, n.dh, rows, n.scale, dA.data(), n.T, q_blk, n.d, 1.0f, dk_h, n.d);
  }
}

// The terms' parameter gradients of one backward. Each (work item, parameter) has a buffer of
// its own, summed in work-item order, so the gradients do not depend on how work was split
// over threads.
class TermGradients {
 public:
  TermGradients(const TensorList& params, int64_t items) : params_(params), items_(items) {
    for (const Tensor& p : params)
      buffers_.emplace_back(static_cast<size_t>(items * p.numel()), 0.0f);
  }
  // Points `grads` at work item w's buffers.
  void point(AttentionTerms::GradBuffers& grads, int64_t w) {
    grads.resize(params_.size());
    for (size_t p = 0; p < params_.size(); ++p)
      grads[p] = buffers_[p].data() + w * params_[p].numel();
  }
  // Appends each parameter's gradient (undefined where it needs none) to `result`.
  void append_sums(TensorList& result) const {
    for (size_t p = 0; p < params_.size(); ++p) {
      const int64_t size = params_[p].numel();
      Tensor grad = Tensor::zeros(params_[p].shape());
      float* out = grad.data();
      parallel_for(0, size, 1024, [&](int64_t lo, int64_t hi) {
        for (int64_t w = 0; w < items_; ++w) {
          const float* src = buffers_[p].data() + w * size;
          for (int64_t e = lo; e < hi; ++e) out[e] += src[e];
        }
      });
      result.push_back(params_[p].requires_grad() ? grad : Tensor());
    }
  }

 private:
  const TensorList& params_;
  int64_t items_;
  std::vector<std::vector<float>> buffers_;
};

// Backward: the gradients of q, k, v and the terms' parameters (undefined where none is
// needed).
TensorList attention_backward_kernel(const AttentionSaved& s, const Tensor& g) {
  const Dims& n = s.n;
  const Tensor dz = g.contiguous();
  Tensor dq = Tensor::zeros(s.q.shape()), dk = Tensor::zeros(s.k.shape()),
         dv = Tensor::zeros(s.v.shape());
  const int64_t items = n.B * n.H;
  TermGradients term_grads(s.term_params, items);
  const HeadProducts products(n, s.options);
  if (s.terms) s.terms->prepare();  // the parameters may have moved since the forward (tests)
  parallel_for(0, items, 1, [&](int64_t lo, int64_t hi) {
    BackwardScratch scratch(s, products);
    AttentionTerms::GradBuffers grads;
    for (int64_t w = lo; w < hi; ++w) {
      term_grads.point(grads, w);
      attention_backward_head(s, w, dz.data(), dq.data(), dk.data(), dv.data(), grads, products,
                              scratch);
    }
  });
  TensorList result{s.need_q ? dq : Tensor(), s.need_k ? dk : Tensor(), s.need_v ? dv : Tensor()};
  term_grads.append_sums(result);
  return result;
}

// ---- heads of width 8 or 16, no terms or terms that read no keys: the rows-in-lanes kernel ----

// The kernel for this call, or null: the block kernel serves. It calls the terms' hooks with
// every row of a (b, h) at once and never with keys, so it serves any terms whose logit bias
// reads at most q (xl_relative's u · k_j and CoPE's gates read keys).
const row_lanes::Kernel* row_lanes_kernel(const Dims& n, const AttentionTerms* terms,
                                          const AttentionOptions& o) {
  if (!o.row_lanes) return nullptr;
  if (terms && (terms->bias_reads_keys() || terms->needs_every_key())) return nullptr;
  if (o.row_lanes_width) return row_lanes::kernel_for(*o.row_lanes_width, n.dh);
  const row_lanes::Kernel* widest = row_lanes::kernel_for(VectorKernel::Avx512, n.dh);
  return widest ? widest : row_lanes::kernel_for(VectorKernel::Avx2, n.dh);
}

row_lanes::Problem row_lanes_problem(const AttentionSaved& s, const IntTensor& key_mask,
                                     const AttentionTerms* terms, const AttentionOptions& o) {
  row_lanes::Problem p;
  p.B = s.n.B;
  p.T = s.n.T;
  p.H = s.n.H;
  p.d = s.n.d;
  p.scale = s.n.scale;
  p.causal = o.causal;
  p.dropout = o.dropout;
  p.dropout_seed = o.dropout_seed;
  p.skip_padded_queries = o.skip_padded_queries;
  p.q = s.q.data();
  p.k = s.k.data();
  p.v = s.v.data();
  p.key_mask = key_mask.data();
  p.terms = terms;
  return p;
}

// z from s.q, s.k, s.v (and the terms' logit bias); with `save`, α and the keep words into
// s.lanes_alpha, s.lanes_keep.
void row_lanes_forward(AttentionSaved& s, const IntTensor& key_mask, const AttentionTerms* terms,
                       const AttentionOptions& o, bool save, float* z) {
  if (terms) terms->prepare();
  const row_lanes::Problem p = row_lanes_problem(s, key_mask, terms, o);
  const row_lanes::Layout layout = s.lanes->layout(p.T, terms != nullptr);
  const int64_t items = p.B * p.H;
  const bool save_keep = save && o.dropout > 0.0f;
  if (save) s.lanes_alpha = Tensor::empty({items * layout.alpha_per_item()});
  if (save_keep) s.lanes_keep.resize(static_cast<size_t>(items * layout.keep_per_item()));
  float* alpha = save ? s.lanes_alpha.data() : nullptr;
  uint32_t* keep = save_keep ? s.lanes_keep.data() : nullptr;
  const row_lanes::Forward forward = s.lanes->forward;
  parallel_for(0, items, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> scratch(static_cast<size_t>(layout.forward_scratch()));
    for (int64_t w = lo; w < hi; ++w)
      forward(p, layout, w, scratch.data(), z,
              alpha ? alpha + w * layout.alpha_per_item() : nullptr,
              keep ? keep + w * layout.keep_per_item() : nullptr);
  });
}

// Whether the terms give any gradient: a bias that reads neither q nor parameters gives none.
bool terms_give_gradients(const AttentionTerms* terms, const TensorList& params) {
  return terms && (!params.empty() || terms->has_values() ||
                   (terms->has_bias() && terms->bias_reads_queries()));
}

// The terms' backward hooks take every row of a (b, h) in one call each: values_backward
// before the groups (its dα' joins theirs), bias_backward after them (from their dS).
TensorList row_lanes_backward(const AttentionSaved& s, const Tensor& g) {
  const AttentionTerms* terms =
      terms_give_gradients(s.terms.get(), s.term_params) ? s.terms.get() : nullptr;
  const row_lanes::Problem p = row_lanes_problem(s, s.key_mask, terms, s.options);
  const row_lanes::Layout layout = s.lanes->layout(p.T, terms != nullptr);
  const Tensor dz = g.contiguous();
  Tensor dq = Tensor::zeros(s.q.shape()), dk = Tensor::zeros(s.k.shape()),
         dv = Tensor::zeros(s.v.shape());
  const int64_t items = p.B * p.H;
  TermGradients term_grads(s.term_params, items);
  if (terms) terms->prepare();  // the parameters may have moved since the forward (tests)
  const float* alpha = s.lanes_alpha.data();
  const uint32_t* keep = s.lanes_keep.empty() ? nullptr : s.lanes_keep.data();
  const row_lanes::Backward backward = s.lanes->backward;
  parallel_for(0, items, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> scratch(static_cast<size_t>(layout.backward_scratch()));
    AttentionTerms::GradBuffers grads;
    for (int64_t w = lo; w < hi; ++w) {
      term_grads.point(grads, w);
      backward(p, layout, w, alpha + w * layout.alpha_per_item(),
               keep ? keep + w * layout.keep_per_item() : nullptr, dz.data(), scratch.data(),
               dq.data(), dk.data(), dv.data(), grads);
    }
  });
  TensorList result{s.need_q ? dq : Tensor(), s.need_k ? dk : Tensor(), s.need_v ? dv : Tensor()};
  term_grads.append_sums(result);
  return result;
}

}  // namespace

bool row_lanes_runs(int64_t head_width) {
  return row_lanes::kernel_for(VectorKernel::Avx512, head_width) != nullptr ||
         row_lanes::kernel_for(VectorKernel::Avx2, head_width) != nullptr;
}

Tensor attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                 const IntTensor& key_mask, std::shared_ptr<const AttentionTerms> terms,
                 const AttentionOptions& options) {
  const Dims n = check_inputs(q_in, k_in, v_in, key_mask, options);
  AttentionSaved s;
  s.n = n;
  s.q = q_in.contiguous().detach();
  s.k = k_in.contiguous().detach();
  s.v = v_in.contiguous().detach();
  s.term_params = terms ? terms->parameters() : TensorList{};
  bool params_need_grad = false;
  for (const Tensor& p : s.term_params) params_need_grad = params_need_grad || p.requires_grad();
  const bool save = grad_enabled() && (q_in.requires_grad() || k_in.requires_grad() ||
                                       v_in.requires_grad() || params_need_grad);
  s.block_rows = std::max<int64_t>(1, std::min(options.block_rows, n.T));

  Tensor z = Tensor::empty({n.B, n.T, n.d});
  s.lanes = row_lanes_kernel(n, terms.get(), options);
  const bool save_keep = save && options.dropout > 0.0f;
  if (s.lanes) {
    row_lanes_forward(s, key_mask, terms.get(), options, save, z.data());
  } else {
    if (save) s.alpha = Tensor::empty({n.B, n.H, n.T, n.T});
    if (save_keep) s.keep_bits.resize(static_cast<size_t>(n.B * n.H * n.T * keep_words(n)));
    attention_forward_kernel(n, s.block_rows, s.q.data(), s.k.data(), s.v.data(), key_mask,
                             terms.get(), options, z.data(), save ? s.alpha.data() : nullptr,
                             save_keep ? s.keep_bits.data() : nullptr);
  }
  if (save) {
    TensorList inputs{q_in, k_in, v_in};
    inputs.insert(inputs.end(), s.term_params.begin(), s.term_params.end());
    s.terms = std::move(terms);
    s.options = options;
    s.key_mask = key_mask;
    s.need_q = q_in.requires_grad();
    s.need_k = k_in.requires_grad();
    s.need_v = v_in.requires_grad();
    record(z, "attention", inputs, [s = std::move(s)](const Tensor& g) {
      return s.lanes ? row_lanes_backward(s, g) : attention_backward_kernel(s, g);
    });
  }
  return z;
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const IntTensor& key_mask,
                         const std::shared_ptr<const AttentionTerms>& terms,
                         const AttentionOptions& options) {
  const Dims n = check_inputs(q, k, k, key_mask, options);
  auto heads_first = [&](const Tensor& x) {  // [B, T, d] → [B, H, T, d_h]
    return permute(reshape(x, {n.B, n.T, n.H, n.dh}), {0, 2, 1, 3});
  };
  const Tensor qh = heads_first(q), kh = heads_first(k);
  const Tensor content = mul_scalar(matmul(qh, transpose(kh, -1, -2)), n.scale);
  Tensor S = content;
  if (terms && terms->bias_reads_keys())
    S = add(S, terms->composed_bias_with_keys(qh, kh, content));
  if (terms && terms->has_bias()) S = add(S, terms->composed_bias(qh));
  // masked[b, 0, i, j] = 1 where key j is padding or (causal) j > i.
  std::vector<float> masked(static_cast<size_t>(n.B * n.T * n.T));
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t i = 0; i < n.T; ++i)
      for (int64_t j = 0; j < n.T; ++j)
        masked[(b * n.T + i) * n.T + j] =
            (!key_mask.values[b * n.T + j] || (options.causal && j > i)) ? 1.0f : 0.0f;
  S = masked_fill(S, Tensor::from_vector({n.B, 1, n.T, n.T}, masked),
                  -std::numeric_limits<float>::infinity());
  return softmax(S, -1);
}

Tensor attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                          const IntTensor& key_mask,
                          const std::shared_ptr<const AttentionTerms>& terms,
                          const AttentionOptions& options) {
  const Dims n = check_inputs(q, k, v, key_mask, options);
  const Tensor vh = permute(reshape(v, {n.B, n.T, n.H, n.dh}), {0, 2, 1, 3});  // [B, H, T, d_h]
  Tensor alpha = attention_weights(q, k, key_mask, terms, options);
  if (options.dropout > 0.0f) alpha = dropout(alpha, options.dropout, options.dropout_seed);
  Tensor z = matmul(alpha, vh);
  if (terms && terms->has_values()) z = add(z, terms->composed_values(alpha));
  return reshape(permute(z, {0, 2, 1, 3}), {n.B, n.T, n.d});
}

}  // namespace pelab
