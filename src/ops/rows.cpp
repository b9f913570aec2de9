// gather_rows and scatter_rows move whole rows between two numberings; each is the other's
// gradient.
// gather_rows:  y[i, :] = x[rows[i], :];                     backward: dx = scatter_rows(dy, slots)
// scatter_rows: y[s, :] = x[slots[s], :], 0 if slots[s] = N;  backward: dx = gather_rows(dy, rows)
// where `slots` and `rows` are inverse numberings (slots[rows[i]] = i, N where no row lands).
// Both require the numbering to be one-to-one (distinct rows; each row of x in exactly one
// slot): then every gradient is a copy, never a sum, so it is exact, and each output row is
// written by one thread with no accumulation to order.
#include <string>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
void check_matrix_and_vector(const char* op, const Tensor& x, const IntTensor& index,
                             const char* index_name) {
  PELAB_CHECK(x.ndim() == 2, "{}: x must be [rows, width], got {}", op, to_string(x.shape()));
  PELAB_CHECK(index.shape.size() == 1 && index.shape[0] == index.numel(),
              "{}: {} must be a vector, got shape {} holding {} values", op, index_name,
              to_string(index.shape), index.numel());
}

// gather_rows' `rows` [N] (distinct values in [0, R)) → their inverse, the slots [R].
IntTensor slots_of(const IntTensor& rows, int64_t R) {
  const auto n = static_cast<int32_t>(rows.numel());
  std::vector<int32_t> slots(static_cast<size_t>(R), n);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t r = rows.values[i];
    PELAB_CHECK(r >= 0 && r < R, "gather_rows: rows[{}] = {} is outside [0, {}), the rows of x", i,
                r, R);
    PELAB_CHECK(slots[r] == n,
                "gather_rows: row {} is picked twice (rows[{}] and rows[{}]); rows "
                "must be distinct",
                r, slots[r], i);
    slots[r] = i;
  }
  return IntTensor({R}, std::move(slots));
}

// scatter_rows' `slots` [R] (values in [0, N], each of [0, N) exactly once) → their inverse,
// the rows [N].
IntTensor rows_of(const IntTensor& slots, int64_t N) {
  const int64_t R = slots.numel();
  std::vector<int32_t> rows(static_cast<size_t>(N), -1);
  for (int64_t s = 0; s < R; ++s) {
    const int32_t i = slots.values[s];
    PELAB_CHECK(i >= 0 && i <= N,
                "scatter_rows: slots[{}] = {} is outside [0, {}] (the rows of x, or {} for a "
                "zero row)",
                s, i, N, N);
    if (i == N) continue;
    PELAB_CHECK(rows[i] < 0, "scatter_rows: row {} of x goes to two slots ({} and {})", i, rows[i],
                s);
    rows[i] = static_cast<int32_t>(s);
  }
  for (int64_t i = 0; i < N; ++i)
    PELAB_CHECK(rows[i] >= 0,
                "scatter_rows: row {} of x goes to no slot; every row must land in "
                "exactly one",
                i);
  return IntTensor({N}, std::move(rows));
}

// out[k, :] = x[index[k], :], or zeros where index[k] = x's row count: [index.numel(), w].
Tensor copy_rows(const Tensor& x, const IntTensor& index) {
  const Tensor xc = x.contiguous().detach();
  const int64_t R = x.size(0), w = x.size(1), n = index.numel();
  Tensor out = Tensor::empty({n, w});
  const float* in = xc.data();
  const int32_t* idx = index.data();
  float* o = out.data();
  const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(w, 1));
  parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      if (idx[k] == R)
        std::fill_n(o + k * w, w, 0.0f);
      else
        std::copy_n(in + idx[k] * w, w, o + k * w);
    }
  });
  return out;
}
}  // namespace

Tensor gather_rows(const Tensor& x, const IntTensor& rows) {
  check_matrix_and_vector("gather_rows", x, rows, "rows");
  IntTensor slots = slots_of(rows, x.size(0));
  Tensor y = copy_rows(x, rows);  // [N, w]
  if (needs_grad(x)) {
    record(y, "gather_rows", {x}, [slots = std::move(slots)](const Tensor& g) {
      return TensorList{scatter_rows(g, slots)};
    });
  }
  return y;
}

Tensor scatter_rows(const Tensor& x, const IntTensor& slots) {
  check_matrix_and_vector("scatter_rows", x, slots, "slots");
  IntTensor rows = rows_of(slots, x.size(0));
  Tensor y = copy_rows(x, slots);  // [R, w]
  if (needs_grad(x)) {
    record(y, "scatter_rows", {x},
           [rows = std::move(rows)](const Tensor& g) { return TensorList{gather_rows(g, rows)}; });
  }
  return y;
}

}  // namespace pelab
