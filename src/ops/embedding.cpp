// embedding: y[i..., :] = W[ids[i...], :], W [V, D], ids of any shape → [ids.shape..., D].
// backward: dW[v, :] = Σ_{i : ids[i] = v} dy[i, :] (a scatter-add; dids does not exist).
// The scatter-add is made deterministic by grouping the positions by id first (a counting
// sort, positions in increasing order) and then letting one thread own each vocabulary row:
// no races, no atomics, and the sum for every row runs in the same order for any thread count.
#include <string>

#include "op_util.h"
#include "pelab/ops/ops.h"

namespace pelab {

namespace {
// dW [V, D] from dy [N, D] and the N ids (all already validated to lie in [0, V)).
Tensor embedding_backward(const float* dy, const std::vector<int32_t>& ids, int64_t vocab,
                          int64_t dim) {
  const int64_t n = static_cast<int64_t>(ids.size());
  // Counting sort of the positions by id: rows of id v are order[start[v] .. start[v + 1]).
  std::vector<int64_t> start(static_cast<size_t>(vocab) + 1, 0);
  for (int32_t v : ids) ++start[static_cast<size_t>(v) + 1];
  for (int64_t v = 0; v < vocab; ++v) start[v + 1] += start[v];
  std::vector<int64_t> order(static_cast<size_t>(n));
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i) order[next[ids[i]]++] = i;
  }
  Tensor dw = Tensor::empty({vocab, dim});
  float* out = dw.data();
  const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(dim, 1));
  parallel_for(0, vocab, grain, [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(static_cast<size_t>(dim));
    for (int64_t v = lo; v < hi; ++v) {
      float* row = out + v * dim;
      const int64_t b = start[v], e = start[v + 1];
      if (b == e) {
        std::fill_n(row, dim, 0.0f);
        continue;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = b; k < e; ++k) {
        const float* src = dy + order[k] * dim;
        for (int64_t j = 0; j < dim; ++j) acc[j] += src[j];
      }
      for (int64_t j = 0; j < dim; ++j) row[j] = static_cast<float>(acc[j]);
    }
  });
  return dw;
}
}  // namespace

Tensor embedding(const Tensor& weight, const IntTensor& ids) {
  PELAB_CHECK(weight.ndim() == 2, "embedding: weight must be [vocabulary, dim], got {}",
              to_string(weight.shape()));
  PELAB_CHECK(numel(ids.shape) == ids.numel(), "embedding: ids hold {} values for shape {}",
              ids.numel(), to_string(ids.shape));
  const int64_t vocab = weight.size(0), dim = weight.size(1);
  const int64_t n = ids.numel();
  const int32_t* id = ids.data();
  for (int64_t i = 0; i < n; ++i) {
    PELAB_CHECK(id[i] >= 0 && id[i] < vocab,
                "embedding: id {} at ids{} (ids shape {}) is outside [0, {}), the vocabulary of "
                "weight {}",
                id[i], detail::index_string(i, ids.shape), to_string(ids.shape), vocab,
                to_string(weight.shape()));
  }
  const Tensor wc = weight.contiguous().detach();
  Shape out_shape = ids.shape;
  out_shape.push_back(dim);
  Tensor y = Tensor::empty(out_shape);
  const float* w = wc.data();
  float* o = y.data();
  const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(dim, 1));
  parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) std::copy_n(w + id[i] * dim, dim, o + i * dim);
  });
  if (needs_grad(weight)) {
    record(y, "embedding", {weight}, [values = ids.values, vocab, dim](const Tensor& g) {
      const Tensor gc = g.contiguous();
      return TensorList{embedding_backward(gc.data(), values, vocab, dim)};
    });
  }
  return y;
}

}  // namespace pelab
