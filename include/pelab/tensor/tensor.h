// Tensor: a float32, row-major, strided view of a Storage, with autograd bookkeeping.
//
// A Tensor is a cheap handle (a shared pointer); copies alias the same data. Views
// (reshape of a contiguous tensor, transpose, permute, slice) share storage; kernels that
// need contiguous memory call contiguous(), which copies only when it must.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pelab/tensor/shape.h"
#include "pelab/tensor/storage.h"

namespace pelab {

struct Node;
struct TensorImpl;

// What autograd knows of a tensor: the op that made it and the gradient reaching it. The
// graph's nodes hold these slots, not the tensors, so a tensor that no backward closure saved
// (a dropout's output, the product before rotary) is freed when the forward is done with it
// rather than when the backward passes it.
struct GradSlot {
  Shape shape;
  std::shared_ptr<TensorImpl> grad;  // accumulated dL/d(this), same shape
  std::shared_ptr<Node> grad_fn;     // the op that produced this tensor (null for leaves)
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  Shape strides;  // in elements
  bool requires_grad = false;
  std::shared_ptr<GradSlot> slot;  // null until recorded, set to require or given a gradient
  std::string name;                // optional; parameters carry their checkpoint name
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- creation ----------------------------------------------------------------------
  static Tensor empty(const Shape& shape);  // uninitialised
  static Tensor zeros(const Shape& shape);
  static Tensor ones(const Shape& shape);
  static Tensor full(const Shape& shape, float value);
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values);
  static Tensor scalar(float value);  // shape []

  // ---- metadata ----------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  const Shape& strides() const { return impl_->strides; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t size(int axis) const;  // negative axes count from the end
  int64_t numel() const { return pelab::numel(impl_->shape); }
  bool is_contiguous() const;
  const std::string& name() const { return impl_->name; }
  Tensor& set_name(std::string name);

  // ---- data --------------------------------------------------------------------------
  // Pointer to element [0, 0, ...]; honour strides() unless is_contiguous().
  float* data() { return impl_->storage->data() + impl_->offset; }
  const float* data() const { return impl_->storage->data() + impl_->offset; }
  float item() const;                    // the value of a one-element tensor
  std::vector<float> to_vector() const;  // a contiguous copy of the values
  float at(const std::vector<int64_t>& index) const;
  void fill_(float value);                // in place; not recorded by autograd
  void copy_from_(const Tensor& source);  // in place, same shape; not recorded

  // ---- autograd ----------------------------------------------------------------------
  bool requires_grad() const { return impl_->requires_grad; }
  Tensor& set_requires_grad(bool flag);  // leaves only
  bool is_leaf() const { return !impl_->slot || !impl_->slot->grad_fn; }
  Tensor grad() const;  // undefined if no gradient has reached this tensor
  void zero_grad();     // drops the gradient (an undefined gradient counts as zero)
  void set_grad(const Tensor& grad);
  // Back-propagates from this one-element tensor, accumulating into leaves' grad().
  void backward() const;
  // Same storage, no history.
  Tensor detach() const;
  const char* grad_fn_name() const;

  // ---- views and copies (recorded by autograd) ------------------------------------
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int axis_a, int axis_b) const;
  Tensor slice(int axis, int64_t start, int64_t end) const;

  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }
  bool same_storage(const Tensor& other) const { return impl_->storage == other.impl_->storage; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Integer tensors (token ids, positions, targets, gather indices): plain data, no autograd.
struct IntTensor {
  Shape shape;
  std::vector<int32_t> values;  // row-major

  IntTensor() = default;
  IntTensor(Shape s, std::vector<int32_t> v);
  explicit IntTensor(Shape s, int32_t fill = 0);
  int64_t numel() const { return static_cast<int64_t>(values.size()); }
  int32_t* data() { return values.data(); }
  const int32_t* data() const { return values.data(); }
};

// No NaN or ±inf in `t`, which must be contiguous (parameters, gradients, optimizer state).
bool all_finite(const Tensor& t);

}  // namespace pelab
