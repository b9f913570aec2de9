#include "pelab/core/rng.h"

#include <algorithm>
#include <cmath>

#include "pelab/core/error.h"

namespace pelab {

namespace {
// out[l − l0] = in[l − l0] · scale where the bits of counter l of the block ≥ threshold, else
// 0, for l in [l0, l1) of one block of 32 counters.
void mask_block(CounterKey key, uint32_t block, int l0, int l1, uint32_t threshold, float scale,
                const float* in, float* out) {
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
  for (int e = 0; e < count; ++e) kept[e] = b[e] >= threshold ? in[e] * scale : 0.0f;
  std::copy_n(kept, count, out);
}
}  // namespace

void apply_counter_mask(uint64_t seed, uint64_t first, int64_t n, float p, float scale,
                        const float* src, float* dst) {
  // u ≥ p ⇔ bits ≥ ⌈p·2¹⁶⌉, u = bits·2⁻¹⁶ being exact: the comparison in integers.
  const auto threshold = static_cast<uint32_t>(std::ceil(static_cast<double>(p) * 65536.0));
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
      mask_block(key, lo >> 5, l0, l1, threshold, scale, src + offset, dst + offset);
      c += static_cast<uint64_t>(l1 - l0);
    }
  }
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
