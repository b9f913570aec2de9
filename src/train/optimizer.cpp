// SGD / Adam / AdamW steps and clip_grad_norm, matching torch.optim (1.13, single-tensor):
//   SGD:   g ← g + wd·p; b ← g (first) or μ·b + g; g ← g + μ·b (Nesterov) or b; p ← p − lr·g
//   Adam:  g ← g + wd·p | AdamW: p ← p·(1 − lr·wd); m ← β₁m + (1−β₁)g; v ← β₂v + (1−β₂)g²;
//          p ← p + (−lr/(1−β₁ᵗ))·m / (√v / √(1−β₂ᵗ) + ε)
//
// Rounding follows PyTorch's CPU kernels op by op, so that results agree to the last bit:
//  - every tensor op rounds its result to float (mul_ then add_ is two roundings);
//  - add(x, alpha=a) and addcmul(t1, t2, value=a) are fused multiply-adds in PyTorch's
//    build (explicit Vectorized fmadd, and GCC contracting the scalar tail); here fma32;
//  - python scalars are formed in double (1 − β₁, lr/(1 − β₁ᵗ), 1 − lr·wd) and rounded to
//    float once when they enter a kernel.
// Everything else must not be fused, hence fp-contract=off for this file (GCC contracts
// a·b + c by default even in ISO C++ mode).
//
// Speed: the SGD loops vectorise, and so does Adam's, because the build passes
// -fno-math-errno (sqrt would otherwise keep a scalar errno path, and `#pragma GCC optimize`
// cannot turn that off).
#include "pelab/train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <unordered_set>

#include "pelab/autograd/autograd.h"
#include "pelab/core/error.h"
#include "pelab/core/parallel.h"

#ifdef __clang__  // the same for clang, which ignores GCC's pragma
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

namespace pelab {

namespace {
// Elements per thread below which an update runs on one thread.
constexpr int64_t kGrain = 1 << 15;
// Block size of the clip-norm partial sums: fixed, so the sum order is too.
constexpr int64_t kNormBlock = 1 << 14;
// Per-parameter step counts are stored as float (as PyTorch does): exact up to here.
constexpr int64_t kMaxExactCount = int64_t{1} << 24;

std::string describe(const Tensor& p, size_t i) {
  return p.name().empty() ? fmt::format("parameter {}", i)
                          : fmt::format("parameter {} '{}'", i, p.name());
}

// fma and sqrt through the builtins: std::fma / std::sqrt are defined in <cmath> under
// different optimisation options (before the pragma), so GCC would not inline them here.
inline float fma32(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}
inline float sqrt32(float x) {
  return __builtin_sqrtf(x);
}

// Calls fn(std::bool_constant<flag>...), so that the per-element loops below carry no
// branches and can vectorise (vector fma, sqrt and division round as the scalar ones do).
template <class Fn>
void with_flags(Fn&& fn) {
  fn();
}
template <class Fn, class... Flags>
void with_flags(Fn&& fn, bool flag, Flags... rest) {
  if (flag) {
    with_flags([&](auto... f) { fn(std::true_type{}, f...); }, rest...);
  } else {
    with_flags([&](auto... f) { fn(std::false_type{}, f...); }, rest...);
  }
}

// The float constants of one SGD update (PyTorch's alpha / scalar arguments).
struct SgdScalars {
  float wd, mu, neg_lr;
};

template <bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>
void sgd_kernel(int64_t lo, int64_t hi, float* __restrict p, const float* __restrict grad,
                float* __restrict buf, SgdScalars c) {
  for (int64_t k = lo; k < hi; ++k) {
    float d = grad[k];
    if constexpr (kDecay) d = fma32(p[k], c.wd, d);  // d_p.add(param, alpha=wd)
    if constexpr (kMomentum) {
      // first: buf = clone(d_p); then buf.mul_(μ).add_(d_p): round(μ·b), then round(· + d)
      const float b = kFirst ? d : buf[k] * c.mu + d;
      buf[k] = b;
      d = kNesterov ? fma32(b, c.mu, d) : b;  // d_p.add(buf, alpha=μ)
    }
    p[k] = fma32(d, c.neg_lr, p[k]);  // param.add_(d_p, alpha=-lr)
  }
}

// The float constants of one Adam update.
struct AdamScalars {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float neg_step;  // −lr / (1 − β₁ᵗ)
  float bc2_sqrt;  // √(1 − β₂ᵗ)
  float eps, wd;
  float keep;  // AdamW: 1 − lr·wd
};

template <bool kCoupled, bool kDecoupled>
void adam_kernel(int64_t lo, int64_t hi, float* __restrict p, const float* __restrict grad,
                 float* __restrict m, float* __restrict v, AdamScalars c) {
  for (int64_t k = lo; k < hi; ++k) {
    float g = grad[k];
    float pk = p[k];
    if constexpr (kCoupled) g = fma32(pk, c.wd, g);                    // grad.add(param, alpha=wd)
    if constexpr (kDecoupled) pk = pk * c.keep;                        // param.mul_(1 - lr*wd)
    const float mk = fma32(g, c.one_minus_beta1, m[k] * c.beta1);      // mul_, add_(alpha)
    const float vk = fma32(c.one_minus_beta2 * g, g, v[k] * c.beta2);  // mul_, addcmul_
    m[k] = mk;
    v[k] = vk;
    const float denom = sqrt32(vk) / c.bc2_sqrt + c.eps;  // (sqrt / bc2_sqrt).add_(eps)
    p[k] = pk + c.neg_step * mk / denom;                  // addcdiv_(m, denom, -step_size)
  }
}
}  // namespace

// ---- Optimizer ------------------------------------------------------------------------------

namespace {

// The values of the saved buffer `name`, which step() could have produced: finite (step()
// never leaves a NaN or an infinity in a buffer it keeps using), >= 0 for a buffer of squares,
// and all zero while the parameter has not been updated (`never_updated` names its step
// count then, and is "" otherwise).
void check_buffer_values(const std::string& name, const Tensor& values, bool nonnegative,
                         const std::string& never_updated) {
  const std::vector<float> v = values.to_vector();
  for (size_t e = 0; e < v.size(); ++e) {
    PELAB_CHECK(std::isfinite(v[e]),
                "optimizer state: buffer '{}' holds {} at element {}; a saved state is finite",
                name, std::isnan(v[e]) ? "NaN" : "an infinite value", e);
    PELAB_CHECK(!nonnegative || v[e] >= 0,
                "optimizer state: buffer '{}' holds {} at element {}; it is a running mean of "
                "squares, never negative",
                name, v[e], e);
    PELAB_CHECK(never_updated.empty() || v[e] == 0,
                "optimizer state: buffer '{}' holds {} at element {}, but '{}' = 0 (a parameter "
                "never updated keeps zero buffers)",
                name, v[e], e, never_updated);
  }
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, std::vector<bool> decay_mask)
    : params_(std::move(params)), decay_mask_(std::move(decay_mask)) {
  if (decay_mask_.empty()) decay_mask_.assign(params_.size(), true);
  PELAB_CHECK(decay_mask_.size() == params_.size(),
              "optimizer: weight-decay mask has {} entries for {} parameters", decay_mask_.size(),
              params_.size());
  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    PELAB_CHECK(p.defined(), "optimizer: parameter {} is an undefined tensor", i);
    PELAB_CHECK(p.is_leaf() && p.requires_grad(),
                "optimizer: {} must be a leaf tensor that requires grad", describe(p, i));
    PELAB_CHECK(p.is_contiguous(), "optimizer: {} must be contiguous", describe(p, i));
    PELAB_CHECK(seen.insert(p.impl().get()).second,
                "optimizer: {} is listed twice (it would be updated twice per step)",
                describe(p, i));
  }
  param_steps_.assign(params_.size(), 0);
}

void Optimizer::add_buffer(const std::string& name, bool nonnegative) {
  Buffer b{name, nonnegative, {}};
  b.tensors.reserve(params_.size());
  for (const Tensor& p : params_) b.tensors.push_back(Tensor::zeros(p.shape()));
  buffers_.push_back(std::move(b));
}

void Optimizer::step(float lr) {
  PELAB_CHECK(std::isfinite(lr) && lr >= 0,
              "optimizer: learning rate must be finite and >= 0, "
              "got {}",
              lr);
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor grad = params_[i].grad();
    if (!grad.defined()) continue;  // no gradient reached it: PyTorch skips grad=None entirely
    PELAB_CHECK(grad.shape() == params_[i].shape() && grad.is_contiguous(),
                "optimizer: the gradient of {} must be contiguous with shape {}, got {}",
                describe(params_[i], i), to_string(params_[i].shape()), to_string(grad.shape()));
    PELAB_CHECK(!grad.same_storage(params_[i]),
                "optimizer: the gradient of {} shares its "
                "storage with the parameter",
                describe(params_[i], i));
    PELAB_CHECK(param_steps_[i] < kMaxExactCount, "optimizer: {} has reached {} updates",
                describe(params_[i], i), kMaxExactCount);
    ++param_steps_[i];
    update(i, grad.data(), lr);
  }
  ++steps_;
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.zero_grad();
}

NamedTensors Optimizer::state() const {
  NamedTensors out;
  out.reserve(params_.size() * (1 + buffers_.size()));
  for (size_t i = 0; i < params_.size(); ++i) {
    out.emplace_back(fmt::format("{}.step.{}", kind(), i),
                     Tensor::scalar(static_cast<float>(param_steps_[i])));
    for (const Buffer& b : buffers_) {
      out.emplace_back(fmt::format("{}.{}.{}", kind(), b.name, i), b.tensors[i].clone());
    }
  }
  return out;
}

void Optimizer::load_state(const NamedTensors& state, int64_t steps_taken) {
  PELAB_CHECK(steps_taken >= 0, "optimizer state: steps taken must be >= 0, got {}", steps_taken);
  // Where each expected name lives in `state`; validate everything before changing anything.
  struct Slot {
    std::string name;
    Shape shape;
    size_t param;
    const Buffer* buffer;  // nullptr: the parameter's step count
    const Tensor* source = nullptr;
  };
  std::vector<Slot> slots;
  for (size_t i = 0; i < params_.size(); ++i) {
    slots.push_back({fmt::format("{}.step.{}", kind(), i), Shape{}, i, nullptr});
    for (const Buffer& b : buffers_) {
      slots.push_back({fmt::format("{}.{}.{}", kind(), b.name, i), params_[i].shape(), i, &b});
    }
  }
  auto expected_names = [&] {
    std::string names = fmt::format("{}.step.<i>", kind());
    for (const Buffer& b : buffers_) names += fmt::format(", {}.{}.<i>", kind(), b.name);
    return fmt::format("{} for i in [0, {})", names, params_.size());
  };
  for (const auto& [name, tensor] : state) {
    // (An init-capture: clang 14 cannot capture a structured binding.)
    auto it = std::find_if(slots.begin(), slots.end(),
                           [&wanted = name](const Slot& s) { return s.name == wanted; });
    PELAB_CHECK(it != slots.end(),
                "optimizer state: unexpected buffer '{}' (this {} optimizer "
                "has {})",
                name, kind(), expected_names());
    PELAB_CHECK(it->source == nullptr, "optimizer state: buffer '{}' appears twice", name);
    PELAB_CHECK(tensor.defined(), "optimizer state: buffer '{}' is an undefined tensor", name);
    PELAB_CHECK(tensor.shape() == it->shape,
                "optimizer state: buffer '{}' has shape {}, expected {} (for {})", name,
                to_string(tensor.shape()), to_string(it->shape),
                describe(params_[it->param], it->param));
    it->source = &tensor;
  }
  for (const Slot& s : slots) {
    PELAB_CHECK(s.source != nullptr,
                "optimizer state: missing buffer '{}' (this {} optimizer "
                "has {})",
                s.name, kind(), expected_names());
  }
  std::vector<int64_t> counts(params_.size());
  for (const Slot& s : slots) {
    if (s.buffer != nullptr) continue;
    const float c = s.source->item();
    PELAB_CHECK(std::isfinite(c) && c >= 0 && c == std::floor(c) && c <= steps_taken,
                "optimizer state: buffer '{}' = {} is not an update count in [0, {}] (steps taken)",
                s.name, c, steps_taken);
    counts[s.param] = static_cast<int64_t>(c);
  }
  for (const Slot& s : slots) {
    if (s.buffer == nullptr) continue;
    check_buffer_values(s.name, *s.source, s.buffer->nonnegative,
                        counts[s.param] == 0 ? fmt::format("{}.step.{}", kind(), s.param) : "");
  }

  size_t k = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    ++k;  // the step count
    for (Buffer& b : buffers_) b.tensors[i].copy_from_(*slots[k++].source);
  }
  param_steps_ = std::move(counts);
  steps_ = steps_taken;
}

// ---- SGD ----------------------------------------------------------------------------------

SGD::SGD(std::vector<Tensor> params, const SgdOptions& options, std::vector<bool> decay_mask)
    : Optimizer(std::move(params), std::move(decay_mask)), options_(options) {
  PELAB_CHECK(std::isfinite(options.momentum) && options.momentum >= 0,
              "sgd: momentum must be finite and >= 0, got {}", options.momentum);
  PELAB_CHECK(!options.nesterov || options.momentum > 0, "sgd: nesterov needs momentum > 0");
  PELAB_CHECK(std::isfinite(options.weight_decay) && options.weight_decay >= 0,
              "sgd: weight_decay must be finite and >= 0, got {}", options.weight_decay);
  if (options.momentum > 0) add_buffer("momentum");
}

void SGD::update(size_t i, const float* grad, float lr) {
  float* p = param_data(i);
  const double wd = decay_mask()[i] ? options_.weight_decay : 0.0;
  const bool momentum = options_.momentum != 0;
  float* buf = momentum ? buffer(0, i) : nullptr;
  const SgdScalars c{static_cast<float>(wd), static_cast<float>(options_.momentum), -lr};
  with_flags(
      [&](auto decay, auto use_momentum, auto nesterov, auto first) {
        parallel_for(0, params()[i].numel(), kGrain, [&](int64_t lo, int64_t hi) {
          sgd_kernel<decay, use_momentum, nesterov, first>(lo, hi, p, grad, buf, c);
        });
      },
      wd != 0, momentum, momentum && options_.nesterov, momentum && param_steps(i) == 1);
}

// ---- Adam / AdamW -------------------------------------------------------------------------

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options, std::vector<bool> decay_mask)
    : Adam(std::move(params), options, std::move(decay_mask), /*decoupled=*/false) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options, std::vector<bool> decay_mask,
           bool decoupled)
    : Optimizer(std::move(params), std::move(decay_mask)),
      options_(options),
      decoupled_(decoupled) {
  const char* who = decoupled ? "adamw" : "adam";
  PELAB_CHECK(options.beta1 >= 0 && options.beta1 < 1, "{}: beta1 must be in [0, 1), got {}", who,
              options.beta1);
  PELAB_CHECK(options.beta2 >= 0 && options.beta2 < 1, "{}: beta2 must be in [0, 1), got {}", who,
              options.beta2);
  PELAB_CHECK(std::isfinite(options.eps) && options.eps >= 0,
              "{}: eps must be finite and >= 0, "
              "got {}",
              who, options.eps);
  PELAB_CHECK(std::isfinite(options.weight_decay) && options.weight_decay >= 0,
              "{}: weight_decay must be finite and >= 0, got {}", who, options.weight_decay);
  add_buffer("m");
  add_buffer("v", /*nonnegative=*/true);
}

void Adam::update(size_t i, const float* grad, float lr) {
  float* p = param_data(i);
  float* m = buffer(0, i);
  float* v = buffer(1, i);
  const AdamOptions& o = options_;
  const double wd = decay_mask()[i] ? o.weight_decay : 0.0;
  // Python scalars in PyTorch: double, rounded to float as they enter a kernel.
  const double t = static_cast<double>(param_steps(i));
  const double bias_correction1 = 1 - std::pow(o.beta1, t);
  const double bias_correction2 = 1 - std::pow(o.beta2, t);
  const double step_size = static_cast<double>(lr) / bias_correction1;
  const AdamScalars c{static_cast<float>(o.beta1),
                      static_cast<float>(1 - o.beta1),
                      static_cast<float>(o.beta2),
                      static_cast<float>(1 - o.beta2),
                      static_cast<float>(-step_size),
                      static_cast<float>(std::sqrt(bias_correction2)),
                      static_cast<float>(o.eps),
                      static_cast<float>(wd),
                      static_cast<float>(1 - static_cast<double>(lr) * wd)};
  with_flags(
      [&](auto coupled, auto decoupled) {
        parallel_for(0, params()[i].numel(), kGrain, [&](int64_t lo, int64_t hi) {
          adam_kernel<coupled, decoupled>(lo, hi, p, grad, m, v, c);
        });
      },
      !decoupled_ && wd != 0, decoupled_ && wd != 0);
}

// ---- clip_grad_norm -----------------------------------------------------------------------

namespace {
// One block of a gradient, whose squares are summed in one running double sum.
struct NormChain {
  const float* x;
  int64_t n;
};
constexpr size_t kNormLanes = 4;

// out[l] = Σ_k x_l[k]² for count ≤ kNormLanes chains, each added in order k = 0, 1, …: the
// same sums as one chain at a time, four of them advancing together where one alone would
// wait on each addition's result.
void sum_squares(const NormChain* c, size_t count, double* out) {
  double acc[kNormLanes] = {};
  int64_t common = c[0].n;
  for (size_t l = 1; l < count; ++l) common = std::min(common, c[l].n);
  if (count == kNormLanes) {
    const float *x0 = c[0].x, *x1 = c[1].x, *x2 = c[2].x, *x3 = c[3].x;
    for (int64_t k = 0; k < common; ++k) {
      acc[0] += static_cast<double>(x0[k]) * x0[k];
      acc[1] += static_cast<double>(x1[k]) * x1[k];
      acc[2] += static_cast<double>(x2[k]) * x2[k];
      acc[3] += static_cast<double>(x3[k]) * x3[k];
    }
  } else {
    common = 0;
  }
  for (size_t l = 0; l < count; ++l) {
    double a = acc[l];
    for (int64_t k = common; k < c[l].n; ++k) a += static_cast<double>(c[l].x[k]) * c[l].x[k];
    out[l] = a;
  }
}
}  // namespace

double squared_grad_norm(const std::vector<Tensor>& grads) {
  std::vector<NormChain> chains;
  for (const Tensor& g : grads) {
    PELAB_CHECK(g.is_contiguous(), "squared_grad_norm: a gradient {} is not contiguous",
                to_string(g.shape()));
    for (int64_t k = 0; k < g.numel(); k += kNormBlock)
      chains.push_back({g.data() + k, std::min(kNormBlock, g.numel() - k)});
  }
  std::vector<double> partial(chains.size(), 0.0);
  const auto groups = static_cast<int64_t>((chains.size() + kNormLanes - 1) / kNormLanes);
  parallel_for(0, groups, 4, [&](int64_t lo, int64_t hi) {
    for (int64_t grp = lo; grp < hi; ++grp) {
      const size_t first = static_cast<size_t>(grp) * kNormLanes;
      sum_squares(chains.data() + first, std::min(kNormLanes, chains.size() - first),
                  partial.data() + first);
    }
  });
  double sum = 0;
  for (double p : partial) sum += p;
  return sum;
}

float clip_grad_norm(const std::vector<Tensor>& params, float max_norm) {
  PELAB_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be > 0 (+inf only measures), got {}",
              max_norm);
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined() || !params[i].grad().defined()) continue;
    Tensor g = params[i].grad();
    PELAB_CHECK(g.is_contiguous(), "clip_grad_norm: the gradient of {} is not contiguous",
                describe(params[i], i));
    grads.push_back(g);
  }
  const double sum = squared_grad_norm(grads);
  const float norm = static_cast<float>(std::sqrt(sum));
  if (!std::isfinite(norm)) return norm;
  // PyTorch: clip_coef = max_norm / (total_norm + 1e-6) — a float tensor op, computed as
  // reciprocal(total_norm + 1e-6) * max_norm — then grads *= clamp(clip_coef, max=1).
  const float coef = (1.0f / (norm + 1e-6f)) * max_norm;
  if (coef < 1.0f) {
    for (Tensor& g : grads) {
      float* x = g.data();
      parallel_for(0, g.numel(), kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) x[k] *= coef;
      });
    }
  }
  return norm;
}

}  // namespace pelab
