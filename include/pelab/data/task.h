// Toy sequence tasks: seeded generators of (tokens, targets) examples.
//
// Every task states what it reads, what it predicts, which positions are scored and what it
// needs from position (TaskInfo). An example is drawn for a problem size n (`length`); the
// sequence the encoder sees may be longer (separators, appended query tokens), and
// sequence_length(n) says by how much. Evaluation buckets examples by n.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pelab/core/keys.h"
#include "pelab/core/rng.h"

namespace pelab {

inline constexpr int32_t kIgnore = -1;  // a target that is not scored

enum class TaskLayout {
  Tagging,          // one target per input position
  AppendedQueries,  // input, then blank query tokens whose outputs are the answer
  Classification,   // one label, read at one designated position
};
// "tagging", "appended" or "classification": the names `pelab tasks` shows and a dataset
// file's header uses.
const char* to_string(TaskLayout layout);

struct Example {
  std::vector<int32_t> tokens;   // input ids in [0, vocab_in)
  std::vector<int32_t> targets;  // same size; a class in [0, vocab_out) or kIgnore
  int32_t length = 0;            // the problem size n it was drawn for
};

struct TaskInfo {
  std::string name;
  TaskLayout layout = TaskLayout::Tagging;
  std::vector<std::string> input_symbols;   // id → printable symbol (vocab_in = size)
  std::vector<std::string> output_symbols;  // id → printable symbol (vocab_out = size)
  std::string description;                  // input, target, scored positions (one paragraph)
  std::string position_need;  // what the task needs from position, and when a scheme can't
  // Where the task comes from: the paper and, where it follows a published generator, that
  // generator's file and how far it follows it; or that it is pelab's own.
  std::string source;
  // A scored position would see its own answer through bidirectional attention (a language
  // model's next token is the next input): the task needs model.causal: true.
  bool causal_only = false;
  int vocab_in() const { return static_cast<int>(input_symbols.size()); }
  int vocab_out() const { return static_cast<int>(output_symbols.size()); }
};

// A task parameter (task.<name>): its type, default, valid range and a one-line help.
using TaskParam = KeySpec;

struct LmVocabulary;

class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskInfo& info() const = 0;
  // Draws one example of problem size `length` (min_length() ≤ length).
  virtual Example sample(Generator& rng, int length) const = 0;
  // Draws one training example of a size in [min_size, max_size]: a generated task draws
  // the size uniformly, then an example of it; the file task draws among the sizes its
  // training file has there (task.sampling, FileTask).
  virtual Example sample_training(Generator& rng, int64_t min_size, int64_t max_size) const {
    return sample(rng, static_cast<int>(rng.uniform_int(min_size, max_size)));
  }
  virtual int min_length() const { return 1; }
  // The offset (in tokens) the answer must single out, where the task fixes one: shift's s,
  // long_range's D, local_sum's w (the farthest of its offsets); 0 when it fixes none. The
  // representability precondition (pelab/positional/representable.h) reads it: a relative
  // scheme clipped at k <= this offset cannot tell it from the offsets beyond.
  virtual int64_t answer_offset() const { return 0; }
  // Tokens in an example of problem size n.
  virtual int sequence_length(int n) const = 0;

  // The fixed evaluation set of problem size `length`, the same for every scheme and run
  // seed. A generated task draws `count` examples from a generator seeded by (length,
  // eval_seed); a task with examples of its own (the file task) returns those.
  virtual std::vector<Example> evaluation_set(int64_t length, int64_t count,
                                              uint64_t eval_seed) const;

  // The problem sizes a task has examples of, ascending, when it has only some (the file
  // task: its files' sizes; the config loader takes its default lengths from them). Empty for
  // a generated task, which draws any size from min_length() on.
  virtual std::vector<int> train_sizes() const { return {}; }
  virtual std::vector<int> eval_sizes() const { return {}; }
  // For the config loader: "" if training can draw examples in [min_length, max_length]
  // (else why not), and "" if every length can be evaluated.
  virtual std::string check_training_range(int64_t /*min_length*/, int64_t /*max_length*/) const {
    return "";
  }
  virtual std::string check_evaluation_lengths(const std::vector<int64_t>& /*lengths*/) const {
    return "";
  }
  // How a task laid out as lm (pelab/data/lm_layout.h) turns answers into tokens; nullptr for
  // a task in its native layout.
  virtual const LmVocabulary* lm_vocabulary() const { return nullptr; }
};

// The task parameters given, by name; building the task fills in the defaults.
using TaskParams = KeyValues;

// A run's task: its name and parameters, the problem sizes it trains on, and for the file
// task (task.name: file) its two dataset files.
struct TaskConfig {
  std::string name = "copy";
  TaskParams params;
  int64_t min_length = 1;  // training problem sizes n, sampled uniformly in [min, max]
  int64_t max_length = 16;
  std::string train_file;  // file datasets (name: file)
  std::string eval_file;
  // The file task's training draw (kSizeSamplings): "sizes", uniformly over the sizes the
  // training file has in [min, max], then over that size's examples (a generated task's
  // rule); "examples", uniformly over every example in [min, max].
  std::string sampling = "sizes";
  // How examples are laid out (kTaskLayouts): "native", the task's own layout; "lm", the
  // decoder layout of an appended-queries task (pelab/data/lm_layout.h), for a causal model.
  std::string layout = "native";
  // How batches number the tokens (pelab/data/position_ids.h, kPositionIds): "index", their
  // index 0..T-1 (or positional.randomize's sample); "digit_runs", the 1-based index within
  // runs of digits (McLeish et al. 2024's Abacus), plus in training an offset per example
  // uniform in [0, position_offset_max].
  std::string position_ids = "index";
  int64_t position_offset_max = 0;
};
inline const std::vector<std::string> kSizeSamplings = {"sizes", "examples"};
inline const std::vector<std::string> kTaskLayouts = {"native", "lm"};

// What is wrong across a task's parameters that their ranges alone cannot say (a minimum above
// its maximum, probabilities that do not sum to 1): the keys concerned, the first given being
// the one to blame, and the end of the message ("must be >= task.min_digits_a = 5, got 3").
struct TaskParamProblem {
  std::vector<std::string> keys;  // empty: nothing is wrong
  std::string what;
};
// The problem of `resolved` (every parameter of task `name`, each within its range).
TaskParamProblem task_param_problem(const std::string& name, const TaskParams& resolved);

// Builds a task by name. Unknown names and parameters a task does not take are errors that
// list what is valid; a value of the wrong type or outside its range is an error naming the
// parameter and what is valid ("task.shift: must be in [1, 4096], got 5000"), and so is a
// problem across parameters ("task.<first key>: <what>", task_param_problem). The
// file task is not made by name: it needs its files (make_task(const TaskConfig&)).
std::unique_ptr<Task> make_task(const std::string& name, const TaskParams& params = {});
// Builds a run's task: a generated task by name, or the file task from its two files (read
// afresh: a task holds its examples, and nothing is kept between calls), laid out as
// config.layout says.
std::unique_ptr<Task> make_task(const TaskConfig& config);
std::vector<std::string> task_names();
// The parameters a task takes, with their defaults (for --help and docs).
std::vector<TaskParam> task_params(const std::string& name);
// Every task's reference as Markdown, in registry order: what it reads and predicts, its
// layout, parameters, and what it needs from position. `pelab tasks --markdown` prints it;
// it is the "Reference" section of docs/tasks.md, word for word.
std::string task_reference_markdown();

}  // namespace pelab
