// The representability precondition of a run (pelab/positional/representable.h) from its
// config: what its task's answer needs and what distances its training and its evaluation
// reach. Compare, the suite's table and the claims all judge a run's settings with it, so a
// run that cannot represent its task at its settings is never read as the scheme failing.
#pragma once

#include <string>

#include "pelab/config/experiment.h"
#include "pelab/positional/representable.h"

namespace pelab {

// The distances of a run: training's longest is that of its longest training sequence
// (sequence_length(task.max_length) − 1), or M − 1 under positional.randomize (positions are
// drawn from [0, M)); evaluation's likewise at the longest evaluated length (M − 1 when
// randomize.at_eval). The answer's offset is the task's (Task::answer_offset).
PositionReach position_reach(const ExperimentConfig& config);

// representability_problem for the run's scheme and reach: "" when representable over every
// evaluated length.
std::string representability_problem(const ExperimentConfig& config);
// The same for the results in distribution only (evaluation within the training distances:
// no untrained row or bucket is used, so only the offset condition can fail). A claim that
// judges in-distribution accuracy reads this one; one that judges beyond training, the other.
std::string representability_problem_in_distribution(const ExperimentConfig& config);

}  // namespace pelab
