// Position by position (pelab analyze positions; claims C4 and C16): how often training showed
// each position, how well a trained model does at each position inside and beyond the trained
// lengths, and whether its absolute encoding shares a subspace with its token embeddings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pelab/config/experiment.h"
#include "pelab/data/task.h"
#include "pelab/nn/encoder.h"
#include "pelab/report/plot.h"

namespace pelab {

// How often position p held a real token (`present`) and a scored target (`scored`) over all
// of a run's training batches, replayed exactly (TrainingStream).
struct PositionCount {
  int64_t position = 0;
  int64_t present = 0;
  int64_t scored = 0;
};
// Replays the first `steps` training batches exactly: a run that training.stop_when ended
// took fewer than training.steps.
std::vector<PositionCount> training_position_counts(const ExperimentConfig& config,
                                                    const Task& task, int64_t steps);

// C16. Energy shares, each beside what a random subspace of the same dimension would hold.
struct SubspaceOverlap {
  int64_t width = 0;          // d
  int64_t token_rank = 0;     // dimension of span{s_emb·E[v]}
  int64_t position_rank = 0;  // principal directions holding `energy` of P's energy
  double energy = 0.9;
  double position_in_tokens = 0;         // ‖P·Q_tok‖² / ‖P‖²
  double position_in_tokens_chance = 0;  // token_rank / d
  double tokens_in_position = 0;         // ‖E·Q_pos‖² / ‖E‖²
  double tokens_in_position_chance = 0;  // position_rank / d
  // P's principal directions: position_rank orthonormal rows of width d.
  std::vector<std::vector<double>> position_basis;
};
// For schemes that add an absolute encoding (not concat: there the subspaces are disjoint by
// construction); nullopt otherwise. `centred`: P's mean over positions is subtracted first, so
// the part every position shares (which acts like content) does not dominate PᵀP.
std::optional<SubspaceOverlap> subspace_overlap(const Encoder& model, int64_t positions,
                                                double energy = 0.9, bool centred = false);

struct PositionRow {
  int64_t length = 0;    // problem size n
  int64_t position = 0;  // token index
  int64_t scored = 0;    // scored targets at this position in the evaluation set
  double accuracy = 0;
  double loss = 0;             // mean cross-entropy
  int64_t trained_scored = 0;  // how often training scored this position
};

struct PositionsAnalysis {
  std::string scheme;
  int64_t train_min_length = 0, train_max_length = 0;
  std::vector<PositionCount> counts;
  std::vector<PositionRow> rows;
  std::optional<SubspaceOverlap> overlap;
};

// Evaluates at `lengths` (problem sizes; default the run's evaluation lengths), beside the
// counts of the `steps` training steps the run took.
PositionsAnalysis analyze_positions(const Encoder& model, const Task& task,
                                    const ExperimentConfig& config,
                                    const std::vector<int64_t>& lengths, int64_t steps);

// positions.json, positions.csv and the figure positions (accuracy and loss by position per
// length, with the training counts).
PlotResult write_positions_analysis(const PositionsAnalysis& analysis, const std::string& out_dir);

}  // namespace pelab
