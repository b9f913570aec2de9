// Seeded random numbers, identical on every run with the same seed.
//
// Two kinds, for two needs:
//  - Generator: a sequential stream (xoshiro256**), for initialisation and data sampling.
//    Its state is four words and can be saved and restored (exact resume).
//  - counter_uniform(seed, i): a pure function of (seed, i), for noise drawn inside parallel
//    loops (dropout masks), so the values do not depend on how work is split over threads.
#pragma once

#include <array>
#include <cstdint>

namespace pelab {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from (seed, index); 24 random bits, exact in float.
inline float counter_uniform(uint64_t seed, uint64_t index) {
  return static_cast<float>(mix64(mix64(seed) ^ index) >> 40) * (1.0f / 16777216.0f);
}

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
