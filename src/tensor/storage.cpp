#include "pelab/tensor/storage.h"

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace pelab {
namespace {

constexpr size_t kAlign = 64;
// The pool keeps idle buffers of at most kMaxCachedBuffer bytes, and never more than
// kMaxCachedBytes of them: the many small tensors of a step (a head's rows, a bias and its
// gradient) then skip malloc, while large ones go back to malloc, which coalesces them and
// reuses the space for the next step's tensors of other sizes. Cached by size class, large
// buffers are hoarded: one per shape, and the batches' lengths vary from step to step.
constexpr size_t kMaxCachedBuffer = size_t{64} << 10;
constexpr size_t kMaxCachedBytes = size_t{32} << 20;
// By default malloc hands large buffers to mmap, returning them to the kernel when freed (and
// trims its heap's free top), so each next step faults fresh zeroed pages in again. Raised to
// glibc's maximum (32 MiB) and far above, they stay mapped for reuse.
constexpr int kMallocMmapBytes = 32 << 20;
constexpr int kMallocTrimBytes = 512 << 20;

// A buffer's size class: small ones to the next 64 bytes; from 4 KiB on, to the next of four
// steps per power of two (4, 5, 6 or 7 × 2^e), at most 25% more than asked. Tensors whose
// shapes vary a little from step to step (a batch's real tokens) then share a few classes
// and reuse each other's buffers, instead of each new size adding one to the cache.
size_t round_bytes(size_t count) {
  const size_t bytes = std::max<size_t>(count * sizeof(float), 1);
  if (bytes <= 4096) return (bytes + kAlign - 1) / kAlign * kAlign;
  size_t step = size_t{1} << (63 - __builtin_clzll(bytes) - 2);  // a quarter of the power of two
  return (bytes + step - 1) / step * step;
}

// A kAlign-aligned block from plain malloc, its start stored just before the aligned address
// (malloc's 16-byte alignment leaves at least that much room). Not aligned_alloc: for large
// blocks glibc over-allocates and splits off the misaligned head, and those slivers, left
// between the tensors, kept the next steps' tensors from reusing the space: the heap of a
// small training run grew to about twice its live peak. Sanitized builds keep aligned_alloc,
// whose blocks end exactly where the sanitizer's guard zone begins.
#ifdef PELAB_SANITIZE
void* aligned_malloc(size_t bytes) {
  void* p = std::aligned_alloc(kAlign, bytes);
  if (!p) throw std::bad_alloc();
  return p;
}
void aligned_free(void* p) {
  std::free(p);
}
#else
void* aligned_malloc(size_t bytes) {
  char* raw = static_cast<char*>(std::malloc(bytes + kAlign));
  if (!raw) throw std::bad_alloc();
  char* aligned = raw + (kAlign - reinterpret_cast<uintptr_t>(raw) % kAlign);  // raw + 16..64
  void** p = reinterpret_cast<void**>(aligned);
  p[-1] = raw;
  return p;
}
void aligned_free(void* p) {
  std::free(static_cast<void**>(p)[-1]);
}
#endif

struct Pool {
  Pool() {
    mallopt(M_MMAP_THRESHOLD, kMallocMmapBytes);
    mallopt(M_TRIM_THRESHOLD, kMallocTrimBytes);
  }

  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free_lists;  // by exact rounded size
  size_t cached = 0;
  size_t live = 0;
  size_t peak = 0;
#ifdef PELAB_SANITIZE
  static constexpr bool kEnabled = false;  // let ASan see every use-after-free
#else
  static constexpr bool kEnabled = true;
#endif

  void* take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      live += bytes;
      peak = std::max(peak, live);
      auto it = free_lists.find(bytes);
      if (kEnabled && it != free_lists.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached -= bytes;
        return p;
      }
    }
    return aligned_malloc(bytes);
  }

  void give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      live -= bytes;
      if (kEnabled && bytes <= kMaxCachedBuffer && cached + bytes <= kMaxCachedBytes) {
        free_lists[bytes].push_back(p);
        cached += bytes;
        return;
      }
    }
    aligned_free(p);
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [bytes, list] : free_lists)
      for (void* p : list) aligned_free(p);
    free_lists.clear();
    cached = 0;
  }
};

Pool& pool() {
  static Pool* instance = new Pool();  // never destroyed: storages may outlive static teardown
  return *instance;
}

}  // namespace

Storage::Storage(size_t count)
    : data_(static_cast<float*>(pool().take(round_bytes(count)))), count_(count) {}

Storage::~Storage() {
  pool().give(data_, round_bytes(count_));
}

namespace memory {
size_t cached_bytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().cached;
}
size_t live_bytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().live;
}
void release_cached() {
  pool().release();
}
bool pool_enabled() {
  return Pool::kEnabled;
}
size_t peak_live_bytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  return pool().peak;
}
void reset_peak_live_bytes() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  pool().peak = pool().live;
}
}  // namespace memory

}  // namespace pelab
