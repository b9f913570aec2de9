// What a trained model attends to (pelab analyze attention): the weights α of every layer and
// head on chosen inputs, and the average weight by relative distance j − i.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/analysis/encoding.h"
#include "pelab/data/task.h"
#include "pelab/nn/encoder.h"

namespace pelab {

struct AttentionAnalysisOptions {
  int64_t length = 8;     // problem size n of the inputs (from the task's evaluation set)
  int64_t examples = 64;  // inputs averaged in the by-distance curves
  int64_t shown = 0;      // which of them is drawn head by head
  uint64_t eval_seed = 1234;
  // The run's task.position_ids: "digit_runs" numbers the inputs as its evaluation does
  // (each digit's index in its run, no offset); the by-distance curves stay by token index.
  std::string position_ids = "index";
};

struct AttentionAnalysis {
  std::string scheme;
  AttentionAnalysisOptions options;
  int64_t layers = 0, heads = 0, tokens = 0;  // tokens: the longest input's length
  std::vector<std::string> shown_tokens;      // the drawn input, as symbols (its length S)
  std::vector<Matrix> shown;                  // [layer·heads + head]: α [S, S]
  // Mean α[i, i+Δ] over real queries i and inputs, for Δ = distances[k]; per layer and head:
  // by_distance[layer·heads + head][k]. NaN where no two real tokens are that far apart
  // (a causal model's weights at Δ > 0 are 0).
  std::vector<int64_t> distances;
  std::vector<std::vector<double>> by_distance;
};

AttentionAnalysis analyze_attention(const Encoder& model, const Task& task,
                                    const AttentionAnalysisOptions& options);

// attention.json, one heat-map figure per layer (attention_layer<l>: a panel per head) and
// attention_by_distance (a panel per layer, a line per head).
PlotResult write_attention_analysis(const AttentionAnalysis& analysis, const std::string& out_dir);

}  // namespace pelab
