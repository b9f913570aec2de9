// Attention for heads of width 8 or 16, without positional terms or with terms that read no
// keys, with query rows in the lanes of a vector: 16 rows a vector with AVX-512, 8 with AVX2
// (src/nn/attention_lanes.cpp). The block kernel of attention.cpp gives each query row its
// own pass (a row maximum, a sum and the calls of four small products per block of rows); at
// R1's shapes (rows of about 40 keys, heads of width 8) that overhead is most of attention's
// time. With a group of rows in the lanes, a key's score for every row of the group is d_h
// multiply-adds of one vector, and the softmax's maximum, exponentials and sum run down the
// keys, lane by lane, with no reduction across lanes.
//
// The terms' hooks (a logit bias that reads at most q, value terms) are called once per
// (b, h) with every row (the forward's in chunks of kTermChunkRows), in row-major [rows, T]
// blocks that the kernel transposes to and from its groups: a call's cost is paid once, and
// the hooks see the same rows at both widths.
//
// Each lane computes its row alone and in key order, and every product-sum is one fused
// multiply-add (the file is compiled without contraction), so both vector widths give the
// same bits. They are not the block kernel's bits: the scores' sums, the softmax's sum (float
// here, double there) and the gradients' sums are formed in another order. The block kernel
// and the composed op are the oracles (tests/nn/attention_lanes_test.cpp).
#pragma once

#include <cstdint>

#include "pelab/core/machine.h"
#include "pelab/nn/attention.h"

namespace pelab::row_lanes {

// One attention call: heads of a width the kernel serves, terms that read no keys. Work item
// w = b·H + h.
struct Problem {
  int64_t B = 0, T = 0, H = 0, d = 0;  // d = d_h·H
  float scale = 0.0f;                  // 1/√d_h
  bool causal = false;
  float dropout = 0.0f;
  uint64_t dropout_seed = 0;
  bool skip_padded_queries = false;
  const float *q = nullptr, *k = nullptr, *v = nullptr;  // [B, T, d]
  const int32_t* key_mask = nullptr;                     // [B, T]
  // The positional terms (bias_reads_keys() and needs_every_key() false), or none.
  const AttentionTerms* terms = nullptr;
};

// The forward calls the terms' hooks on chunks of this many rows (all rows when T is
// shorter), so that its scratch stays [chunk, T] at long evaluation lengths: a multiple of
// both widths' L, so the hooks see the same rows at either.
constexpr int64_t kTermChunkRows = 256;

// What the forward keeps for the backward, per work item: α before dropout as groups of L
// query rows, [groups, T, L] (α[i, j] at (i / L, j, i % L)), and dropout's decisions as one
// L-bit word per (group, key). Entries the backward does not read are left unwritten.
struct Layout {
  int64_t lanes = 0, groups = 0, T = 0;
  int64_t keys = 0;    // T rounded up to whole tiles of L keys: the backward's scratch
  bool terms = false;  // the hooks' [rows, T] blocks are needed
  int64_t alpha_per_item() const { return groups * T * lanes; }
  int64_t keep_per_item() const { return groups * T; }
  int64_t chunk_rows() const { return T < kTermChunkRows ? T : kTermChunkRows; }
  // Per-thread scratch, in floats: the forward's (two [chunk, T] blocks with terms), and the
  // backward's per work item (two [T, T] blocks with terms).
  int64_t forward_scratch() const { return 2 * keys * lanes + (terms ? 2 * chunk_rows() * T : 0); }
  int64_t backward_scratch() const {
    return (1 + 2 * groups) * keys * lanes + (terms ? 2 * T * T : 0);
  }
};

// Per work item w: alpha and keep are the item's own (alpha_per_item() and keep_per_item()
// from its start; null: no gradient needed). The item writes its head's columns of z, or of
// dq, dk and dv (zero on entry), and adds the terms' parameter gradients to `grads` (the
// item's own buffers; with Problem::terms set).
using Forward = void (*)(const Problem&, const Layout&, int64_t w, float* scratch, float* z,
                         float* alpha, uint32_t* keep);
using Backward = void (*)(const Problem&, const Layout&, int64_t w, const float* alpha,
                          const uint32_t* keep, const float* dz, float* scratch, float* dq,
                          float* dk, float* dv, const AttentionTerms::GradBuffers& grads);

struct Kernel {
  int64_t lanes = 0, head_width = 0;
  Forward forward = nullptr;
  Backward backward = nullptr;
  Layout layout(int64_t T, bool terms) const {
    const int64_t groups = (T + lanes - 1) / lanes;
    return {lanes, groups, T, groups * lanes, terms};
  }
};

// The kernel of `isa` (Avx512 or Avx2) for heads of `head_width` (8 or 16), or null: there is
// none for other widths or Portable (the block kernel serves), nor on a CPU that cannot run
// `isa`.
const Kernel* kernel_for(VectorKernel isa, int64_t head_width);

}  // namespace pelab::row_lanes
