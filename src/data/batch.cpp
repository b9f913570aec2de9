#include "pelab/data/batch.h"

#include "pelab/core/error.h"
#include "pelab/data/task.h"

namespace pelab {

Batch Batch::padding(int64_t B, int64_t T) {
  Batch batch;
  batch.tokens = IntTensor({B, T}, 0);
  batch.positions = IntTensor({B, T}, 0);
  batch.key_mask = IntTensor({B, T}, 0);
  batch.targets = IntTensor({B, T}, kIgnore);
  return batch;
}

void Batch::validate(int64_t vocab_in, int64_t vocab_out) const {
  PELAB_CHECK(tokens.shape.size() == 2, "batch: tokens must be [B, T], got {}",
              to_string(tokens.shape));
  using Named = std::pair<const char*, const IntTensor*>;
  for (const auto& [name, t] :
       {Named{"positions", &positions}, Named{"key_mask", &key_mask}, Named{"targets", &targets}})
    PELAB_CHECK(t->shape == tokens.shape, "batch: {} {} does not match tokens {}", name,
                to_string(t->shape), to_string(tokens.shape));
  const int64_t n = tokens.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t tok = tokens.values[i], pos = positions.values[i], m = key_mask.values[i],
                  y = targets.values[i];
    PELAB_CHECK(tok >= 0 && tok < vocab_in, "batch: token id {} at index {} is outside [0, {})",
                tok, i, vocab_in);
    PELAB_CHECK(pos >= 0, "batch: position {} at index {} is negative (positions are >= 0)", pos,
                i);
    PELAB_CHECK(m == 0 || m == 1, "batch: key_mask value {} at index {} is not 0 or 1", m, i);
    PELAB_CHECK(y == -1 || (y >= 0 && y < vocab_out),
                "batch: target {} at index {} is outside [0, {}) and not IGNORE (-1)", y, i,
                vocab_out);
    PELAB_CHECK(m == 1 || y == -1, "batch: padded index {} carries target {} (must be -1)", i, y);
  }
}

}  // namespace pelab
