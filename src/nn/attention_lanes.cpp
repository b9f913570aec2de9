// The rows-in-lanes attention kernel, once per vector width: the body
// (attention_lanes_body.h) is included in a namespace of each width, in a region compiled
// for its instructions, with that width's few primitives as V. Everything the body calls from
// elsewhere is included here first, outside those regions.
//
// This file is compiled without floating-point contraction (CMakeLists.txt): every fused
// multiply-add is an explicit V::fma, so both widths form every lane's value alike.
#include "nn/attention_lanes.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "pelab/core/fast_math.h"
#include "pelab/core/rng.h"

#if defined(__x86_64__) || defined(__i386__)
#define PELAB_ROW_LANES 1
#include <immintrin.h>
#endif

namespace pelab::row_lanes {

#ifdef PELAB_ROW_LANES

// ---- AVX-512: 16 rows a vector ------------------------------------------------------------
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")
#endif
namespace avx512 {
namespace {
struct V {
  static constexpr int64_t kLanes = 16;
  using F = __m512;
  using I = int32_t __attribute__((vector_size(64)));
  using U = uint32_t __attribute__((vector_size(64)));
  static F splat(float x) { return _mm512_set1_ps(x); }
  static F fma(const F& a, const F& b, const F& c) { return _mm512_fmadd_ps(a, b, c); }
  static uint32_t bits(const I& m) {
    return _mm512_cmplt_epi32_mask(reinterpret_cast<const __m512i&>(m), _mm512_setzero_si512());
  }
  static __mmask16 first(int64_t n) { return static_cast<__mmask16>((1U << n) - 1); }
  static F load_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_first(float* p, const F& x, int64_t n) {
    _mm512_mask_storeu_ps(p, first(n), x);
  }
};
#include "nn/attention_lanes_body.h"
}  // namespace
const Kernel kWidth8{V::kLanes, 8, forward_item<8>, backward_item<8>};
const Kernel kWidth16{V::kLanes, 16, forward_item<16>, backward_item<16>};
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// ---- AVX2: 8 rows a vector ------------------------------------------------------------------
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
namespace {
struct V {
  static constexpr int64_t kLanes = 8;
  using F = __m256;
  using I = int32_t __attribute__((vector_size(32)));
  using U = uint32_t __attribute__((vector_size(32)));
  static F splat(float x) { return _mm256_set1_ps(x); }
  static F fma(const F& a, const F& b, const F& c) { return _mm256_fmadd_ps(a, b, c); }
  static uint32_t bits(const I& m) {
    return static_cast<uint32_t>(_mm256_movemask_ps(reinterpret_cast<const __m256&>(m)));
  }
  static __m256i first(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F load_first(const float* p, int64_t n) { return _mm256_maskload_ps(p, first(n)); }
  static void store_first(float* p, const F& x, int64_t n) { _mm256_maskstore_ps(p, first(n), x); }
};
#include "nn/attention_lanes_body.h"
}  // namespace
const Kernel kWidth8{V::kLanes, 8, forward_item<8>, backward_item<8>};
const Kernel kWidth16{V::kLanes, 16, forward_item<16>, backward_item<16>};
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // PELAB_ROW_LANES

const Kernel* kernel_for(VectorKernel isa, int64_t head_width) {
  if (!vector_kernel_runs_here(isa) || (head_width != 8 && head_width != 16)) return nullptr;
#ifdef PELAB_ROW_LANES
  const bool narrow = head_width == 8;
  if (isa == VectorKernel::Avx512) return narrow ? &avx512::kWidth8 : &avx512::kWidth16;
  if (isa == VectorKernel::Avx2) return narrow ? &avx2::kWidth8 : &avx2::kWidth16;
#endif
  return nullptr;
}

}  // namespace pelab::row_lanes
