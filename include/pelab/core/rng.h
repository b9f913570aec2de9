// Seeded random numbers, identical on every run with the same seed.
//
// Two kinds, for two needs:
//  - Generator: a sequential stream (xoshiro256**), for initialisation and data sampling.
//    Its state is four words and can be saved and restored (exact resume).
//  - counter_uniform(seed, i): a pure function of (seed, i), for noise drawn inside parallel
//    loops (dropout masks), so the values do not depend on how work is split over threads.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "pelab/core/machine.h"

namespace pelab {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A 32-bit bijective mixer (Wellons' lowbias32): two multiplies, full avalanche.
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// The key of counters [hi·2³², (hi + 1)·2³²) under `seed`: computed once per span, so that
// the per-counter work below is 32-bit only and loops over consecutive counters vectorise.
struct CounterKey {
  uint32_t k0, k1;
};
inline CounterKey counter_key(uint64_t seed, uint32_t hi) {
  const uint64_t k = mix64(mix64(seed) ^ hi);
  return {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
}
// Two keyed rounds of mix32.
inline uint32_t counter_hash(CounterKey key, uint32_t input) {
  return mix32(mix32(input ^ key.k0) + key.k1);
}
// 16 random bits for the counter whose low half is `lo`. Counters come in blocks of 32 (by
// lo / 32) that share 16 hashes: counter l of the block takes the low 16 bits of hash l,
// counter 16 + l its high 16 bits, so one hash serves two counters and a block's hashes fill
// one vector register.
inline uint32_t counter_bits16(CounterKey key, uint32_t lo) {
  const uint32_t h = counter_hash(key, ((lo >> 5) << 4) | (lo & 15));
  return (lo & 16) ? h >> 16 : h & 0xffffU;
}

// Uniform in [0, 1) from (seed, index); 16 random bits, exact in float. Dropout with rate p
// keeps a value where u ≥ p, so its rate is p rounded up to a multiple of 2⁻¹⁶.
inline float counter_uniform(uint64_t seed, uint64_t index) {
  const CounterKey key = counter_key(seed, static_cast<uint32_t>(index >> 32));
  return static_cast<float>(counter_bits16(key, static_cast<uint32_t>(index))) * (1.0f / 65536.0f);
}

// Dropout with rate p keeps a value whose 16 random bits are at least this: u ≥ p ⇔
// bits ≥ ⌈p·2¹⁶⌉, u = bits·2⁻¹⁶ being exact, so the comparison is made in integers.
inline uint32_t keep_threshold(float p) {
  return static_cast<uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
}

// dst[t] = src[t] · scale where counter_uniform(seed, first + t) ≥ p, else 0, for t < n
// (dropout's inverted mask over a run of consecutive counters; src may equal dst).
// With `keep` given, also the decisions as bits: bit t % 32 of keep[t / 32] is set where
// element t was kept (bits from n on are 0); then `first` must start a block of 32 counters.
void apply_counter_mask(uint64_t seed, uint64_t first, int64_t n, float p, float scale,
                        const float* src, float* dst, uint32_t* keep = nullptr);
// The same through a chosen kernel (tests): each gives the same bits, the vector ones hashing
// a block's 16 counters at once; apply_counter_mask uses best_vector_kernel().
void apply_counter_mask_with(VectorKernel kernel, uint64_t seed, uint64_t first, int64_t n, float p,
                             float scale, const float* src, float* dst, uint32_t* keep = nullptr);

// Derives an independent seed for a named sub-stream (e.g. "init", "data", "dropout").
uint64_t derive_seed(uint64_t seed, const char* stream);

class Generator {
 public:
  explicit Generator(uint64_t seed = 0);

  uint64_t next_u64();
  double uniform();                             // [0, 1), 53 bits
  int64_t uniform_int(int64_t lo, int64_t hi);  // inclusive bounds, unbiased
  double normal();                              // N(0, 1), Box–Muller
  float normal(float mean, float stddev);

  using State = std::array<uint64_t, 4>;
  State state() const { return s_; }
  // Every state but all zeros lies on xoshiro256**'s one cycle; all zeros is a fixed point
  // (the stream would be zeros forever), which no seed or step ever reaches.
  static bool reachable(const State& s) { return (s[0] | s[1] | s[2] | s[3]) != 0; }
  // Throws pelab::Error for a state that is not reachable().
  void set_state(const State& s);

 private:
  State s_;
};

}  // namespace pelab
