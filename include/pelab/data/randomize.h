// Randomized positions (Ruoss et al. 2023), `positional.randomize.*`: how batches number
// their tokens. A data setting, not a model one: the model reads whatever positions a batch
// carries, so the encoder and its checkpoint know nothing of it.
#pragma once

#include <cstdint>

namespace pelab {

struct RandomizeConfig {
  int64_t max_position = 0;  // 0 = off; else positions are a sorted sample from [0, M)
  bool at_eval = false;
};

}  // namespace pelab
