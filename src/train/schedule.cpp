// Learning-rate schedule: lr·(s+1)/W while s < W, then constant / linear / cosine decay
// towards min_lr over [W, T), min_lr (or lr, if constant) from T on. See schedule.h.
#include "pelab/train/schedule.h"

#include <cmath>
#include <numbers>

#include "pelab/core/error.h"

// The formula is evaluated exactly as the Python reference in
// tools/make_optimizer_fixtures.py (double, left to right, no fused multiply-add), so the
// float it rounds to is the one PyTorch's LambdaLR was given.
#ifdef __clang__  // the same for clang, which ignores GCC's pragma
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

namespace pelab {

LrDecay parse_lr_decay(std::string_view name) {
  if (name == "constant") return LrDecay::constant;
  if (name == "linear") return LrDecay::linear;
  if (name == "cosine") return LrDecay::cosine;
  throw Error(
      fmt::format("unknown learning-rate decay '{}' (valid: constant, linear, cosine)", name));
}

std::string_view to_string(LrDecay decay) {
  switch (decay) {
    case LrDecay::constant:
      return "constant";
    case LrDecay::linear:
      return "linear";
    case LrDecay::cosine:
      return "cosine";
  }
  throw_internal(__FILE__, __LINE__, "unknown LrDecay value");
}

LrSchedule::LrSchedule(const LrScheduleOptions& options) : options_(options) {
  const LrScheduleOptions& o = options_;
  PELAB_CHECK(std::isfinite(o.lr) && o.lr >= 0, "lr schedule: lr must be finite and >= 0, got {}",
              o.lr);
  PELAB_CHECK(o.warmup_steps >= 0, "lr schedule: warmup_steps must be >= 0, got {}",
              o.warmup_steps);
  PELAB_CHECK(o.total_steps >= 1, "lr schedule: total_steps must be >= 1, got {}", o.total_steps);
  PELAB_CHECK(o.total_steps >= o.warmup_steps,
              "lr schedule: total_steps ({}) must be >= warmup_steps ({})", o.total_steps,
              o.warmup_steps);
  PELAB_CHECK(
      o.decay == LrDecay::constant || o.decay == LrDecay::linear || o.decay == LrDecay::cosine,
      "lr schedule: invalid decay value {}", static_cast<int>(o.decay));
  PELAB_CHECK(std::isfinite(o.min_lr) && o.min_lr >= 0 && o.min_lr <= o.lr,
              "lr schedule: min_lr must be in [0, lr = {}], got {}", o.lr, o.min_lr);
}

float LrSchedule::lr_at(int64_t step) const {
  PELAB_CHECK(step >= 0, "lr schedule: step must be >= 0, got {}", step);
  const LrScheduleOptions& o = options_;
  const double s = static_cast<double>(step);
  if (step < o.warmup_steps) return static_cast<float>(o.lr * (s + 1) / o.warmup_steps);
  if (o.decay == LrDecay::constant) return static_cast<float>(o.lr);
  if (step >= o.total_steps) return static_cast<float>(o.min_lr);
  const double progress =
      (s - o.warmup_steps) / static_cast<double>(o.total_steps - o.warmup_steps);
  if (o.decay == LrDecay::linear) {
    return static_cast<float>(o.min_lr + (o.lr - o.min_lr) * (1.0 - progress));
  }
  return static_cast<float>(o.min_lr + (o.lr - o.min_lr) * 0.5 *
                                           (1.0 + std::cos(std::numbers::pi * progress)));
}

}  // namespace pelab
