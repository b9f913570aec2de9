// The lm layout (task.layout: lm): a native appended-queries example re-laid out for a
// decoder, exactly, for copy and reverse; the vocabulary and the output → input map; which
// tasks can take it; and the task decorator drawing the native task's examples.
#include "pelab/data/lm_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include "../../src/data/task_base.h"
#include "data/symbols.h"
#include "error_message.h"
#include "pelab/core/error.h"
#include "pelab/core/strings.h"
#include "pelab/data/task.h"

namespace pelab {
namespace {

using testing::error_message;
using testing::ids_of;

// Ids → printable symbols of `names`, '.' for kIgnore.
std::string render(const std::vector<std::string>& names, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + (id == kIgnore ? "." : names.at(id));
  return out;
}

std::unique_ptr<Task> lm_task(const std::string& name) {
  TaskConfig config;
  config.name = name;
  config.layout = "lm";
  return make_task(config);
}

// The native example of `tokens` (printable) at size n, and its lm layout.
struct Laid {
  Example native, lm;
};
Laid lay_out(const std::string& task_name, const std::string& tokens, int n) {
  const std::unique_ptr<Task> native = make_task(task_name);
  Laid out;
  out.native = tasks::label(*native, ids_of(native->info().input_symbols, tokens), n);
  out.lm = to_lm_example(out.native, lm_vocabulary(native->info()));
  return out;
}

TEST(LmLayout, CopyIsLaidOutForADecoder) {
  const Laid e = lay_out("copy", "2 0 3 | ? ? ?", 3);
  const std::unique_ptr<Task> lm = lm_task("copy");
  const TaskInfo& info = lm->info();
  EXPECT_EQ(render(info.output_symbols, e.native.targets), ". . . . 2 0 3");
  EXPECT_EQ(render(info.input_symbols, e.lm.tokens), "2 0 3 | 2 0 3");
  EXPECT_EQ(render(info.output_symbols, e.lm.targets), ". . . 2 0 3 <end>");
  EXPECT_EQ(e.lm.length, 3);
  EXPECT_EQ(e.lm.tokens.size(), e.native.tokens.size());  // n + 1 + m either way
}

TEST(LmLayout, ReverseIsLaidOutForADecoder) {
  const Laid e = lay_out("reverse", "2 0 3 1 | ? ? ? ?", 4);
  const std::unique_ptr<Task> lm = lm_task("reverse");
  const TaskInfo& info = lm->info();
  EXPECT_EQ(render(info.input_symbols, e.lm.tokens), "2 0 3 1 | 1 3 0 2");
  EXPECT_EQ(render(info.output_symbols, e.lm.targets), ". . . . 1 3 0 2 <end>");
  // As ids: the fed-back answer is made of input ids, the targets of output ids.
  EXPECT_EQ(e.lm.tokens, (std::vector<int32_t>{2, 0, 3, 1, 8, 1, 3, 0, 2}));
  EXPECT_EQ(e.lm.targets, (std::vector<int32_t>{-1, -1, -1, -1, 1, 3, 0, 2, 8}));
}

TEST(LmLayout, VocabularyGainsEndAndMapsOutputsToInputsByName) {
  const std::unique_ptr<Task> native = make_task("copy");
  const std::unique_ptr<Task> lm = lm_task("copy");
  EXPECT_EQ(lm->info().input_symbols, native->info().input_symbols);  // '?' stays, unused
  EXPECT_EQ(lm->info().vocab_out(), native->info().vocab_out() + 1);
  EXPECT_EQ(lm->info().output_symbols.back(), "<end>");
  const LmVocabulary* v = lm->lm_vocabulary();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->end, 8);
  EXPECT_EQ(v->input_of_output, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(native->lm_vocabulary(), nullptr);

  // By name, not by id: outputs listed in another order than the inputs.
  TaskInfo info;
  info.name = "mine";
  info.layout = TaskLayout::AppendedQueries;
  info.input_symbols = {"a", "b", "c", "|", "?"};
  info.output_symbols = {"c", "a"};
  const LmVocabulary mapped = lm_vocabulary(info);
  EXPECT_EQ(mapped.input_of_output, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(mapped.end, 2);
  Example e;
  e.length = 2;
  e.tokens = ids_of(info.input_symbols, "b c | ? ?");
  e.targets = {kIgnore, kIgnore, kIgnore, 1, 0};  // the answer "a c"
  const Example lm_example = to_lm_example(e, mapped);
  EXPECT_EQ(render(info.input_symbols, lm_example.tokens), "b c | a c");
  EXPECT_EQ(lm_example.targets, (std::vector<int32_t>{kIgnore, kIgnore, 1, 0, 2}));
}

// The tasks the lm layout takes, in registry order, as its messages list them; copy and
// binary_addition among them (a control that the list is not empty by mistake).
std::string lm_tasks() {
  std::vector<std::string> names;
  for (const std::string& name : task_names())
    if (lm_layout_problem(make_task(name)->info()).empty()) names.push_back(name);
  EXPECT_NE(std::find(names.begin(), names.end(), "copy"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "binary_addition"), names.end());
  return join(names);
}

TEST(LmLayout, OnlyAppendedQueriesTasksWhoseOutputsAreInputs) {
  EXPECT_EQ(lm_layout_problem(make_task("copy")->info()), "");
  EXPECT_EQ(lm_layout_problem(make_task("binary_addition")->info()), "");
  // The message lists every task the layout takes, from the registry: a new appended task
  // joins it without an edit here.
  EXPECT_EQ(lm_layout_problem(make_task("parity")->info()),
            "'lm' is only for tasks whose examples are laid out appended (" + lm_tasks() +
                ", or task 'file' with appended examples); task 'parity' is classification "
                "(valid for it: native)");
  EXPECT_EQ(error_message([] { lm_task("shift"); }),
            "task.layout: 'lm' is only for tasks whose examples are laid out appended (" +
                lm_tasks() +
                ", or task 'file' with appended examples); task 'shift' is tagging (valid for "
                "it: native)");

  TaskInfo info;
  info.name = "file";
  info.layout = TaskLayout::AppendedQueries;
  info.input_symbols = {"a", "b", "|", "?"};
  info.output_symbols = {"a", "even"};
  EXPECT_EQ(lm_layout_problem(info),
            "'lm' feeds the answer back as input, but the output symbol 'even' of task 'file' is "
            "not one of its input symbols (valid for it: native)");
  EXPECT_EQ(error_message([&] { lm_vocabulary(info); }),
            "task.layout: 'lm' feeds the answer back as input, but the output symbol 'even' of "
            "task 'file' is not one of its input symbols (valid for it: native)");
  info.input_symbols.push_back("<end>");
  info.output_symbols = {"a", "<end>"};
  EXPECT_EQ(lm_layout_problem(info),
            "'lm' adds the output symbol '<end>', which task 'file' has already (valid for it: "
            "native)");
}

TEST(LmLayout, AnExampleThatIsNotAppendedQueriesIsRefused) {
  const LmVocabulary v = lm_vocabulary(make_task("copy")->info());
  Example e;
  e.length = 2;
  e.tokens = {0, 1, 8, 9, 9};
  e.targets = {kIgnore, 3, kIgnore, 0, 1};  // a scored position inside the prompt
  EXPECT_EQ(error_message([&] { to_lm_example(e, v); }),
            "the lm layout needs an appended-queries example: a prompt, then the scored answer "
            "positions last (an example of size 2 is not one)");
  e.targets = {kIgnore, kIgnore, kIgnore, kIgnore, kIgnore};  // nothing scored
  EXPECT_NE(error_message([&] { to_lm_example(e, v); }), "(no pelab::Error thrown)");
}

TEST(LmLayout, TheTaskDrawsTheNativeExamplesLaidOut) {
  for (const std::string name : {"copy", "reverse", "duplicate", "binary_addition"}) {
    SCOPED_TRACE(name);
    const std::unique_ptr<Task> native = make_task(name);
    const std::unique_ptr<Task> lm = lm_task(name);
    const LmVocabulary v = lm_vocabulary(native->info());
    EXPECT_EQ(lm->sequence_length(7), native->sequence_length(7));
    EXPECT_EQ(lm->min_length(), native->min_length());
    Generator a(11), b(11);
    for (int i = 0; i < 20; ++i) {
      const Example from_native = to_lm_example(native->sample_training(a, 1, 9), v);
      const Example from_lm = lm->sample_training(b, 1, 9);
      EXPECT_EQ(from_lm.tokens, from_native.tokens);
      EXPECT_EQ(from_lm.targets, from_native.targets);
      EXPECT_EQ(from_lm.length, from_native.length);
    }
    const std::vector<Example> native_set = native->evaluation_set(6, 5, 1234);
    const std::vector<Example> lm_set = lm->evaluation_set(6, 5, 1234);
    ASSERT_EQ(lm_set.size(), native_set.size());
    for (size_t i = 0; i < lm_set.size(); ++i)
      EXPECT_EQ(lm_set[i].tokens, to_lm_example(native_set[i], v).tokens);
  }
}

}  // namespace
}  // namespace pelab
