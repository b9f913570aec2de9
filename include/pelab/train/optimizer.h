// Optimizers: SGD (momentum, Nesterov), Adam (coupled L2 decay) and AdamW (decoupled decay),
// each exactly torch.optim's single-tensor implementation (PyTorch 1.13), plus global
// gradient-norm clipping (torch.nn.utils.clip_grad_norm_).
//
// Exactness: updates run in float32 with PyTorch's operation order and rounding — derived
// constants (1 − β₁, lr / bias_correction, 1 − lr·wd) are formed in double and rounded
// once, and where PyTorch's kernels fuse a multiply-add (add with alpha, addcmul) pelab
// uses fma. tests/train/optimizer_test.cpp replays fixtures from
// tools/make_optimizer_fixtures.py step by step.
//
// Per-parameter state follows PyTorch: a parameter whose grad() is undefined at a step is
// skipped entirely (no decay, no moment update) and its own step count does not advance;
// Adam's bias correction uses that per-parameter count, and SGD's momentum buffer starts as
// a copy of the parameter's first gradient.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pelab/tensor/tensor.h"

namespace pelab {

// Optimizer state as named buffers (see Optimizer::state()).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
 public:
  // `params`: contiguous leaf tensors that require grad, each at most once; their name()
  // is used in messages. `decay_mask[i]` false exempts parameter i from weight decay
  // (biases, norms, embeddings); empty means every parameter decays.
  explicit Optimizer(std::vector<Tensor> params, std::vector<bool> decay_mask = {});
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient, with learning rate `lr` (≥ 0, from
  // the schedule). Allocation-free; elementwise work is split with parallel_for, each
  // element computed independently, so results do not depend on the thread count.
  virtual void step(float lr);
  // Drops every parameter's gradient (an undefined gradient is skipped by step()).
  void zero_grad();
  // Number of step() calls so far (restored by load_state).
  int64_t steps_taken() const { return steps_; }

  const std::vector<Tensor>& params() const { return params_; }
  const std::vector<bool>& decay_mask() const { return decay_mask_; }
  // "sgd", "adam" or "adamw": the prefix of every state name.
  virtual const char* kind() const = 0;

  // A snapshot (copies) of everything step() depends on besides the hyperparameters, for
  // an exact resume. Names are "<kind>.<buffer>.<param index>":
  //   <kind>.step.<i>   shape [], parameter i's own update count (a float, as PyTorch
  //                     keeps it; exact up to 2^24)
  //   sgd.momentum.<i>  (momentum > 0)      adam.m.<i>, adam.v.<i> / adamw.m.<i>, ...
  //                     shaped like parameter i
  // Save steps_taken() alongside.
  NamedTensors state() const;
  // Restores a state() taken from an optimizer of the same kind and configuration over
  // parameters of the same shapes. Every expected name must appear exactly once with the
  // right shape, and nothing else; every value must be one step() can produce: step counts
  // whole numbers in [0, steps_taken], buffers finite, second moments >= 0, and a
  // parameter's buffers zero while its count is 0. On any violation it throws pelab::Error
  // naming the buffer (and the element), and leaves this optimizer unchanged.
  void load_state(const NamedTensors& state, int64_t steps_taken);

 protected:
  // Adds a per-parameter buffer (zeros shaped like each parameter) saved as
  // "<kind>.<name>.<i>"; `nonnegative`: update() keeps every value >= 0 (load_state checks
  // it). Call from the derived constructor.
  void add_buffer(const std::string& name, bool nonnegative = false);
  // Parameter i's values (contiguous).
  float* param_data(size_t i) { return params_[i].data(); }
  // The buffer added k-th, for parameter i.
  float* buffer(size_t k, size_t i) { return buffers_[k].tensors[i].data(); }
  // Parameter i's update count, including the update in progress.
  int64_t param_steps(size_t i) const { return param_steps_[i]; }
  // Updates parameter i (contiguous, numel elements) from its gradient; called by step()
  // after param_steps(i) has been advanced.
  virtual void update(size_t i, const float* grad, float lr) = 0;

 private:
  struct Buffer {
    std::string name;
    bool nonnegative;
    std::vector<Tensor> tensors;  // one per parameter
  };
  std::vector<Tensor> params_;
  std::vector<bool> decay_mask_;
  std::vector<Buffer> buffers_;
  std::vector<int64_t> param_steps_;
  int64_t steps_ = 0;
};

// ---- SGD: torch.optim.SGD with dampening 0 ----------------------------------------------
//   g ← g + wd·p;  b ← g (first update) or μ·b + g;  g ← g + μ·b (Nesterov) or b;
//   p ← p − lr·g
// Hyperparameters are doubles: PyTorch rounds each once to float (see above).
struct SgdOptions {
  double momentum = 0.0;  // μ ≥ 0; 0 keeps no buffer
  bool nesterov = false;  // needs momentum > 0
  double weight_decay = 0.0;
};

class SGD final : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SgdOptions& options, std::vector<bool> decay_mask = {});
  const char* kind() const override { return "sgd"; }
  const SgdOptions& options() const { return options_; }

 protected:
  void update(size_t i, const float* grad, float lr) override;

 private:
  SgdOptions options_;
};

// ---- Adam and AdamW ------------------------------------------------------------------------
//   Adam:  g ← g + wd·p (coupled L2)         AdamW: p ← p·(1 − lr·wd) (decoupled)
//   then   m ← β₁·m + (1 − β₁)·g;  v ← β₂·v + (1 − β₂)·g²;  t = the parameter's step count
//          p ← p − lr/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε)
struct AdamOptions {
  double beta1 = 0.9;  // in [0, 1)
  double beta2 = 0.999;
  double eps = 1e-8;  // ≥ 0
  double weight_decay = 0.0;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options, std::vector<bool> decay_mask = {});
  const char* kind() const override { return decoupled_ ? "adamw" : "adam"; }
  const AdamOptions& options() const { return options_; }

 protected:
  Adam(std::vector<Tensor> params, const AdamOptions& options, std::vector<bool> decay_mask,
       bool decoupled);
  void update(size_t i, const float* grad, float lr) override;

 private:
  AdamOptions options_;
  bool decoupled_;
};

class AdamW final : public Adam {
 public:
  // PyTorch's AdamW defaults weight_decay to 0.01; pelab takes it from the options.
  AdamW(std::vector<Tensor> params, const AdamOptions& options, std::vector<bool> decay_mask = {})
      : Adam(std::move(params), options, std::move(decay_mask), /*decoupled=*/true) {}
};

// ---- gradient clipping ------------------------------------------------------------------
// torch.nn.utils.clip_grad_norm_ (L2): the norm of all defined gradients taken together
// (accumulated in double over fixed blocks, so independent of the thread count); when
// coef = max_norm / (norm + 1e-6) < 1 — i.e. when the norm exceeds about max_norm — every
// gradient is scaled in place by coef (in float32, as PyTorch, which multiplies by
// min(coef, 1)). Returns the norm before clipping (0 without gradients). A non-finite norm
// is returned as is and the gradients are left untouched: the caller decides (PyTorch
// would scale them by NaN or 0). max_norm must be > 0; +inf measures without clipping.
float clip_grad_norm(const std::vector<Tensor>& params, float max_norm);
// Σ g² over the gradients (contiguous) in double, as clip_grad_norm takes it: one running sum
// per block of 2¹⁴ elements of each gradient, k in order, then the blocks' sums in order.
double squared_grad_norm(const std::vector<Tensor>& grads);

}  // namespace pelab
