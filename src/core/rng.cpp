#include "pelab/core/rng.h"

#if defined(__x86_64__) || defined(__i386__)
#define PELAB_RNG_X86 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"
#include "pelab/core/machine.h"

namespace pelab {

namespace {
// Bit e of a block's keep word (counter l0 + e kept), for the `count` elements written.
inline uint32_t keep_word(uint32_t keep, int count) {
  return count == 32 ? keep : keep & ((1U << count) - 1U);
}

// out[l − l0] = in[l − l0] · scale where the bits of counter l of the block ≥ threshold, else
// 0, for l in [l0, l1) of one block of 32 counters; and, with keep_out, the decisions as the
// bits of one word (bit l − l0). The definition, one hash at a time.
void mask_block_portable(CounterKey key, uint32_t block, int l0, int l1, uint32_t threshold,
                         float scale, const float* in, float* out, uint32_t* keep_out) {
  uint32_t h[16], bits[32];
  for (uint32_t l = 0; l < 16; ++l) h[l] = counter_hash(key, (block << 4) | l);
  for (int l = 0; l < 16; ++l) {
    bits[l] = h[l] & 0xffffU;
    bits[16 + l] = h[l] >> 16;
  }
  // Into a local block first: in and out may be one array, and vector code needs them apart.
  float kept[32];
  const uint32_t* b = bits + l0;
  const int count = l1 - l0;
  uint32_t keep = 0;
  for (int e = 0; e < count; ++e) {
    kept[e] = b[e] >= threshold ? in[e] * scale : 0.0f;
    keep |= static_cast<uint32_t>(b[e] >= threshold) << e;
  }
  std::copy_n(kept, count, out);
  if (keep_out) *keep_out = keep;
}

#ifdef PELAB_RNG_X86
// The same block with its 16 hashes in vector registers and the kept values stored under a
// mask: the hash is integer arithmetic and the kept values are the same float products, so the
// same bits. The portable loop keeps a local block and copies it out (in and out may be one
// array), a copy compilers make a `rep movs`, which costs more than the hashes on some CPUs (a
// fifth of R1's step on an Intel Xeon of family 6, model 207). The hash is written in GCC's
// vector types: GCC 12's AVX-512 shift intrinsics trip its own -Wuninitialized.
__attribute__((target("avx512f"))) void mask_block_avx512(CounterKey key, uint32_t block, int l0,
                                                          int l1, uint32_t threshold, float scale,
                                                          const float* in, float* out,
                                                          uint32_t* keep_out) {
  using Lanes = uint32_t __attribute__((vector_size(64)));
  Lanes h = Lanes{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} | (block << 4);
  h ^= key.k0;
  for (int round = 0; round < 2; ++round) {  // counter_hash: mix32(mix32(x ^ k0) + k1)
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    h *= 0x846ca68bU;
    h ^= h >> 16;
    if (round == 0) h += key.k1;
  }
  const __m512i t = _mm512_set1_epi32(static_cast<int>(threshold));
  const __mmask16 low = _mm512_cmpge_epu32_mask(reinterpret_cast<__m512i>(h & 0xffffU), t);
  const __mmask16 high = _mm512_cmpge_epu32_mask(reinterpret_cast<__m512i>(h >> 16), t);
  // Bit l: counter l of the block is kept; shifted so that bit e is element e.
  const int count = l1 - l0;
  const uint32_t keep = keep_word(((static_cast<uint32_t>(high) << 16) | low) >> l0, count);
  if (keep_out) *keep_out = keep;
  const __m512 s = _mm512_set1_ps(scale);
  for (int e = 0; e < count; e += 16) {
    const int n = std::min(16, count - e);
    const auto valid = static_cast<__mmask16>((1U << n) - 1U);
    const __m512 v = _mm512_maskz_loadu_ps(valid, in + e);
    const auto kept = static_cast<__mmask16>((keep >> e) & valid);
    _mm512_mask_storeu_ps(out + e, valid, _mm512_maskz_mul_ps(kept, v, s));
  }
}

__attribute__((target("avx2"))) __m256i mix32_avx2(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(0x846ca68bU)));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

// Bits ≥ threshold for the eight 16-bit values of `bits`, as an 8-bit mask. Both are at most
// 2¹⁶, so the signed compare is the unsigned one.
__attribute__((target("avx2"))) uint32_t at_least(__m256i bits, __m256i threshold) {
  const __m256i below = _mm256_cmpgt_epi32(threshold, bits);
  return ~static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(below))) & 0xffU;
}

__attribute__((target("avx2"))) void mask_block_avx2(CounterKey key, uint32_t block, int l0, int l1,
                                                     uint32_t threshold, float scale,
                                                     const float* in, float* out,
                                                     uint32_t* keep_out) {
  const __m256i k0 = _mm256_set1_epi32(static_cast<int>(key.k0));
  const __m256i k1 = _mm256_set1_epi32(static_cast<int>(key.k1));
  const __m256i t = _mm256_set1_epi32(static_cast<int>(threshold));
  const __m256i low16 = _mm256_set1_epi32(0xffff);
  uint32_t keep = 0;  // bit l: counter l of the block is kept
  for (int half = 0; half < 2; ++half) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i h =
        _mm256_or_si256(_mm256_set1_epi32(static_cast<int>((block << 4) | (8U * half))), lanes);
    h = mix32_avx2(_mm256_add_epi32(mix32_avx2(_mm256_xor_si256(h, k0)), k1));
    keep |= at_least(_mm256_and_si256(h, low16), t) << (8 * half);
    keep |= at_least(_mm256_srli_epi32(h, 16), t) << (16 + 8 * half);
  }
  const int count = l1 - l0;
  keep = keep_word(keep >> l0, count);
  if (keep_out) *keep_out = keep;
  float kept[32];  // in and out may be one array
  for (int e = 0; e < count; ++e) kept[e] = (keep >> e) & 1U ? in[e] * scale : 0.0f;
  std::copy_n(kept, count, out);
}
#endif  // PELAB_RNG_X86

using MaskBlock = void (*)(CounterKey, uint32_t, int, int, uint32_t, float, const float*, float*,
                           uint32_t*);

MaskBlock mask_block_of(VectorKernel kernel) {
  PELAB_CHECK(vector_kernel_runs_here(kernel), "this CPU cannot run the dropout mask's {} kernel",
              describe(kernel));
#ifdef PELAB_RNG_X86
  if (kernel == VectorKernel::Avx512) return mask_block_avx512;
  if (kernel == VectorKernel::Avx2) return mask_block_avx2;
#endif
  return mask_block_portable;
}

void apply_mask_blocks(MaskBlock mask_block, uint64_t seed, uint64_t first, int64_t n, float p,
                       float scale, const float* src, float* dst, uint32_t* keep) {
  PELAB_CHECK(keep == nullptr || first % 32 == 0,
              "internal error: dropout keep bits need a first counter at a block's start, got {}",
              first);
  const uint32_t threshold = keep_threshold(p);
  const uint64_t last = first + static_cast<uint64_t>(n);
  uint64_t c = first;
  while (c < last) {  // spans of counters sharing their high half
    const uint64_t span_end = std::min(last, ((c >> 32) + 1) << 32);
    const CounterKey key = counter_key(seed, static_cast<uint32_t>(c >> 32));
    while (c < span_end) {  // blocks of 32 counters (by the low half)
      const auto lo = static_cast<uint32_t>(c);
      const int l0 = static_cast<int>(lo & 31);
      const int l1 = static_cast<int>(std::min<uint64_t>(32, l0 + (span_end - c)));
      const auto offset = static_cast<int64_t>(c - first);
      // With keep, first starts a block, so every block starts at l0 = 0 and offset 32·w.
      mask_block(key, lo >> 5, l0, l1, threshold, scale, src + offset, dst + offset,
                 keep ? keep + offset / 32 : nullptr);
      c += static_cast<uint64_t>(l1 - l0);
    }
  }
}
}  // namespace

// Called once per attention row: the kernel is chosen once per process.
void apply_counter_mask(uint64_t seed, uint64_t first, int64_t n, float p, float scale,
                        const float* src, float* dst, uint32_t* keep) {
  static const MaskBlock best = mask_block_of(best_vector_kernel());
  apply_mask_blocks(best, seed, first, n, p, scale, src, dst, keep);
}

void apply_counter_mask_with(VectorKernel kernel, uint64_t seed, uint64_t first, int64_t n, float p,
                             float scale, const float* src, float* dst, uint32_t* keep) {
  apply_mask_blocks(mask_block_of(kernel), seed, first, n, p, scale, src, dst, keep);
}

uint64_t derive_seed(uint64_t seed, const char* stream) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the stream name, mixed with the seed
  for (const char* p = stream; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001b3ULL;
  return mix64(seed ^ mix64(h));
}

Generator::Generator(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& w : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    w = mix64(x);
  }
}

void Generator::set_state(const State& s) {
  PELAB_CHECK(reachable(s),
              "generator state: all four words are zero, a state xoshiro256** "
              "never reaches (its stream would be zeros forever)");
  s_ = s;
}

uint64_t Generator::next_u64() {
  auto rotl = [](uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

int64_t Generator::uniform_int(int64_t lo, int64_t hi) {
  PELAB_CHECK(lo <= hi, "uniform_int: empty range [{}, {}]", lo, hi);
  const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
  if (range == 0) return static_cast<int64_t>(next_u64());  // the full 64-bit range
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;   // reject the biased tail
  uint64_t v;
  do v = next_u64();
  while (v >= limit);
  return lo + static_cast<int64_t>(v % range);
}

double Generator::normal() {
  // Box–Muller with one value per call: simple, and the stream stays easy to reason about.
  double u1;
  do u1 = uniform();
  while (u1 <= 0.0);
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

float Generator::normal(float mean, float stddev) {
  return static_cast<float>(mean + stddev * normal());
}

}  // namespace pelab
