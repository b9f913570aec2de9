// Learning-rate schedule: linear warm-up, then constant, linear or cosine decay.
//
// Convention (step s is 0-based: the s-th call of Optimizer::step uses lr_at(s)):
//   s < W            lr·(s + 1)/W           warm-up from 0 — the first step already uses
//                                            lr/W and step W−1 the full lr; no step at 0
//   W ≤ s < T        p = (s − W)/(T − W)     progress in [0, 1): step W uses the full lr
//     constant       lr
//     linear         min_lr + (lr − min_lr)·(1 − p)
//     cosine         min_lr + (lr − min_lr)·½(1 + cos(πp))
//   s ≥ T            min_lr (linear, cosine) or lr (constant): the schedule holds its end
// with W = warmup_steps, T = total_steps. Evaluated in double, rounded once to float.
// tools/make_optimizer_fixtures.py implements the same formula (for LambdaLR).
#pragma once

#include <cstdint>
#include <string_view>

namespace pelab {

enum class LrDecay { constant, linear, cosine };

// "constant" | "linear" | "cosine"; anything else is a pelab::Error listing these.
LrDecay parse_lr_decay(std::string_view name);
std::string_view to_string(LrDecay decay);

struct LrScheduleOptions {
  double lr = 1e-3;          // the peak (base) learning rate, ≥ 0
  int64_t warmup_steps = 0;  // W ≥ 0
  int64_t total_steps = 1;   // T ≥ max(W, 1)
  LrDecay decay = LrDecay::constant;
  double min_lr = 0.0;  // 0 ≤ min_lr ≤ lr; the end of linear / cosine decay
};

class LrSchedule {
 public:
  // Validates the options (pelab::Error naming the offending one).
  explicit LrSchedule(const LrScheduleOptions& options);
  // The learning rate of 0-based step `step` (≥ 0).
  float lr_at(int64_t step) const;
  const LrScheduleOptions& options() const { return options_; }

 private:
  LrScheduleOptions options_;
};

}  // namespace pelab
