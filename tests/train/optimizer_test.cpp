// Optimizers, schedules and clipping against PyTorch 1.13 (fixtures from
// tools/make_optimizer_fixtures.py), plus exact resume, state validation and skipping.
//
// Tolerance: parameters within 1e-6 relative (+1e-7 absolute, for values near 0) of
// PyTorch after every step. pelab reproduces PyTorch's float32 operation order and fused
// multiply-adds, so on the machine that generated the fixture the match is exact except
// where clip_grad_norm's norm is involved: pelab accumulates it in double, PyTorch in
// float, so the clip coefficient (and everything after it) may differ in the last bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "pelab/core/error.h"
#include "pelab/core/parallel.h"
#include "pelab/train/optimizer.h"
#include "pelab/train/schedule.h"

namespace pelab::testing {
namespace {

using nlohmann::json;

constexpr double kRtol = 1e-6, kAtol = 1e-7;

const json& fixture() {
  static const json doc = [] {
    const std::string path =
        std::string(PELAB_SOURCE_DIR) + "/tests/fixtures/optim/optimizers.json";
    std::ifstream in(path);
    if (!in) throw Error("cannot open " + path);
    return json::parse(in);
  }();
  return doc;
}

const json& fixture_case(const std::string& name) {
  for (const json& c : fixture()["cases"]) {
    if (c["name"] == name) return c;
  }
  throw Error("no fixture case " + name);
}

Shape shape_of(size_t i) {
  return fixture()["shapes"][i].get<Shape>();
}

std::vector<Tensor> make_params(const json& c) {
  std::vector<Tensor> params;
  for (size_t i = 0; i < c["initial"].size(); ++i) {
    Tensor p = Tensor::from_vector(shape_of(i), c["initial"][i].get<std::vector<float>>());
    p.set_requires_grad(true).set_name(fixture()["names"][i].get<std::string>());
    params.push_back(p);
  }
  return params;
}

std::unique_ptr<Optimizer> make_optimizer(const json& c, std::vector<Tensor> params) {
  const json& o = c["optimizer"];
  const std::vector<bool> mask = c["decay_mask"].get<std::vector<bool>>();
  const std::string kind = o["kind"];
  if (kind == "sgd") {
    SgdOptions s;
    s.momentum = o["momentum"];
    s.nesterov = o["nesterov"];
    s.weight_decay = o["weight_decay"];
    return std::make_unique<SGD>(std::move(params), s, mask);
  }
  AdamOptions a;
  a.beta1 = o["beta1"];
  a.beta2 = o["beta2"];
  a.eps = o["eps"];
  a.weight_decay = o["weight_decay"];
  if (kind == "adam") return std::make_unique<Adam>(std::move(params), a, mask);
  return std::make_unique<AdamW>(std::move(params), a, mask);
}

LrSchedule make_schedule(const json& c) {
  const json& s = c["schedule"];
  LrScheduleOptions o;
  o.lr = s["lr"];
  o.warmup_steps = s["warmup_steps"];
  o.total_steps = s["total_steps"];
  o.decay = parse_lr_decay(s["decay"].get<std::string>());
  o.min_lr = s["min_lr"];
  return LrSchedule(o);
}

// Gives each parameter the fixture's gradient of step `s` (fresh tensors: clipping scales
// them in place), or none where the fixture has null.
void set_grads(std::vector<Tensor>& params, const json& c, size_t s) {
  const json& grads = c["steps"][s]["grads"];
  for (size_t i = 0; i < params.size(); ++i) {
    if (grads[i].is_null()) {
      params[i].zero_grad();
    } else {
      params[i].set_grad(Tensor::from_vector(shape_of(i), grads[i].get<std::vector<float>>()));
    }
  }
}

// Steps [begin, end) of case `c`, as the fixture ran them (clip first where it did).
void run_steps(Optimizer& opt, const json& c, size_t begin, size_t end) {
  std::vector<Tensor> params = opt.params();
  const LrSchedule schedule = make_schedule(c);
  for (size_t s = begin; s < end; ++s) {
    set_grads(params, c, s);
    if (!c["clip_max_norm"].is_null()) clip_grad_norm(params, c["clip_max_norm"].get<float>());
    opt.step(schedule.lr_at(static_cast<int64_t>(s)));
  }
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const json& c : fixture()["cases"]) names.push_back(c["name"]);
  return names;
}

// ---- against PyTorch -----------------------------------------------------------------------

class OptimizerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerFixture, MatchesPyTorchEveryStep) {
  const json& c = fixture_case(GetParam());
  std::vector<Tensor> params = make_params(c);
  std::unique_ptr<Optimizer> opt = make_optimizer(c, params);
  const LrSchedule schedule = make_schedule(c);
  double max_abs = 0, max_rel = 0, max_lr_rel = 0, max_norm_rel = 0;
  int64_t differing = 0, total = 0;
  for (size_t s = 0; s < c["steps"].size(); ++s) {
    SCOPED_TRACE(fmt::format("step {}", s));
    const json& step = c["steps"][s];
    const double want_lr = step["lr"];
    const float lr = schedule.lr_at(static_cast<int64_t>(s));
    const double lr_rel = std::fabs(lr - want_lr) / std::max(want_lr, 1e-30);
    EXPECT_LE(lr_rel, 1.2e-7) << "lr " << lr << " vs " << want_lr;  // one float rounding
    max_lr_rel = std::max(max_lr_rel, lr_rel);

    set_grads(params, c, s);
    if (step.contains("clip_norm")) {
      const float norm = clip_grad_norm(params, c["clip_max_norm"].get<float>());
      const double want = step["clip_norm"];
      const double rel = std::fabs(norm - want) / want;
      EXPECT_LE(rel, kRtol) << "clip norm " << norm << " vs " << want;
      max_norm_rel = std::max(max_norm_rel, rel);
    }
    opt->step(lr);
    EXPECT_EQ(opt->steps_taken(), static_cast<int64_t>(s + 1));

    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<float> got = params[i].to_vector();
      const std::vector<float> want = step["params"][i].get<std::vector<float>>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) {
        const double err = std::fabs(static_cast<double>(got[k]) - want[k]);
        EXPECT_LE(err, kRtol * std::fabs(want[k]) + kAtol)
            << params[i].name() << "[" << k << "]: " << got[k] << " vs PyTorch " << want[k];
        max_abs = std::max(max_abs, err);
        max_rel = std::max(max_rel, err / std::max(std::fabs(static_cast<double>(want[k])), 1e-30));
        differing += got[k] != want[k];
        ++total;
      }
    }
  }
  std::printf(
      "[ %-18s ] max |Δp| %.3g (rel %.3g), %lld/%lld values not bit-equal; lr rel %.3g; "
      "clip norm rel %.3g\n",
      GetParam().c_str(), max_abs, max_rel, static_cast<long long>(differing),
      static_cast<long long>(total), max_lr_rel, max_norm_rel);
}

// state() after k steps, load_state() into a fresh optimizer over fresh parameters holding
// the same values, continue: bit-identical to the uninterrupted run, for every split.
TEST_P(OptimizerFixture, ResumeFromStateIsBitIdentical) {
  const json& c = fixture_case(GetParam());
  const size_t n = c["steps"].size();
  std::vector<Tensor> straight = make_params(c);
  std::unique_ptr<Optimizer> reference = make_optimizer(c, straight);
  run_steps(*reference, c, 0, n);
  for (size_t split = 0; split <= n; ++split) {
    SCOPED_TRACE(fmt::format("resume after {} steps", split));
    std::vector<Tensor> first = make_params(c);
    std::unique_ptr<Optimizer> before = make_optimizer(c, first);
    run_steps(*before, c, 0, split);
    const NamedTensors saved = before->state();
    const int64_t steps = before->steps_taken();

    std::vector<Tensor> second;
    for (const Tensor& p : first) {
      Tensor q = p.detach().clone();
      q.set_requires_grad(true).set_name(p.name());
      second.push_back(q);
    }
    std::unique_ptr<Optimizer> after = make_optimizer(c, second);
    after->load_state(saved, steps);
    EXPECT_EQ(after->steps_taken(), static_cast<int64_t>(split));
    run_steps(*after, c, split, n);
    EXPECT_EQ(after->steps_taken(), static_cast<int64_t>(n));
    for (size_t i = 0; i < second.size(); ++i) {
      EXPECT_TRUE(bit_equal(second[i], straight[i])) << second[i].name();
    }
    const NamedTensors end_a = after->state(), end_b = reference->state();
    ASSERT_EQ(end_a.size(), end_b.size());
    for (size_t k = 0; k < end_a.size(); ++k) {
      EXPECT_EQ(end_a[k].first, end_b[k].first);
      EXPECT_TRUE(bit_equal(end_a[k].second, end_b[k].second)) << end_a[k].first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, OptimizerFixture, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST(OptimizerFixtureFile, CoversTheAdvertisedCases) {
  std::set<std::string> kinds, decays;
  bool clip = false, skip = false, mask = false, nesterov = false;
  for (const json& c : fixture()["cases"]) {
    kinds.insert(c["optimizer"]["kind"].get<std::string>());
    decays.insert(c["schedule"]["decay"].get<std::string>());
    clip |= !c["clip_max_norm"].is_null();
    mask |= c["decay_mask"] != json::array({true, true});
    nesterov |= c["optimizer"].value("nesterov", false);
    for (const json& s : c["steps"]) skip |= s["grads"][0].is_null() || s["grads"][1].is_null();
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"sgd", "adam", "adamw"}));
  EXPECT_EQ(decays, (std::set<std::string>{"constant", "linear", "cosine"}));
  EXPECT_TRUE(clip && skip && mask && nesterov);
}

// ---- state validation ------------------------------------------------------------------------

std::vector<Tensor> two_params() {
  Tensor w = Tensor::from_vector({2, 3}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f});
  Tensor b = Tensor::from_vector({3}, {1.0f, 2.0f, 3.0f});
  w.set_requires_grad(true).set_name("w");
  b.set_requires_grad(true).set_name("b");
  return {w, b};
}

// Runs `fn`, expecting a pelab::Error whose message contains every one of `parts`.
template <class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    const std::string what = e.what();
    for (const std::string& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
    }
  }
}

TEST(OptimizerState, NamesAndShapes) {
  Adam adam(two_params(), AdamOptions{});
  const NamedTensors s = adam.state();
  std::vector<std::string> names;
  for (const auto& [name, t] : s) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"adam.step.0", "adam.m.0", "adam.v.0", "adam.step.1",
                                             "adam.m.1", "adam.v.1"}));
  EXPECT_EQ(s[1].second.shape(), (Shape{2, 3}));
  EXPECT_EQ(s[3].second.shape(), Shape{});

  SGD plain(two_params(), SgdOptions{});
  EXPECT_EQ(plain.state().size(), 2u);  // step counts only
  SGD momentum(two_params(), SgdOptions{.momentum = 0.9});
  EXPECT_EQ(momentum.state()[1].first, "sgd.momentum.0");
  AdamW adamw(two_params(), AdamOptions{});
  EXPECT_EQ(adamw.state()[2].first, "adamw.v.0");
}

TEST(OptimizerState, StateIsASnapshot) {
  std::vector<Tensor> params = two_params();
  Adam adam(params, AdamOptions{});
  for (Tensor& p : params) p.set_grad(Tensor::ones(p.shape()));
  adam.step(0.1f);
  const NamedTensors s = adam.state();
  const std::vector<float> m0 = s[1].second.to_vector();
  adam.step(0.1f);
  EXPECT_EQ(s[1].second.to_vector(), m0);
  EXPECT_EQ(s[0].second.item(), 1.0f);
}

TEST(OptimizerState, WrongShapeNamesTheBuffer) {
  std::vector<Tensor> params = two_params();
  Adam source(params, AdamOptions{});
  for (Tensor& p : params) p.set_grad(Tensor::ones(p.shape()));
  source.step(0.1f);
  NamedTensors s = source.state();
  for (auto& [name, t] : s) {
    if (name == "adam.m.1") t = Tensor::zeros({5});
  }
  Adam target(two_params(), AdamOptions{});
  expect_error([&] { target.load_state(s, 1); }, {"adam.m.1", "[5]", "[3]", "'b'"});
  // Nothing was changed by the failed load.
  EXPECT_EQ(target.steps_taken(), 0);
  for (const auto& [name, t] : target.state()) {
    for (float x : t.to_vector()) EXPECT_EQ(x, 0.0f) << name;
  }
}

TEST(OptimizerState, MissingUnexpectedAndDuplicateBuffers) {
  Adam adam(two_params(), AdamOptions{});
  NamedTensors s = adam.state();

  NamedTensors missing(s.begin(), s.end() - 1);
  expect_error([&] { adam.load_state(missing, 0); }, {"missing", "adam.v.1"});

  NamedTensors extra = s;
  extra.emplace_back("adam.m.2", Tensor::zeros({3}));
  expect_error([&] { adam.load_state(extra, 0); }, {"unexpected", "adam.m.2"});

  NamedTensors twice = s;
  twice.push_back(s[1]);
  expect_error([&] { adam.load_state(twice, 0); }, {"twice", "adam.m.0"});

  // Another optimizer's state is refused by name.
  SGD sgd(two_params(), SgdOptions{.momentum = 0.9});
  expect_error([&] { sgd.load_state(s, 0); }, {"unexpected", "adam.step.0", "sgd.momentum.<i>"});
  AdamW adamw(two_params(), AdamOptions{});
  expect_error([&] { adamw.load_state(s, 0); }, {"adam.step.0"});
}

TEST(OptimizerState, StepCountsMustBeCounts) {
  Adam adam(two_params(), AdamOptions{});
  NamedTensors s = adam.state();
  s[0].second = Tensor::scalar(2.5f);
  expect_error([&] { adam.load_state(s, 3); }, {"adam.step.0", "2.5"});
  s[0].second = Tensor::scalar(4.0f);  // more updates than steps taken
  expect_error([&] { adam.load_state(s, 3); }, {"adam.step.0"});
  s[0].second = Tensor::scalar(3.0f);
  adam.load_state(s, 3);
  EXPECT_EQ(adam.steps_taken(), 3);
  expect_error([&] { adam.load_state(s, -1); }, {"steps taken"});
}

// ---- skipping, zero_grad, construction -----------------------------------------------------

TEST(OptimizerSkip, ParameterWithoutGradIsUntouched) {
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind);
    std::vector<Tensor> params = two_params();
    const std::vector<float> w0 = params[0].to_vector(), b0 = params[1].to_vector();
    std::unique_ptr<Optimizer> opt;
    if (kind == 0)
      opt = std::make_unique<SGD>(params, SgdOptions{.momentum = 0.9, .weight_decay = 0.1});
    if (kind == 1) opt = std::make_unique<Adam>(params, AdamOptions{.weight_decay = 0.1});
    if (kind == 2) opt = std::make_unique<AdamW>(params, AdamOptions{.weight_decay = 0.1});
    params[0].set_grad(Tensor::full(params[0].shape(), 0.5f));
    opt->step(0.1f);
    opt->step(0.1f);
    EXPECT_NE(params[0].to_vector(), w0);
    EXPECT_EQ(params[1].to_vector(), b0);  // no decay either (PyTorch skips grad=None)
    for (const auto& [name, t] : opt->state()) {
      if (name.ends_with(".0")) continue;
      for (float x : t.to_vector()) EXPECT_EQ(x, 0.0f) << name;
    }
    EXPECT_EQ(opt->state()[0].second.item(), 2.0f);
    EXPECT_EQ(opt->steps_taken(), 2);

    opt->zero_grad();
    EXPECT_FALSE(params[0].grad().defined());
    const std::vector<float> w1 = params[0].to_vector();
    opt->step(0.1f);
    EXPECT_EQ(params[0].to_vector(), w1);
    EXPECT_EQ(opt->steps_taken(), 3);
  }
}

TEST(OptimizerConstruction, RejectsBadParametersAndOptions) {
  Tensor frozen = Tensor::zeros({2});
  expect_error([&] { SGD({frozen}, SgdOptions{}); }, {"parameter 0", "requires grad"});
  std::vector<Tensor> p = two_params();
  expect_error([&] { SGD({p[0], p[1], p[0]}, SgdOptions{}); }, {"parameter 2 'w'", "twice"});
  expect_error([&] { SGD(p, SgdOptions{}, {true}); }, {"mask", "1", "2 parameters"});
  expect_error([&] { SGD(p, SgdOptions{.nesterov = true}); }, {"nesterov"});
  expect_error([&] { SGD(p, SgdOptions{.momentum = -0.1}); }, {"momentum"});
  expect_error([&] { Adam(p, AdamOptions{.beta1 = 1.0}); }, {"beta1", "[0, 1)"});
  expect_error([&] { AdamW(p, AdamOptions{.beta2 = -0.5}); }, {"adamw", "beta2"});
  expect_error([&] { Adam(p, AdamOptions{.weight_decay = -1}); }, {"weight_decay"});
  Adam ok(p, AdamOptions{});
  expect_error([&] { ok.step(-1.0f); }, {"learning rate"});
  expect_error([&] { ok.step(NAN); }, {"learning rate"});
}

// Elementwise updates and the clip norm do not depend on the number of threads.
TEST(OptimizerThreads, LargeTensorsAreThreadCountIndependent) {
  const int saved = num_threads();
  auto run = [](int threads) {
    set_num_threads(threads);
    const int64_t n = 300001;
    std::vector<float> init(n), grad(n);
    for (int64_t k = 0; k < n; ++k) {
      init[k] = std::sin(0.001f * k);
      grad[k] = std::cos(0.003f * k) * 0.01f;
    }
    Tensor p = Tensor::from_vector({n}, init);
    p.set_requires_grad(true);
    AdamW opt({p}, AdamOptions{.weight_decay = 0.1});
    float norm = 0;
    for (int s = 0; s < 3; ++s) {
      p.set_grad(Tensor::from_vector({n}, grad));
      norm = clip_grad_norm({p}, 1.0f);
      opt.step(1e-3f);
    }
    return std::make_pair(p.detach().clone(), norm);
  };
  const auto [one, norm_one] = run(1);
  const auto [two, norm_two] = run(2);
  set_num_threads(saved);
  EXPECT_TRUE(bit_equal(one, two));
  EXPECT_EQ(norm_one, norm_two);
}

// ---- clip_grad_norm -------------------------------------------------------------------------

TEST(ClipGradNorm, ScalesOnlyAboveMaxNorm) {
  std::vector<Tensor> p = two_params();
  p[0].set_grad(Tensor::full({2, 3}, 1.0f));  // Σg² = 6
  p[1].set_grad(Tensor::full({3}, 1.0f));     // + 3: norm 3
  EXPECT_FLOAT_EQ(clip_grad_norm(p, 10.0f), 3.0f);
  EXPECT_EQ(p[0].grad().to_vector()[0], 1.0f);  // untouched
  EXPECT_FLOAT_EQ(clip_grad_norm(p, 1.5f), 3.0f);
  EXPECT_NEAR(p[1].grad().to_vector()[2], 0.5f, 1e-6f);
  p[1].zero_grad();  // undefined gradients are left out of the norm
  EXPECT_NEAR(clip_grad_norm(p, 100.0f), std::sqrt(6 * 0.25), 1e-6);
  p[0].zero_grad();
  EXPECT_EQ(clip_grad_norm(p, 1.0f), 0.0f);
  expect_error([&] { clip_grad_norm(p, 0.0f); }, {"max_norm"});
  expect_error([&] { clip_grad_norm(p, NAN); }, {"max_norm"});
  // +inf: measure only (the trainer logs the norm with clipping off).
  p[0].set_grad(Tensor::full({2, 3}, 1e30f));
  EXPECT_FLOAT_EQ(clip_grad_norm(p, INFINITY), std::sqrt(6.0f) * 1e30f);
  EXPECT_EQ(p[0].grad().to_vector()[0], 1e30f);
}

// The norm is summed in a fixed order: one running double sum per block of 16384 elements of
// each gradient, then those sums in order. Several blocks are summed side by side for speed;
// this checks, bit for bit, that the sum is still that order's, over gradients of unequal
// sizes (blocks of different lengths in one group, a group left incomplete), on 1 and 2
// threads. Terms spread over 2⁵⁶ in size make every order round differently.
TEST(ClipGradNorm, NormIsTheBlockwiseOrderedSumExactly) {
  const std::vector<int64_t> sizes = {5, 40000, 16384, 1, 70000, 3, 16385};
  std::vector<Tensor> grads, params;
  double expected = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> g(static_cast<size_t>(sizes[i]));
    for (int64_t k = 0; k < sizes[i]; ++k)
      g[k] = std::sin(0.37f * static_cast<float>(k) + static_cast<float>(i)) *
             std::exp2(static_cast<float>(k % 29) - 14.0f);
    for (int64_t b = 0; b < sizes[i]; b += 16384) {  // the definition, written out
      double block = 0;
      for (int64_t k = b; k < std::min(sizes[i], b + 16384); ++k)
        block += static_cast<double>(g[k]) * g[k];
      expected += block;
    }
    grads.push_back(Tensor::from_vector({sizes[i]}, g));
    Tensor p = Tensor::zeros({sizes[i]});
    p.set_requires_grad(true);
    p.set_grad(grads.back());
    params.push_back(p);
  }
  const int saved = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    EXPECT_EQ(squared_grad_norm(grads), expected) << threads << " thread(s)";
    EXPECT_EQ(clip_grad_norm(params, INFINITY), static_cast<float>(std::sqrt(expected)));
  }
  set_num_threads(saved);
}

// The blocks are read as runs of memory, so a view whose elements are not laid out in order
// (a transpose) is refused rather than summed over the wrong elements.
TEST(ClipGradNorm, NormRefusesANonContiguousGradient) {
  const Tensor g = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}).transpose(0, 1);
  expect_error([&] { squared_grad_norm({g}); }, {"not contiguous", "[3, 2]"});
}

TEST(ClipGradNorm, NonFiniteNormIsReturnedAndGradsKept) {
  std::vector<Tensor> p = two_params();
  p[0].set_grad(Tensor::from_vector({2, 3}, {1, 2, NAN, 4, 5, 6}));
  p[1].set_grad(Tensor::full({3}, 100.0f));
  EXPECT_TRUE(std::isnan(clip_grad_norm(p, 1.0f)));
  EXPECT_EQ(p[1].grad().to_vector()[0], 100.0f);
  p[0].set_grad(Tensor::full({2, 3}, INFINITY));
  EXPECT_TRUE(std::isinf(clip_grad_norm(p, 1.0f)));
  EXPECT_EQ(p[1].grad().to_vector()[0], 100.0f);
}

}  // namespace
}  // namespace pelab::testing
