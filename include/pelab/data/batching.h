// From examples to a padded Batch (MODEL.md's four tensors).
#pragma once

#include <vector>

#include "pelab/core/rng.h"
#include "pelab/data/batch.h"
#include "pelab/data/position_ids.h"
#include "pelab/data/randomize.h"
#include "pelab/data/task.h"

namespace pelab {

// Pads to the longest example (right padding, token 0, target IGNORE). Positions: 0..n−1 for
// the real tokens; with `randomize` (max_position M > 0) a sorted sample of n distinct
// integers from [0, M) drawn from `rng` instead (Ruoss et al. 2023); with `digit_runs` the
// index within runs of digits (pelab/data/position_ids.h), plus an offset per example uniform
// in [0, offset_max] drawn from `rng`. Padded slots carry their index, like any other token.
// This is the one place batches are numbered: training, evaluation and generation (which
// cuts these positions to its prefix) all read them from here.
Batch collate(const std::vector<Example>& examples, const RandomizeConfig* randomize = nullptr,
              Generator* rng = nullptr, const DigitRuns* digit_runs = nullptr);

// A training batch: each example drawn by Task::sample_training in [min_length, max_length]
// (a generated task: its size uniform in the range).
std::vector<Example> sample_examples(const Task& task, int64_t count, int64_t min_length,
                                     int64_t max_length, Generator& rng);

// A training batch of one size, drawn uniformly in [min_length, max_length], every example
// of that size (training.length_sampling: per_batch, Delétang et al.'s draw).
std::vector<Example> sample_examples_of_one_size(const Task& task, int64_t count,
                                                 int64_t min_length, int64_t max_length,
                                                 Generator& rng);

// The fixed evaluation set for one problem size: the same for every scheme and every run
// seed, because it depends only on (task, length, count, eval_seed).
std::vector<Example> evaluation_examples(const Task& task, int64_t length, int64_t count,
                                         uint64_t eval_seed);

}  // namespace pelab
