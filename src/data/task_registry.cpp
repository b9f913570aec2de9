// The task table: name → parameters and factory, in the order task_names() lists them.
// pelab's own tasks come first, then Delétang et al. 2023's as their generators draw them, in
// their layout (the input, then blanks: BlankAnswerTask), by the paper's level: regular,
// deterministic context-free, context-sensitive. Where pelab already used a name for its own
// variant, theirs takes the suffix _deletang; their parity_check and cycle_navigation are
// pelab's parity and cycle_navigation exactly, so they are not repeated. Then the tasks of
// other papers: Liu et al. 2023's flip-flop language (a causal language model's task) and the
// reversed decimal addition of Zhou et al. 2024 and McLeish et al. 2024 (for the lm layout).
//
// Adding a task means its file under src/data/tasks/ (defining `TaskDef <name>_task_def()`)
// plus one line here: its declaration and its entry (as src/positional/registry.cpp lists the
// schemes). The table is explicit rather than self-registering because pelab_core is a static
// library: a task file nothing refers to would be dropped by the linker, and its registration
// with it.
#include <algorithm>
#include <set>

#include "data/task_base.h"
#include "pelab/core/strings.h"
#include "pelab/data/file_dataset.h"
#include "pelab/data/lm_layout.h"

namespace pelab {

namespace tasks {
TaskDef copy_task_def();
TaskDef reverse_task_def();
TaskDef duplicate_task_def();
TaskDef odds_first_task_def();
TaskDef sort_task_def();
TaskDef shift_task_def();
TaskDef local_sum_task_def();
TaskDef missing_duplicate_task_def();
TaskDef parity_task_def();
TaskDef even_pairs_task_def();
TaskDef cycle_navigation_task_def();
TaskDef modular_arithmetic_task_def();
TaskDef binary_addition_task_def();
TaskDef associative_recall_task_def();
TaskDef long_range_task_def();
TaskDef even_pairs_deletang_task_def();
TaskDef modular_arithmetic_deletang_task_def();
TaskDef modular_arithmetic_brackets_task_def();
TaskDef reverse_string_task_def();
TaskDef solve_equation_task_def();
TaskDef stack_manipulation_task_def();
TaskDef binary_addition_deletang_task_def();
TaskDef binary_multiplication_task_def();
TaskDef bucket_sort_task_def();
TaskDef compute_sqrt_task_def();
TaskDef duplicate_string_task_def();
TaskDef missing_duplicate_string_task_def();
TaskDef odds_first_deletang_task_def();
TaskDef flip_flop_task_def();
TaskDef decimal_addition_task_def();
}  // namespace tasks

namespace {

using tasks::TaskDef;

const std::vector<TaskDef>& task_table() {
  static const std::vector<TaskDef> table = [] {
    std::vector<TaskDef> defs = {
        tasks::copy_task_def(),
        tasks::reverse_task_def(),
        tasks::duplicate_task_def(),
        tasks::odds_first_task_def(),
        tasks::sort_task_def(),
        tasks::shift_task_def(),
        tasks::local_sum_task_def(),
        tasks::missing_duplicate_task_def(),
        tasks::parity_task_def(),
        tasks::even_pairs_task_def(),
        tasks::cycle_navigation_task_def(),
        tasks::modular_arithmetic_task_def(),
        tasks::binary_addition_task_def(),
        tasks::associative_recall_task_def(),
        tasks::long_range_task_def(),
        tasks::even_pairs_deletang_task_def(),
        tasks::modular_arithmetic_deletang_task_def(),
        tasks::modular_arithmetic_brackets_task_def(),
        tasks::reverse_string_task_def(),
        tasks::solve_equation_task_def(),
        tasks::stack_manipulation_task_def(),
        tasks::binary_addition_deletang_task_def(),
        tasks::binary_multiplication_task_def(),
        tasks::bucket_sort_task_def(),
        tasks::compute_sqrt_task_def(),
        tasks::duplicate_string_task_def(),
        tasks::missing_duplicate_string_task_def(),
        tasks::odds_first_deletang_task_def(),
        tasks::flip_flop_task_def(),
        tasks::decimal_addition_task_def(),
    };
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
  if (def.check) {
    const TaskParamProblem problem = def.check(resolved);
    PELAB_CHECK(problem.keys.empty(), "task.{}: {}", problem.keys.front(), problem.what);
  }
  std::unique_ptr<Task> task = def.make(resolved);
  PELAB_ASSERT(task && task->info().name == name);
  return task;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskDef& def : task_table()) names.push_back(def.name);
  return names;
}

TaskParamProblem task_param_problem(const std::string& name, const TaskParams& resolved) {
  const TaskDef& def = find_task(name);
  return def.check ? def.check(resolved) : TaskParamProblem{};
}

std::vector<TaskParam> task_params(const std::string& name) {
  if (name == kFileTaskName) return {};  // takes task.train_file and task.eval_file instead
  return find_task(name).params;
}

std::string task_reference_markdown() {
  std::string out;
  for (const std::string& name : task_names()) {
    const std::unique_ptr<Task> task = make_task(name);
    const TaskInfo& info = task->info();
    out += fmt::format("### {}\n\n", name);
    out += fmt::format("{}\n\n", info.description);
    out += fmt::format("*Position:* {}\n\n", info.position_need);
    out += fmt::format("*Source:* {}.\n\n", info.source);
    std::string params;
    for (const TaskParam& p : task_params(name))
      params += fmt::format("{}`{}` = {} ({}, in {})", params.empty() ? "" : "; ", p.name,
                            key_value_text(*p.default_value), p.help, key_valid_text(p));
    const int n = std::max(task->min_length(), 8);
    out += fmt::format(
        "*Layout:* {}{}; {} input and {} output symbols; problem size n = {} gives {} tokens. "
        "*Parameters:* {}.\n\n",
        to_string(info.layout), info.causal_only ? " (needs model.causal: true)" : "",
        info.vocab_in(), info.vocab_out(), n, task->sequence_length(n),
        params.empty() ? "none" : params);
  }
  return out;
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
