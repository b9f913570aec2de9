// One batch of inputs, as MODEL.md lays it out. Positions are data: every scheme reads them
// from here, never assumes 0..T-1.
#pragma once

#include "pelab/tensor/tensor.h"

namespace pelab {

struct Batch {
  IntTensor tokens;     // [B, T] input ids
  IntTensor positions;  // [B, T] non-negative; by default p[b, t] = t
  IntTensor key_mask;   // [B, T] 1 for real tokens, 0 for padding
  IntTensor targets;    // [B, T] class, or -1 (IGNORE) where nothing is scored

  // A [B, T] batch of padding only (tokens, positions and mask 0, nothing scored), for the
  // builders to fill in.
  static Batch padding(int64_t B, int64_t T);

  int64_t batch_size() const { return tokens.shape.at(0); }
  int64_t length() const { return tokens.shape.at(1); }
  // Checks shapes, mask values and non-negative positions; throws naming what is wrong.
  void validate(int64_t vocab_in, int64_t vocab_out) const;
};

}  // namespace pelab
