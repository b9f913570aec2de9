#include "pelab/tensor/tensor.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "pelab/core/error.h"

namespace pelab {

namespace {
std::shared_ptr<TensorImpl> make_impl(const Shape& shape) {
  for (int64_t s : shape) PELAB_CHECK(s >= 0, "negative dimension in shape {}", to_string(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(pelab::numel(shape)));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  return impl;
}

// Visits every element of a strided tensor in row-major order.
template <class Fn>
void for_each_offset(const Shape& shape, const Shape& strides, Fn&& fn) {
  const int nd = static_cast<int>(shape.size());
  const int64_t n = pelab::numel(shape);
  if (n == 0) return;
  std::vector<int64_t> index(nd, 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < n; ++k) {
    fn(k, offset);
    for (int d = nd - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}
}  // namespace

Tensor Tensor::empty(const Shape& shape) {
  return Tensor(make_impl(shape));
}

Tensor Tensor::zeros(const Shape& shape) {
  return full(shape, 0.0f);
}

Tensor Tensor::ones(const Shape& shape) {
  return full(shape, 1.0f);
}

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  std::fill_n(t.data(), t.numel(), value);
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values) {
  PELAB_CHECK(static_cast<int64_t>(values.size()) == pelab::numel(shape),
              "{} values do not fill a tensor of shape {}", values.size(), to_string(shape));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::scalar(float value) {
  return full({}, value);
}

int64_t Tensor::size(int axis) const {
  return shape()[normalize_axis(axis, ndim(), shape())];
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape()[d] != 1 && strides()[d] != expected) return false;
    expected *= shape()[d];
  }
  return true;
}

Tensor& Tensor::set_name(std::string name) {
  impl_->name = std::move(name);
  return *this;
}

float Tensor::item() const {
  PELAB_CHECK(numel() == 1, "item() needs a one-element tensor, got shape {}", to_string(shape()));
  return data()[0];
}

std::vector<float> Tensor::to_vector() const {
  std::vector<float> out(static_cast<size_t>(numel()));
  if (is_contiguous()) {
    std::copy_n(data(), numel(), out.data());
  } else {
    const float* base = data();
    for_each_offset(shape(), strides(), [&](int64_t k, int64_t off) { out[k] = base[off]; });
  }
  return out;
}

float Tensor::at(const std::vector<int64_t>& index) const {
  PELAB_CHECK(static_cast<int>(index.size()) == ndim(), "at(): {} indices for shape {}",
              index.size(), to_string(shape()));
  int64_t off = 0;
  for (int d = 0; d < ndim(); ++d) {
    PELAB_CHECK(index[d] >= 0 && index[d] < shape()[d], "at(): index {} out of range for shape {}",
                index[d], to_string(shape()));
    off += index[d] * strides()[d];
  }
  return data()[off];
}

void Tensor::fill_(float value) {
  PELAB_ASSERT(is_contiguous());
  std::fill_n(data(), numel(), value);
}

void Tensor::copy_from_(const Tensor& source) {
  PELAB_CHECK(source.shape() == shape(), "copy: shape {} into shape {}", to_string(source.shape()),
              to_string(shape()));
  PELAB_ASSERT(is_contiguous());
  if (source.is_contiguous()) {
    std::memmove(data(), source.data(), sizeof(float) * static_cast<size_t>(numel()));
  } else {
    std::vector<float> values = source.to_vector();
    std::copy(values.begin(), values.end(), data());
  }
}

Tensor& Tensor::set_requires_grad(bool flag) {
  PELAB_CHECK(is_leaf(), "requires_grad can only be set on a leaf tensor");
  impl_->requires_grad = flag;
  if (flag && !impl_->slot) impl_->slot = std::make_shared<GradSlot>(GradSlot{shape(), {}, {}});
  return *this;
}

Tensor Tensor::grad() const {
  return impl_->slot && impl_->slot->grad ? Tensor(impl_->slot->grad) : Tensor();
}

void Tensor::zero_grad() {
  if (impl_->slot) impl_->slot->grad.reset();
}

void Tensor::set_grad(const Tensor& grad) {
  PELAB_CHECK(!grad.defined() || grad.shape() == shape(), "gradient of shape {} for a tensor of {}",
              to_string(grad.shape()), to_string(shape()));
  if (!impl_->slot) impl_->slot = std::make_shared<GradSlot>(GradSlot{shape(), {}, {}});
  impl_->slot->grad = grad.defined() ? grad.impl() : nullptr;
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->offset = impl_->offset;
  impl->shape = impl_->shape;
  impl->strides = impl_->strides;
  return Tensor(impl);
}

IntTensor::IntTensor(Shape s, std::vector<int32_t> v) : shape(std::move(s)), values(std::move(v)) {
  PELAB_CHECK(static_cast<int64_t>(values.size()) == pelab::numel(shape),
              "{} values do not fill an integer tensor of shape {}", values.size(),
              to_string(shape));
}

IntTensor::IntTensor(Shape s, int32_t fill)
    : shape(std::move(s)), values(static_cast<size_t>(pelab::numel(shape)), fill) {}

// Runs over every parameter and gradient at every step, so it is written to vectorise: the
// largest magnitude's bits (sign cleared) against those of +inf, no early exit.
bool all_finite(const Tensor& t) {
  const float* d = t.data();  // parameters and their gradients are contiguous
  uint32_t largest = 0;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    largest = std::max(largest, std::bit_cast<uint32_t>(d[i]) & 0x7fffffffu);
  return largest < std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity());
}

}  // namespace pelab
