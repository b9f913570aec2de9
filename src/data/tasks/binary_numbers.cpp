// Bit-vector arithmetic for the binary tasks (see binary_numbers.h). Not a task itself.
#include "data/tasks/binary_numbers.h"

#include <algorithm>

#include "pelab/core/error.h"

namespace pelab::tasks {

namespace {
// -1, 0 or 1 as a < b, a == b, a > b.
int compare(const Bits& a, const Bits& b) {
  for (size_t i = std::max(a.size(), b.size()); i-- > 0;) {
    const int32_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}
}  // namespace

Bits random_positive(Generator& rng, int width) {
  PELAB_ASSERT(width >= 1);
  // Uniform over all `width`-bit patterns but zero: draw again on zero (at most half the time).
  for (;;) {
    Bits bits(width);
    for (int32_t& b : bits) b = static_cast<int32_t>(rng.uniform_int(0, 1));
    if (std::find(bits.begin(), bits.end(), 1) != bits.end()) return bits;
  }
}

Bits bits_of(uint64_t value, int width) {
  Bits bits(width);
  for (int i = 0; i < width; ++i) bits[i] = static_cast<int32_t>((value >> i) & 1);
  return bits;
}

Bits add(const Bits& a, const Bits& b) {
  Bits sum(std::max(a.size(), b.size()) + 1);
  int carry = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    const int s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
    sum[i] = s & 1;
    carry = s >> 1;
  }
  return sum;
}

Bits multiply(const Bits& a, const Bits& b) {
  Bits product(a.size() + b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0) continue;
    int carry = 0;  // product += b << i
    for (size_t j = 0; j < b.size() || carry; ++j) {
      const int s = product[i + j] + (j < b.size() ? b[j] : 0) + carry;
      product[i + j] = s & 1;
      carry = s >> 1;
    }
  }
  return product;
}

Bits integer_sqrt(const Bits& a) {
  // The root has at most ceil(w/2) bits; set them from the top while the square stays <= a.
  Bits root((a.size() + 1) / 2);
  for (size_t i = root.size(); i-- > 0;) {
    root[i] = 1;
    if (compare(multiply(root, root), a) > 0) root[i] = 0;
  }
  return root;
}

Bits minimal(Bits a) {
  while (a.size() > 1 && a.back() == 0) a.pop_back();
  if (a.empty()) a.push_back(0);
  return a;
}

Bits big_endian(const Bits& a, int width) {
  const Bits m = minimal(a);
  PELAB_ASSERT(static_cast<int>(m.size()) <= width);
  Bits out(width, 0);
  for (size_t i = 0; i < m.size(); ++i) out[width - 1 - i] = m[i];
  return out;
}

std::vector<int32_t> draw_operands(Generator& rng, int n, int32_t op) {
  PELAB_ASSERT(n >= 3);
  const int width_a = static_cast<int>(rng.uniform_int(1, n - 2));
  std::vector<int32_t> input = random_positive(rng, width_a);
  input.push_back(op);
  const Bits b = random_positive(rng, n - 1 - width_a);
  input.insert(input.end(), b.begin(), b.end());
  return input;
}

std::pair<Bits, Bits> split_operands(const std::vector<int32_t>& input, int32_t op,
                                     const std::string& task) {
  const auto at = std::find(input.begin(), input.end(), op);
  PELAB_CHECK(at != input.end(), "task '{}': no operator in the input", task);
  PELAB_CHECK(at != input.begin() && at + 1 != input.end(),
              "task '{}': the operator at position {} lacks an operand", task, at - input.begin());
  Bits a(input.begin(), at), b(at + 1, input.end());
  for (const Bits* x : {&a, &b})
    for (int32_t bit : *x)
      PELAB_CHECK(bit == 0 || bit == 1, "task '{}': expected one operator and bits", task);
  return {std::move(a), std::move(b)};
}

}  // namespace pelab::tasks
