// The machine's practical FP32 FMA peak, measured rather than assumed: the "% of peak"
// column of `pelab bench` divides by it. A core runs independent chains of vector FMAs (no
// memory traffic, no dependencies between chains), with the widest vectors it supports
// (AVX-512 where present, else AVX2+FMA, else scalar), for a fixed number of iterations; the
// best of several rounds is its peak.
#pragma once

#include <string>

namespace pelab {

struct FmaPeak {
  double gflops_per_core = 0;  // FP32 FLOP/s of one thread, an FMA counting as two
  std::string isa;             // "avx512", "avx2" or "scalar": which vectors were used
};

// About 0.3 s on one thread.
FmaPeak measure_fma_peak();

}  // namespace pelab
