#include "pelab/bench/fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

namespace pelab {

namespace {
// Twelve independent accumulators: more than an FMA's latency (4 cycles) times the number of
// FMA pipes (2) on current x86 cores, so the pipes never wait for a result. Each iteration is
// twelve FMAs a·m + c, with m just below 1 so the values stay finite and normal. Each ISA has
// its own function (target attributes do not reach into lambdas or templates' callees).
constexpr int kChains = 12;

using Clock = std::chrono::steady_clock;

double gflops(int lanes, long iters, Clock::time_point start) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return 2.0 * kChains * lanes * static_cast<double>(iters) / seconds / 1e9;
}

__attribute__((target("avx512f"))) double avx512_gflops(long iters) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + 0.1f * static_cast<float>(c));
  const __m512 m = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
  const Clock::time_point start = Clock::now();
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, add);
  }
  const double rate = gflops(16, iters, start);
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm512_add_ps(total, acc[c]);
  asm volatile("" : : "v"(total));  // the chains' results are used
  return rate;
}

__attribute__((target("avx2,fma"))) double avx2_gflops(long iters) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(1.0f + 0.1f * static_cast<float>(c));
  const __m256 m = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
  const Clock::time_point start = Clock::now();
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, add);
  }
  const double rate = gflops(8, iters, start);
  __m256 total = acc[0];
  for (int c = 1; c < kChains; ++c) total = _mm256_add_ps(total, acc[c]);
  asm volatile("" : : "x"(total));
  return rate;
}

double scalar_gflops(long iters) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = 1.0f + 0.1f * static_cast<float>(c);
  const Clock::time_point start = Clock::now();
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = __builtin_fmaf(acc[c], 0.9999999f, 1e-7f);
  }
  const double rate = gflops(1, iters, start);
  float total = 0.0f;
  for (int c = 0; c < kChains; ++c) total += acc[c];
  asm volatile("" : : "x"(total));
  return rate;
}
}  // namespace

FmaPeak measure_fma_peak() {
  __builtin_cpu_init();
  FmaPeak peak{0.0, "scalar"};
  double (*rate)(long) = scalar_gflops;
  long iters = 20'000'000;  // ~40 ms per round at the vector peaks of current cores
  if (__builtin_cpu_supports("avx512f")) {
    rate = avx512_gflops;
    peak.isa = "avx512";
    iters /= 2;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    rate = avx2_gflops;
    peak.isa = "avx2";
  }
  rate(iters / 4);  // lets the core reach its working clock first
  for (int round = 0; round < 5; ++round)
    peak.gflops_per_core = std::max(peak.gflops_per_core, rate(iters));
  return peak;
}

}  // namespace pelab
