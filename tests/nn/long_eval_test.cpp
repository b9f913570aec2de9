// Long evaluation: a forward pass without gradients at 4096 tokens holds attention scores for
// one block of query rows at a time, never a [heads, T, T] tensor. The storage pool's peak
// shows it: the whole pass stays far below what one layer's full scores would take.
// A Slow suite: every scheme at 4096 tokens took minutes under the sanitizers, which check the
// same code at small sizes (attention_test.cpp); the normal build runs it.
#include <gtest/gtest.h>

#include "model_util.h"
#include "pelab/autograd/autograd.h"
#include "pelab/positional/scheme.h"
#include "pelab/tensor/storage.h"

namespace pelab::testing {
namespace {

TEST(LongEvalSlow, NoFullScoreMatrixAt4096Tokens) {
  constexpr int64_t T = 4096, heads = 4;
  for (const std::string& scheme : schemes_where(acts_in_attention)) {
    ModelConfig c = tiny_config(scheme, /*d_model=*/32, heads, /*layers=*/1);
    const Encoder model(c, make_scheme, 1);
    const Batch batch = make_batch({T}, T, 7);
    NoGradGuard no_grad;
    memory::reset_peak_live_bytes();
    const size_t before = memory::live_bytes();
    const Encoder::Output out = model.forward(batch);
    const double peak = static_cast<double>(memory::peak_live_bytes() - before);
    const double full_scores = static_cast<double>(heads) * T * T * sizeof(float);  // 256 MB
    EXPECT_LT(peak, full_scores / 16) << scheme << ": peak " << peak / 1048576.0 << " MB";
    EXPECT_TRUE(std::isfinite(out.loss.item())) << scheme;
  }
}

}  // namespace
}  // namespace pelab::testing
