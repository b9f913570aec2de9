// Reverse-mode autograd on a dynamic graph.
//
// An op computes its output eagerly, then — only if grad mode is on and some input
// requires a gradient — calls record() with a backward closure. The closure receives
// dL/d(output) and returns dL/d(input_k) for every input (an undefined Tensor where an
// input needs none). It captures only what backward needs; a saved output is captured
// detached, so the graph never holds a cycle. backward() runs the closures in reverse
// topological order with grad mode off (no double backward), accumulates into the leaves,
// and frees every node and intermediate gradient as soon as it has been used. A node refers
// to its inputs through their GradSlots, so the graph itself keeps no tensor's data alive:
// only what the closures captured lives until the backward.
#pragma once

#include <functional>
#include <vector>

#include "pelab/tensor/tensor.h"

namespace pelab {

using TensorList = std::vector<Tensor>;
using BackwardFn = std::function<TensorList(const Tensor& grad_output)>;

struct Node {
  const char* name;
  std::vector<std::shared_ptr<GradSlot>> inputs;  // null where no gradient is needed
  BackwardFn backward;
};

bool grad_enabled();

// Turns recording off for its lifetime (evaluation, optimizer updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// True when an op applied to these inputs must be recorded.
template <class... Ts>
bool needs_grad(const Ts&... inputs) {
  return grad_enabled() && (inputs.requires_grad() || ...);
}

// Makes `output` the result of op `name` applied to `inputs`.
void record(Tensor& output, const char* name, const TensorList& inputs, BackwardFn backward);

// Numerics checking (training.check_finite): while on, record() checks every op's output and
// run_backward() every gradient an op's backward returns, and throws a pelab::Error naming
// the op at the first NaN or infinity (masked_fill and log_softmax may give -inf by design;
// only NaN counts for them). One pass over each tensor; off by default. Process-wide.
void set_check_finite(bool on);
bool check_finite_enabled();

// Adds `grad` into the slot's accumulated gradient (shapes must match).
void accumulate_grad(GradSlot& t, const Tensor& grad);

// Runs backward from `root` with dL/d(root) = `seed`.
void run_backward(const Tensor& root, const Tensor& seed);

}  // namespace pelab
