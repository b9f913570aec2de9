#include "pelab/run/decoding.h"

#include <algorithm>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"

namespace pelab {

int64_t argmax(const float* row, int64_t V) {
  int64_t best = 0;
  for (int64_t c = 1; c < V; ++c)
    if (row[c] > row[best]) best = c;
  return best;
}

IntTensor teacher_forced_predictions(const Tensor& logits, const Batch& batch) {
  const int64_t B = batch.batch_size(), T = batch.length(), V = logits.size(-1);
  PELAB_ASSERT(logits.numel() == B * T * V);
  const float* z = logits.data();
  IntTensor out({B, T}, kNoPrediction);
  for (int64_t k = 0; k < B * T; ++k)
    if (batch.targets.values[k] != kIgnore)
      out.values[k] = static_cast<int32_t>(argmax(z + k * V, V));
  return out;
}

namespace {

// One example's answer slots: the scored positions, which the lm layout puts last.
struct Slots {
  int64_t first = 0;  // the prompt's last token, whose output is slot 0
  int64_t count = 0;  // m + 1
};

std::vector<Slots> answer_slots(const Batch& batch) {
  const int64_t B = batch.batch_size(), T = batch.length();
  std::vector<Slots> slots(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    int64_t first = -1, count = 0;
    for (int64_t t = 0; t < T; ++t)
      if (batch.targets.values[b * T + t] != kIgnore) {
        if (first < 0) first = t;
        ++count;
      }
    PELAB_ASSERT(first >= 0 && first + count <= T);
    slots[b] = {first, count};
  }
  return slots;
}

// The batch of step s: each example of `active` with its prompt and its s generated tokens
// (`tokens` holds them in place of the gold answer), right-padded; positions from the full
// batch, cut to the prefix.
Batch step_batch(const Batch& full, const std::vector<int32_t>& tokens,
                 const std::vector<int64_t>& active, const std::vector<Slots>& slots, int64_t s) {
  const int64_t T = full.length(), A = static_cast<int64_t>(active.size());
  int64_t L = 0;
  for (int64_t b : active) L = std::max(L, slots[b].first + 1 + s);
  Batch step = Batch::padding(A, L);
  for (int64_t i = 0; i < A; ++i) {
    const int64_t b = active[i], real = slots[b].first + 1 + s;
    for (int64_t t = 0; t < L; ++t) {
      step.positions.values[i * L + t] = full.positions.values[b * T + t];
      if (t >= real) continue;
      step.tokens.values[i * L + t] = tokens[b * T + t];
      step.key_mask.values[i * L + t] = 1;
    }
  }
  return step;
}

}  // namespace

IntTensor greedy_predictions(const Forward& forward, const Batch& batch,
                             const LmVocabulary& vocabulary) {
  const int64_t B = batch.batch_size(), T = batch.length();
  const std::vector<Slots> slots = answer_slots(batch);
  IntTensor out({B, T}, kNoPrediction);
  std::vector<int32_t> tokens = batch.tokens.values;  // generated tokens replace the answer
  std::vector<int64_t> active(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) active[b] = b;
  for (int64_t s = 0; !active.empty(); ++s) {
    const Batch step = step_batch(batch, tokens, active, slots, s);
    const Tensor logits = forward(step);  // [A, L, V]
    const int64_t L = step.length(), V = logits.size(-1);
    PELAB_ASSERT(logits.numel() == static_cast<int64_t>(active.size()) * L * V);
    std::vector<int64_t> still;
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t b = active[i], at = slots[b].first + s;  // slot s is read at token `at`
      const int32_t id = static_cast<int32_t>(argmax(logits.data() + (i * L + at) * V, V));
      out.values[b * T + at] = id;
      if (id == vocabulary.end || s + 1 == slots[b].count) continue;  // this example is done
      tokens[b * T + at + 1] = vocabulary.input_of_output.at(id);
      still.push_back(b);
    }
    active = std::move(still);
  }
  return out;
}

IntTensor greedy_predictions(const Encoder& model, const Batch& batch,
                             const LmVocabulary& vocabulary) {
  NoGradGuard no_grad;
  return greedy_predictions([&](const Batch& step) { return model.forward(step).logits; }, batch,
                            vocabulary);
}

}  // namespace pelab
