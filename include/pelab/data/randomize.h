// Randomized positions (Ruoss et al. 2023), `positional.randomize.*`: how batches number
// their tokens. A data setting, not a model one: the model reads whatever positions a batch
// carries, so the encoder and its checkpoint know nothing of it.
#pragma once

#include <cstdint>

namespace pelab {

struct RandomizeConfig {
  int64_t max_position = 0;  // 0 = off; else positions are a sorted sample from [0, M)
  // Evaluation numbers positions as training did (a model trained on samples from [0, M) has
  // never seen 0..n-1), over `eval_draws` draws whose results are averaged; false: 0..n-1.
  bool at_eval = true;
  int64_t eval_draws = 5;
};

}  // namespace pelab
