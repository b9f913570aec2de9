// Drives every entry of the op table through the gradient check and, where the op has a
// fast path, compares each GEMM backend's forward and gradients with the reference kernel.
#include <gtest/gtest.h>

#include <random>

#include "ops/gradcheck.h"
#include "ops/op_table.h"
#include "pelab/backend/gemm.h"

namespace pelab::testing {
namespace {

TensorList make_inputs(const OpCase& op, uint64_t seed) {
  TensorList inputs;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const Domain d = k < op.domains.size() ? op.domains[k] : Domain::Any;
    Tensor t = random_tensor(op.inputs[k], seed + 17 * k);
    float* p = t.data();
    std::mt19937 rng(static_cast<uint32_t>(seed + k));
    std::uniform_real_distribution<float> uniform(0.5f, 2.0f);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (d == Domain::Positive) p[i] = uniform(rng);
      if (d == Domain::AwayFromKink && std::fabs(p[i]) < 0.1f)
        p[i] = p[i] < 0 ? -0.1f - p[i] : 0.1f + p[i];
    }
    inputs.push_back(t);
  }
  return inputs;
}

class OpTable : public ::testing::TestWithParam<size_t> {};

TEST_P(OpTable, GradientMatchesFiniteDifferences) {
  const OpCase& op = op_cases()[GetParam()];
  GradCheckOptions options;
  options.rtol *= op.tolerance_scale;
  options.atol *= op.tolerance_scale;
  const GradCheckResult r = gradcheck(op.fn, make_inputs(op, 1234), options);
  EXPECT_TRUE(r.ok) << op.name << " (worst error " << r.max_error << "× allowed):\n" << r.message;
}

class FastPathOps : public ::testing::TestWithParam<size_t> {};

TEST_P(FastPathOps, BackendsMatchReference) {
  const OpCase& op = op_cases()[GetParam()];
  const GemmBackend saved = gemm_backend();
  auto run = [&](GemmBackend backend) {
    set_gemm_backend(backend);
    TensorList inputs = make_inputs(op, 99);
    for (Tensor& x : inputs) x.set_requires_grad(true);
    Tensor y = op.fn(inputs);
    sum_all(mul(y, random_tensor(y.shape(), 5))).backward();
    TensorList outs{y.detach()};
    for (Tensor& x : inputs) outs.push_back(x.grad());
    return outs;
  };
  const TensorList reference = run(GemmBackend::Reference);
  for (GemmBackend backend :
       {GemmBackend::Auto, GemmBackend::OneDnn, GemmBackend::OpenBlas, GemmBackend::Packed}) {
    const TensorList fast = run(backend);
    for (size_t k = 0; k < fast.size(); ++k)
      EXPECT_LE(closeness(fast[k], reference[k], 1e-5, 1e-5), 1.0)
          << op.name << " backend " << to_string(backend) << " output " << k;
  }
  set_gemm_backend(saved);
}

std::string op_case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string n = op_cases()[info.param].name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

std::vector<size_t> fast_path_cases() {
  std::vector<size_t> ids;
  for (size_t i = 0; i < op_cases().size(); ++i)
    if (op_cases()[i].has_fast_path) ids.push_back(i);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpTable, ::testing::Range<size_t>(0, op_cases().size()),
                         op_case_name);
INSTANTIATE_TEST_SUITE_P(AllOps, FastPathOps, ::testing::ValuesIn(fast_path_cases()), op_case_name);

}  // namespace
}  // namespace pelab::testing
