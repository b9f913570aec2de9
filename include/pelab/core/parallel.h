// One thread pool: OpenMP. Work is split statically, so for a given thread count every
// element is computed by the same thread in the same order — results repeat bit for bit.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace pelab {

// Sets the OpenMP pool size (and keeps OpenBLAS single-threaded: one pool, not two).
void set_num_threads(int n);
int num_threads();

// Calls fn(begin_k, end_k) on disjoint chunks covering [begin, end), in parallel when
// there is more than `grain` work per thread and we are not already inside a region.
template <class Fn>
void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t max_chunks = grain > 0 ? (n + grain - 1) / grain : n;
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), max_chunks));
  if (threads <= 1 || omp_in_parallel()) {
    fn(begin, end);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num();
    const int64_t lo = begin + n * t / threads;
    const int64_t hi = begin + n * (t + 1) / threads;
    if (lo < hi) fn(lo, hi);
  }
}

}  // namespace pelab
