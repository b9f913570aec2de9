// Storage: a 64-byte aligned float buffer. Buffers come from a caching pool so that a
// training step with the same shapes as the previous one does not call malloc at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace pelab {

class Storage {
 public:
  explicit Storage(size_t count);  // uninitialised
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return count_; }

 private:
  float* data_;
  size_t count_;
};

namespace memory {
// Bytes held by the pool for reuse (not in use by any tensor).
size_t cached_bytes();
// Bytes currently in use by live storages.
size_t live_bytes();
// Returns every cached buffer to the system.
void release_cached();
// False in sanitized builds, where every buffer goes straight back to malloc.
bool pool_enabled();
// The most bytes in use by live storages at any one time since the last reset (or start).
size_t peak_live_bytes();
void reset_peak_live_bytes();
}  // namespace memory

}  // namespace pelab
