#include "pelab/report/representable.h"

#include <algorithm>

#include "pelab/data/task.h"

namespace pelab {

PositionReach position_reach(const ExperimentConfig& config) {
  const std::unique_ptr<Task> task = make_task(config.task);
  PositionReach reach;
  reach.answer_offset = task->answer_offset();
  const int64_t randomized = config.randomize.max_position;
  const auto longest = [&](int64_t size) -> int64_t {
    return task->sequence_length(static_cast<int>(size)) - 1;
  };
  reach.longest_training_distance =
      randomized > 0 ? randomized - 1 : longest(config.task.max_length);
  const auto& lengths = config.evaluation.lengths;
  const int64_t evaluated =
      lengths.empty() ? 0 : longest(*std::max_element(lengths.begin(), lengths.end()));
  reach.longest_evaluation_distance =
      randomized > 0 && config.randomize.at_eval ? randomized - 1 : evaluated;
  return reach;
}

std::string representability_problem(const ExperimentConfig& config) {
  return representability_problem(config.model.positional, position_reach(config));
}

std::string representability_problem_in_distribution(const ExperimentConfig& config) {
  PositionReach reach = position_reach(config);
  reach.longest_evaluation_distance = reach.longest_training_distance;
  return representability_problem(config.model.positional, reach);
}

}  // namespace pelab
