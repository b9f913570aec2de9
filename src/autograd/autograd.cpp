#include "pelab/autograd/autograd.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

namespace pelab {

namespace {
thread_local bool g_grad_enabled = true;
// Gradient sums below this many elements run on one thread: the fork costs more.
constexpr int64_t kAccumulateGrain = 16384;
std::atomic<bool> g_check_finite{false};

// Ops whose outputs hold -inf by design (a masked score, the log of a zero probability).
bool may_hold_infinity(const char* op) {
  return std::strcmp(op, "masked_fill") == 0 || std::strcmp(op, "log_softmax") == 0;
}

// "nan", "inf" or "-inf" (printf's "-nan" says nothing useful about a NaN's sign bit).
const char* nonfinite_name(float v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// Throws naming `what` at the first NaN (or, unless `infinity_ok`, infinity) in `t`.
void check_finite(const Tensor& t, bool infinity_ok, const std::string& what) {
  const Tensor c = t.contiguous();
  const float* d = c.data();
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    if (std::isnan(d[i]) || (!infinity_ok && std::isinf(d[i])))
      throw DivergedError(
          fmt::format("{} holds {} (at flat index {} of shape {}; found by "
                      "training.check_finite)",
                      what, nonfinite_name(d[i]), i, to_string(t.shape())));
  }
}
}  // namespace

void set_check_finite(bool on) {
  g_check_finite.store(on);
}
bool check_finite_enabled() {
  return g_check_finite.load();
}

bool grad_enabled() {
  return g_grad_enabled;
}

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) {
  g_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() {
  g_grad_enabled = previous_;
}

void record(Tensor& output, const char* name, const TensorList& inputs, BackwardFn backward) {
  // Every differentiable op passes through here: the one place to watch their outputs.
  if (check_finite_enabled())
    check_finite(output, may_hold_infinity(name), fmt::format("the output of op '{}'", name));
  auto node = std::make_shared<Node>();
  node->name = name;
  node->inputs.reserve(inputs.size());
  for (const Tensor& in : inputs)
    node->inputs.push_back(in.defined() && in.requires_grad() ? in.impl()->slot : nullptr);
  node->backward = std::move(backward);
  output.impl()->slot = std::make_shared<GradSlot>(GradSlot{output.shape(), {}, std::move(node)});
  output.impl()->requires_grad = true;
}

void accumulate_grad(GradSlot& t, const Tensor& grad) {
  PELAB_ASSERT(grad.shape() == t.shape);
  if (!t.grad) {
    // Own a fresh handle: the same gradient tensor may be handed to several inputs
    // (add passes dL/dy to both), so it must never be accumulated into in place unless
    // nothing else shares its storage.
    t.grad = grad.detach().impl();
    return;
  }
  Tensor current(t.grad);
  if (current.is_contiguous() && t.grad->storage.use_count() == 1) {
    float* dst = current.data();
    if (grad.is_contiguous()) {
      // Over the thread pool: one add per element, so the same bits on any number of threads.
      // Run serially, it kept the other threads waiting.
      const float* src = grad.data();
      parallel_for(0, current.numel(), kAccumulateGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) dst[i] += src[i];
      });
    } else {
      std::vector<float> src = grad.to_vector();
      for (size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
    }
  } else {
    // Shared or strided: a new tensor, element by element (the same sums as the op `add`,
    // which this layer cannot call: ops are built on autograd).
    std::vector<float> sum = current.to_vector();
    const std::vector<float> src = grad.to_vector();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += src[i];
    t.grad = Tensor::from_vector(current.shape(), sum).impl();
  }
}

void run_backward(const Tensor& root, const Tensor& seed) {
  NoGradGuard no_grad;
  // Topological order by iterative depth-first search (graphs can be deep).
  // `order` owns the slots: releasing a node below may drop the last other reference to
  // one of its inputs before that input has been processed.
  const std::shared_ptr<GradSlot>& root_slot = root.impl()->slot;
  PELAB_ASSERT(root_slot != nullptr);
  std::vector<std::shared_ptr<GradSlot>> order;
  std::unordered_set<const GradSlot*> visited;
  std::vector<std::pair<std::shared_ptr<GradSlot>, size_t>> stack;
  stack.emplace_back(root_slot, 0);
  visited.insert(root_slot.get());
  while (!stack.empty()) {
    auto& [slot, next_input] = stack.back();
    const Node* node = slot->grad_fn.get();
    if (node && next_input < node->inputs.size()) {
      const std::shared_ptr<GradSlot>& child = node->inputs[next_input++];
      if (child && visited.insert(child.get()).second) stack.emplace_back(child, 0);
      continue;
    }
    order.push_back(std::move(slot));
    stack.pop_back();
  }

  accumulate_grad(*root_slot, seed);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    GradSlot* slot = it->get();
    if (!slot->grad_fn) continue;  // a leaf: keeps its gradient
    std::shared_ptr<Node> node = std::move(slot->grad_fn);
    std::shared_ptr<TensorImpl> grad = std::move(slot->grad);
    if (!grad) continue;  // no gradient flowed here
    TensorList input_grads = node->backward(Tensor(grad));
    PELAB_ASSERT(input_grads.size() == node->inputs.size());
    if (check_finite_enabled())
      for (size_t k = 0; k < input_grads.size(); ++k)
        if (node->inputs[k] && input_grads[k].defined())
          check_finite(input_grads[k], false,
                       fmt::format("the gradient op '{}' passes to its input {}", node->name, k));
    for (size_t k = 0; k < input_grads.size(); ++k) {
      if (node->inputs[k] && input_grads[k].defined())
        accumulate_grad(*node->inputs[k], input_grads[k]);
    }
  }
}

// Methods of Tensor that need the graph, defined in the layer that owns it.
const char* Tensor::grad_fn_name() const {
  return impl_->slot && impl_->slot->grad_fn ? impl_->slot->grad_fn->name : "";
}

void Tensor::backward() const {
  PELAB_CHECK(numel() == 1, "backward() needs a one-element tensor, got shape {}",
              to_string(shape()));
  PELAB_CHECK(requires_grad(), "backward(): the tensor does not require a gradient");
  run_backward(*this, Tensor::full(shape(), 1.0f));
}

}  // namespace pelab
