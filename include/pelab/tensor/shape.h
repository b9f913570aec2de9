// Shapes and strides, in elements. Row-major throughout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pelab {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string to_string(const Shape& shape);  // "[2, 3, 4]"

// Resolves a possibly negative axis against `ndim`; throws naming the shape if out of range.
int normalize_axis(int axis, int ndim, const Shape& shape_for_message);

// The NumPy broadcast of two shapes; throws an error naming both if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace pelab
