// The task table: name → parameters and factory.
//
// Adding a task means its file under src/data/tasks/ (defining `TaskDef <id>_task_def()`)
// plus one line in PELAB_TASKS below. The table is explicit rather than self-registering
// because pelab_lib is a static library: a task file nothing refers to would be dropped by the
// linker, and its registration with it.
#include <algorithm>
#include <set>

#include "data/task_base.h"
#include "pelab/core/strings.h"
#include "pelab/data/file_dataset.h"
#include "pelab/data/lm_layout.h"

// One line per task, in the order task_names() lists them. pelab's own tasks come first, then
// Delétang et al. 2023's as their generators draw them, in their layout (the input, then
// blanks: BlankAnswerTask), by the paper's level: regular, deterministic context-free,
// context-sensitive. Where pelab already used a name for its own variant, theirs takes the
// suffix _deletang; their parity_check and cycle_navigation are pelab's parity and
// cycle_navigation exactly, so they are not repeated.
#define PELAB_TASKS(X)           \
  X(copy)                        \
  X(reverse)                     \
  X(duplicate)                   \
  X(odds_first)                  \
  X(sort)                        \
  X(shift)                       \
  X(local_sum)                   \
  X(missing_duplicate)           \
  X(parity)                      \
  X(even_pairs)                  \
  X(cycle_navigation)            \
  X(modular_arithmetic)          \
  X(binary_addition)             \
  X(associative_recall)          \
  X(long_range)                  \
  X(even_pairs_deletang)         \
  X(modular_arithmetic_deletang) \
  X(modular_arithmetic_brackets) \
  X(reverse_string)              \
  X(solve_equation)              \
  X(stack_manipulation)          \
  X(binary_addition_deletang)    \
  X(binary_multiplication)       \
  X(bucket_sort)                 \
  X(compute_sqrt)                \
  X(duplicate_string)            \
  X(missing_duplicate_string)    \
  X(odds_first_deletang)

namespace pelab {

namespace tasks {
#define PELAB_DECLARE_TASK_DEF(id) TaskDef id##_task_def();
PELAB_TASKS(PELAB_DECLARE_TASK_DEF)
#undef PELAB_DECLARE_TASK_DEF
}  // namespace tasks

namespace {

using tasks::TaskDef;

const std::vector<TaskDef>& task_table() {
  static const std::vector<TaskDef> table = [] {
#define PELAB_TASK_DEF_ENTRY(id) tasks::id##_task_def(),
    std::vector<TaskDef> defs = {PELAB_TASKS(PELAB_TASK_DEF_ENTRY)};
#undef PELAB_TASK_DEF_ENTRY
    std::set<std::string> seen;
    for (const TaskDef& def : defs) PELAB_ASSERT(seen.insert(def.name).second);
    return defs;
  }();
  return table;
}

const TaskDef& find_task(const std::string& name) {
  const std::vector<TaskDef>& table = task_table();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const TaskDef& def) { return def.name == name; });
  PELAB_CHECK(it != table.end(), "unknown task '{}'; valid tasks: {} (or 'file' for dataset files)",
              name, join(task_names()));
  return *it;
}

}  // namespace

const char* to_string(TaskLayout layout) {
  switch (layout) {
    case TaskLayout::Tagging:
      return "tagging";
    case TaskLayout::AppendedQueries:
      return "appended";
    case TaskLayout::Classification:
      return "classification";
  }
  return "unknown";
}

std::unique_ptr<Task> make_task(const std::string& name, const TaskParams& params) {
  // 'file' is not a generated task (not in the table or task_names()): it is made from its
  // files, by make_task(const TaskConfig&).
  PELAB_CHECK(name != kFileTaskName || params.empty(), "task 'file' takes no parameters; got '{}'",
              params.empty() ? "" : params.all().begin()->first);
  PELAB_CHECK(name != kFileTaskName,
              "task 'file' reads its examples from task.train_file and task.eval_file: load it "
              "from an experiment config (task.name: file)");
  const TaskDef& def = find_task(name);
  std::vector<std::string> valid;
  for (const TaskParam& p : def.params) valid.push_back(p.name);
  for (const auto& [key, value] : params.all()) {
    const bool known = find_key(def.params, key) != nullptr;
    PELAB_CHECK(known || !valid.empty(), "task '{}' takes no parameters; got '{}'", name, key);
    PELAB_CHECK(known, "task '{}' has no parameter '{}'; valid parameters: {}", name, key,
                join(valid));
  }
  const TaskParams resolved = with_defaults("task", def.params, params);
  std::unique_ptr<Task> task = def.make(resolved);
  PELAB_ASSERT(task && task->info().name == name);
  return task;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskDef& def : task_table()) names.push_back(def.name);
  return names;
}

std::vector<TaskParam> task_params(const std::string& name) {
  if (name == kFileTaskName) return {};  // takes task.train_file and task.eval_file instead
  return find_task(name).params;
}

namespace {
std::unique_ptr<Task> make_native_task(const TaskConfig& config) {
  if (config.name != kFileTaskName) return make_task(config.name, config.params);
  PELAB_CHECK(config.params.empty(), "task 'file' takes no parameters; got '{}'",
              config.params.empty() ? "" : config.params.all().begin()->first);
  return load_file_task(config.train_file, config.eval_file, config.train_file, config.eval_file,
                        config.sampling);
}
}  // namespace

std::unique_ptr<Task> make_task(const TaskConfig& config) {
  PELAB_CHECK(config.layout == "native" || config.layout == "lm",
              "task.layout: '{}' is not valid (valid: {})", config.layout, join(kTaskLayouts));
  std::unique_ptr<Task> task = make_native_task(config);
  if (config.layout == "lm") return make_lm_task(std::move(task));
  return task;
}

}  // namespace pelab
