// The language-model layout (task.layout: lm), as Kazemnejad et al. 2023 train a decoder: the
// model reads the input, the separator, then the answer itself, and learns to predict each
// next answer token and an end token (teacher forcing; the loss covers the answer only).
//
//              native (appended queries)            lm
//   tokens     x_1 .. x_n  |    ?   ..  ?            x_1 .. x_n  |    y_1 .. y_m
//   targets     ·  ..  ·   ·   y_1  ..  y_m           ·  ..  ·   y_1  y_2 .. <end>
//
// (· = kIgnore.) The sequence has as many tokens as the native one, so batching, padding and
// positions are unchanged. The answer fed back is made of input ids: each output symbol is
// the input symbol of the same printable name. The output vocabulary gains `<end>`, its last
// id; the native query token '?' is no longer used. Only for a task whose native layout is
// AppendedQueries and whose output symbols are all input symbols.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pelab/data/task.h"

namespace pelab {

inline constexpr const char* kEndSymbol = "<end>";

// How a native task's answers become lm tokens.
struct LmVocabulary {
  std::vector<int32_t> input_of_output;  // native output id → the input id of the same name
  int32_t end = 0;                       // <end>'s output id (the native vocab_out)
};

// "" if a task of `native` info can be laid out as lm; else why not, as the text that follows
// "task.layout: " in a config error ("'lm' is only for ...; valid for task 'parity': native").
std::string lm_layout_problem(const TaskInfo& native);
// The lm vocabulary of a native task; throws lm_layout_problem's message if it has none.
LmVocabulary lm_vocabulary(const TaskInfo& native);
// The lm example of a native AppendedQueries example: its scored positions must be the last m
// (m ≥ 1), the answer y_1..y_m; everything before them is the prompt.
Example to_lm_example(const Example& native, const LmVocabulary& vocabulary);

// The lm layout of `native`: every example it draws (training, evaluation, validation) is
// to_lm_example of the example the native task draws, from the same random numbers, so a run's
// examples differ from its native run's only in layout. Throws lm_layout_problem's message.
std::unique_ptr<Task> make_lm_task(std::unique_ptr<Task> native);
// Its Task::lm_vocabulary() is the vocabulary it lays answers out with.

}  // namespace pelab
