// Multi-head attention as one op with a hand-written backward, including the positional
// terms of MODEL.md:
//
//   S[h,i,j] = (q_i · k_j) / sqrt(d_h) + R[h,i,j]      (−inf where key j is padding, or j > i
//   α[h,i,:] = softmax_j S[h,i,:]                        when causal; an all −inf row gives α = 0)
//   z_i      = Σ_j α'[h,i,j] · (v_j + U[i,j])           (α' = α after attention dropout)
//
// q, k, v and z are [B, T, d] with head h owning columns [h·d_h, (h+1)·d_h), so no head
// split/merge copies are made. Work is done per (batch, head) and per block of query rows,
// so the full [T, T] scores are never held when no gradient is needed (long evaluation).
// The composed version (attention_composed) builds the same thing from small ops and is the
// test oracle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "pelab/core/machine.h"
#include "pelab/ops/ops.h"

namespace pelab {

// The positional terms R (logit bias) and U (value terms) of one layer, for one batch.
// A scheme that uses neither returns no AttentionTerms at all. The fused kernel calls the
// block hooks; the oracle calls the composed ones. Both must agree.
class AttentionTerms {
 public:
  virtual ~AttentionTerms() = default;

  // The trainable tensors R and U read; the attention op returns their gradients.
  virtual TensorList parameters() const { return {}; }
  virtual bool has_bias() const { return false; }
  virtual bool has_values() const { return false; }
  // Whether the logit bias reads q (Shaw's q · wK[c]). One that reads neither q nor parameters
  // (ALiBi, sandwich) gives no gradient, and the rows-in-lanes kernel skips its backward.
  virtual bool bias_reads_queries() const { return true; }
  // Called once per fused forward and once per backward, from one thread, before any block
  // hook: terms may cache here what depends on the parameters' current values (they change
  // between calls).
  virtual void prepare() const {}

  // ---- fused hooks, per (b, h) and query rows [i0, i1); T keys -------------------------
  // Gradient buffers for parameters() of one work item: grads[p] has parameters()[p]'s size.
  using GradBuffers = std::vector<float*>;
  // S[r, j] += R[h, i0 + r, j]. q: the head's query rows, row stride ldq (unscaled).
  virtual void add_bias(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/, int64_t /*T*/,
                        const float* /*q*/, int64_t /*ldq*/, float* /*S*/, int64_t /*lds*/) const {}
  // dq[r, :] += ∂(Σ dS ⊙ R)/∂q_r and parameter gradients, given dS for the block.
  virtual void bias_backward(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/,
                             int64_t /*T*/, const float* /*q*/, int64_t /*ldq*/,
                             const float* /*dS*/, int64_t /*lds*/, float* /*dq*/, int64_t /*lddq*/,
                             const GradBuffers& /*grads*/) const {}
  // z[r, :] += Σ_j α[r, j] · U[i0 + r, j, :].
  virtual void add_values(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/,
                          int64_t /*T*/, const float* /*alpha*/, int64_t /*lda*/, float* /*z*/,
                          int64_t /*ldz*/) const {}
  // dα[r, j] += dz[r, :] · U[i0 + r, j, :], and parameter gradients.
  virtual void values_backward(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/,
                               int64_t /*T*/, const float* /*alpha*/, int64_t /*lda*/,
                               const float* /*dz*/, int64_t /*lddz*/, float* /*dalpha*/,
                               int64_t /*ldda*/, const GradBuffers& /*grads*/) const {}

  // ---- fused hooks for an R that reads the keys (xl_relative's u·k_j, CoPE's gates) -----
  virtual bool bias_reads_keys() const { return false; }
  // R reads whole rows of content scores, padded keys and rows included (CoPE's gates count
  // over them): the kernel then keeps every key and every row. Other terms (xl_relative's
  // u·k_j reads one key at a time) let it skip what is masked.
  virtual bool needs_every_key() const { return false; }
  // S[r, j] += R[h, i0 + r, j]; k: the head's T key rows, row stride ldk. Called before
  // add_bias, so S holds the content scores scale·q_r·k_j on entry (CoPE's S⁰).
  virtual void add_bias_with_keys(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/,
                                  int64_t /*T*/, const float* /*q*/, int64_t /*ldq*/,
                                  const float* /*k*/, int64_t /*ldk*/, float* /*S*/,
                                  int64_t /*lds*/) const {}
  // Its backward, given dS for the block (called after bias_backward): adds R's direct parts
  // to dq, dk and the parameter gradients, then adds to dS, in place, what flows through the
  // content scores (∂R/∂S⁰), which the kernel takes on to q and k with the rest of dS.
  virtual void bias_backward_with_keys(int64_t /*b*/, int64_t /*h*/, int64_t /*i0*/, int64_t /*i1*/,
                                       int64_t /*T*/, const float* /*q*/, int64_t /*ldq*/,
                                       const float* /*k*/, int64_t /*ldk*/, float* /*dS*/,
                                       int64_t /*lds*/, float* /*dq*/, int64_t /*lddq*/,
                                       float* /*dk*/, int64_t /*lddk*/,
                                       const GradBuffers& /*grads*/) const {}

  // ---- composed oracle, from differentiable ops ------------------------------------------
  // q: [B, H, T, d_h] → R: [B, H, T, T].
  virtual Tensor composed_bias(const Tensor& q) const;
  // q, k: [B, H, T, d_h], scores: the content scores S⁰ [B, H, T, T] → R: [B, H, T, T].
  virtual Tensor composed_bias_with_keys(const Tensor& q, const Tensor& k,
                                         const Tensor& scores) const;
  // α: [B, H, T, T] → Σ_j α[b,h,i,j] U[b,i,j,:]: [B, H, T, d_h].
  virtual Tensor composed_values(const Tensor& alpha) const;
};

struct AttentionOptions {
  int64_t heads = 1;
  bool causal = false;
  float dropout = 0.0f;       // on α, training only
  uint64_t dropout_seed = 0;  // the mask is a pure function of (seed, b, h, i, j)
  int64_t block_rows = 64;    // query rows per block
  // Query rows at and after the last real key of their sequence are padding; with this set
  // their z (and gradient) is 0 instead of computed. For callers that drop those rows anyway
  // (training on the real tokens only).
  bool skip_padded_queries = false;
  // A speed choice: with narrow heads the per-head products skip gemm()'s routing (see
  // src/nn/attention.cpp); false routes every one through gemm() (tests compare the two).
  bool direct_head_products = true;
  // A speed choice: heads of width 8 or 16, without positional terms or with terms whose hooks
  // read no keys (every scheme's but xl_relative's and CoPE's), run the kernel with query rows
  // in vector lanes (src/nn/attention_lanes.h) where the CPU has AVX2 or AVX-512; false runs
  // the block kernel (tests compare the two).
  bool row_lanes = true;
  // Tests: that kernel's vector width (Avx512 or Avx2); unset, the widest this CPU runs.
  std::optional<VectorKernel> row_lanes_width;
};

// Whether attention() runs the rows-in-lanes kernel on this CPU for heads of this width
// (without terms, or with terms that read no keys) when AttentionOptions::row_lanes is set.
bool row_lanes_runs(int64_t head_width);

// z [B, T, d] from q, k, v [B, T, d]; key_mask [B, T] (1 = real).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const IntTensor& key_mask,
                 std::shared_ptr<const AttentionTerms> terms, const AttentionOptions& options);

// α [B, H, T, T]: the attention weights before dropout, from small differentiable ops
// (materialises [B, H, T, T]; analyses and the oracle below).
Tensor attention_weights(const Tensor& q, const Tensor& k, const IntTensor& key_mask,
                         const std::shared_ptr<const AttentionTerms>& terms,
                         const AttentionOptions& options);

// The same from small differentiable ops (materialises [B, H, T, T]); the test oracle.
Tensor attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                          const IntTensor& key_mask,
                          const std::shared_ptr<const AttentionTerms>& terms,
                          const AttentionOptions& options);

}  // namespace pelab
