// A task's examples written as text in the data tests: inputs as space-separated printable
// symbols, targets printed back the same way ('.' where a position is not scored).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../src/data/task_base.h"
#include "data/symbols.h"
#include "pelab/data/task.h"

namespace pelab::testing {

// Space-separated printable symbols → the task's input ids.
inline std::vector<int32_t> encode(const Task& task, const std::string& text) {
  return ids_of(task.info().input_symbols, text);
}

// Targets → printable output symbols, '.' for kIgnore.
inline std::string render_targets(const Task& task, const Example& example) {
  std::string out;
  for (int32_t t : example.targets) {
    if (!out.empty()) out += ' ';
    out += t == kIgnore ? "." : task.info().output_symbols.at(t);
  }
  return out;
}

// The targets the task gives for `text` at problem size n, printed as render_targets does.
inline std::string targets_of(const Task& task, const std::string& text, int n) {
  return render_targets(task, tasks::label(task, encode(task, text), n));
}

inline bool same(const Example& a, const Example& b) {
  return a.tokens == b.tokens && a.targets == b.targets && a.length == b.length;
}

}  // namespace pelab::testing
