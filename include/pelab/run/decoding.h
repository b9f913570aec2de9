// What a model predicts at the scored positions of a batch: the argmax of one forward pass
// (teacher forcing; every native layout), or, for the lm layout (pelab/data/lm_layout.h),
// what greedy generation produces, as Kazemnejad et al. 2023 evaluate a decoder.
#pragma once

#include <cstdint>
#include <functional>

#include "pelab/data/batch.h"
#include "pelab/data/lm_layout.h"
#include "pelab/nn/encoder.h"

namespace pelab {

// No prediction at a position: one that is not scored, or an answer slot after generation
// stopped. Never a class, so it never equals a target.
inline constexpr int32_t kNoPrediction = -1;

// The first index of the largest of row[0..V) (the argmax every score uses).
int64_t argmax(const float* row, int64_t V);

// [B, T]: the argmax of `logits` ([B, T, V]) at every scored position of `batch`;
// kNoPrediction elsewhere.
IntTensor teacher_forced_predictions(const Tensor& logits, const Batch& batch);

// One forward pass: the logits [B, L, V_out] of a batch of L tokens.
using Forward = std::function<Tensor(const Batch&)>;

// Greedy generation over lm examples. `batch` holds them as collate lays them out, full length
// (tokens, positions, key mask, teacher-forced targets); an example's answer slots are its
// scored positions (the last token of the prompt, then each answer token: m + 1 slots), and
// its prompt is everything up to and including the first of them.
//
// Step s (s = 0, 1, ...) feeds every example still generating its prompt and the s tokens it
// generated so far (each an output id fed back as its input id), one forward pass for all of
// them, and reads the argmax at its last token: the token of slot s. An example stops once it
// produced <end> or filled its m + 1 slots. Positions are the batch's own, cut to the prefix:
// drawn once per example for the full sequence as teacher forcing draws them, so randomized
// positions mean the same in both. Examples whose prompts or answers differ in length (a file
// task's) are padded on the right.
//
// Returns [B, T]: at each answer slot the output id generated for it, kNoPrediction at a slot
// after <end> and at every position that is not scored.
IntTensor greedy_predictions(const Forward& forward, const Batch& batch,
                             const LmVocabulary& vocabulary);
// The same with the model's forward pass (no dropout, no gradients).
IntTensor greedy_predictions(const Encoder& model, const Batch& batch,
                             const LmVocabulary& vocabulary);

}  // namespace pelab
