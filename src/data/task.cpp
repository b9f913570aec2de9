// What every task shares: the evaluation set a generated task draws.
#include "pelab/data/task.h"

namespace pelab {

std::vector<Example> Task::evaluation_set(int64_t length, int64_t count, uint64_t eval_seed) const {
  Generator rng(derive_seed(eval_seed ^ mix64(static_cast<uint64_t>(length)), "evaluation"));
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(sample(rng, static_cast<int>(length)));
  return out;
}

}  // namespace pelab
