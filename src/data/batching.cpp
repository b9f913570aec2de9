#include "pelab/data/batching.h"

#include <algorithm>
#include <unordered_set>

#include "pelab/core/error.h"

namespace pelab {

namespace {
// n distinct integers from [0, m), sorted (Floyd's algorithm: n draws, no O(m) buffer).
std::vector<int32_t> sorted_sample(int64_t n, int64_t m, Generator& rng) {
  std::unordered_set<int64_t> chosen;
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t j = m - n; j < m; ++j) {
    const int64_t t = rng.uniform_int(0, j);
    const int64_t pick = chosen.count(t) ? j : t;
    chosen.insert(pick);
    out.push_back(static_cast<int32_t>(pick));
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

Batch collate(const std::vector<Example>& examples, const RandomizeConfig* randomize,
              Generator* rng, const DigitRuns* digit_runs) {
  PELAB_CHECK(!examples.empty(), "cannot make a batch of no examples");
  const int64_t B = static_cast<int64_t>(examples.size());
  int64_t T = 0;
  for (const Example& e : examples) {
    PELAB_ASSERT(e.tokens.size() == e.targets.size());
    T = std::max<int64_t>(T, static_cast<int64_t>(e.tokens.size()));
  }
  Batch batch = Batch::padding(B, T);
  const bool random_positions = randomize && randomize->max_position > 0;
  PELAB_ASSERT(!random_positions || rng);
  PELAB_ASSERT(!(random_positions && digit_runs));  // the config refuses the two together
  PELAB_ASSERT(!digit_runs || digit_runs->offset_max == 0 || rng);
  for (int64_t b = 0; b < B; ++b) {
    const Example& e = examples[b];
    const int64_t n = static_cast<int64_t>(e.tokens.size());
    std::vector<int32_t> positions;
    if (random_positions) {
      PELAB_CHECK(n <= randomize->max_position,
                  "positional.randomize.max_position = {} cannot number a sequence of {} tokens",
                  randomize->max_position, n);
      positions = sorted_sample(n, randomize->max_position, *rng);
    } else if (digit_runs) {
      const int64_t offset =
          digit_runs->offset_max > 0 ? rng->uniform_int(0, digit_runs->offset_max) : 0;
      positions = digit_run_positions(e.tokens, digit_runs->is_digit, offset);
    }
    for (int64_t t = 0; t < T; ++t) {
      const int64_t k = b * T + t;
      batch.positions.values[k] = static_cast<int32_t>(t);
      if (t >= n) continue;
      batch.tokens.values[k] = e.tokens[t];
      batch.targets.values[k] = e.targets[t];
      batch.key_mask.values[k] = 1;
      if (!positions.empty()) batch.positions.values[k] = positions[t];
    }
  }
  return batch;
}

std::vector<Example> sample_examples(const Task& task, int64_t count, int64_t min_length,
                                     int64_t max_length, Generator& rng) {
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.push_back(task.sample_training(rng, min_length, max_length));
  return out;
}

std::vector<Example> sample_examples_of_one_size(const Task& task, int64_t count,
                                                 int64_t min_length, int64_t max_length,
                                                 Generator& rng) {
  const int64_t size = rng.uniform_int(min_length, max_length);
  return sample_examples(task, count, size, size, rng);
}

std::vector<Example> evaluation_examples(const Task& task, int64_t length, int64_t count,
                                         uint64_t eval_seed) {
  return task.evaluation_set(length, count, eval_seed);
}

}  // namespace pelab
