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

// representability_problem for the run's scheme and reach: "" when representable.
std::string representability_problem(const ExperimentConfig& config);

}  // namespace pelab
