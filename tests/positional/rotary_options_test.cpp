// Rotary's options in the whole model (MODEL.md, "Rotary options"): shift invariance at every
// fraction and for the scalings none, pi, ntk and yarn; dynamic NTK keeping it only while
// every sequence stays within L; the settings that are plain rotary giving its bits; and the
// keys through config.yaml and checkpoints, a plain rotary run's config text unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/model_util.h"
#include "pelab/config/load_model.h"
#include "pelab/config/model_config_yaml.h"
#include "pelab/nn/checkpoint.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

struct ScalingCase {
  std::string type;
  double factor = 1.0;
  int64_t original_length = 0;  // 0: not given
};

// d_h = 16: 8 pairs, so fractions leave from 1 to 8 of them rotating.
ModelConfig rotary_config(double fraction, const ScalingCase& scaling, const std::string& norm) {
  ModelConfig c = tiny_config("rotary", 32, 2);
  c.norm = norm;
  if (fraction != 1.0) c.positional.keys.set("fraction", fraction);
  if (!scaling.type.empty()) {
    c.positional.keys.set("scaling.type", scaling.type);
    c.positional.keys.set("scaling.factor", scaling.factor);
  }
  if (scaling.original_length > 0)
    c.positional.keys.set("scaling.original_length", scaling.original_length);
  return c;
}

Batch shifted(const Batch& batch, int32_t offset) {
  Batch out = batch;
  for (int32_t& p : out.positions.values) p += offset;
  return out;
}

TEST(RotaryOptions, ShiftInvariantAtEveryFractionAndFixedScaling) {
  const std::vector<ScalingCase> scalings = {{},           {"none"},          {"pi", 4.0},
                                             {"ntk", 3.0}, {"yarn", 4.0, 16}, {"yarn", 8.0, 2}};
  for (const double fraction : {0.125, 0.3, 0.5, 0.75, 1.0})
    for (const ScalingCase& s : scalings)
      for (const std::string norm : {"pre", "post"}) {
        if (s.type == "ntk" && fraction == 0.125) continue;  // one pair: refused (below)
        Encoder model(rotary_config(fraction, s, norm), make_scheme, 1);
        randomize_parameters(model, 2);
        const Batch batch = make_batch({8, 5}, 8, 4);
        const std::vector<float> at_zero = logits(model, batch);
        for (const int32_t offset : {1, 37, 300})
          EXPECT_LT(max_abs_diff(at_zero, logits(model, shifted(batch, offset))), kSame)
              << "fraction " << fraction << " " << s.type << " " << norm << " offset " << offset;
      }
}

// n = 1 + the largest real position: 8 at offset 0. With L = 16, shifts up to 8 keep n ≤ L
// (the angles are plain rotary's, so the logits keep); past it the base grows with n (at
// n = 24, s = 4: b' = base·3^(d_r/(d_r−2)), far from base even for d_r = 4).
TEST(RotaryOptions, DynamicNtkIsShiftInvariantOnlyWithinL) {
  for (const double fraction : {0.25, 1.0})
    for (const std::string norm : {"pre", "post"}) {
      Encoder model(rotary_config(fraction, {"dynamic_ntk", 4.0, 16}, norm), make_scheme, 1);
      randomize_parameters(model, 2);
      const Batch batch = make_batch({8, 5}, 8, 4);
      const std::vector<float> at_zero = logits(model, batch);
      for (const int32_t offset : {1, 5, 8})
        EXPECT_LT(max_abs_diff(at_zero, logits(model, shifted(batch, offset))), kSame)
            << fraction << " " << norm << " offset " << offset << " keeps n <= L";
      for (const int32_t offset : {16, 37, 300})
        EXPECT_GT(max_abs_diff(at_zero, logits(model, shifted(batch, offset))), kDiffers)
            << fraction << " " << norm << " offset " << offset << " takes n past L";
    }
}

// The logits and every gradient of the model, for comparing bit for bit.
std::vector<std::vector<float>> outputs(const ModelConfig& config, const Batch& batch) {
  Encoder model(config, make_scheme, 3);
  randomize_parameters(model, 4);
  const Encoder::Output out = model.forward(batch);
  out.loss.backward();
  std::vector<std::vector<float>> all = {out.logits.to_vector()};
  for (const Tensor& p : model.params().all()) all.push_back(p.grad().to_vector());
  return all;
}

// Fraction 1 and pi, ntk, yarn at s = 1 are plain rotary bit for bit (MODEL.md takes them
// so); the same scalings at s = 1.5 must differ.
TEST(RotaryOptions, PlainSettingsGiveTheRotaryModelBitForBit) {
  Batch batch = make_batch({8, 5}, 8, 4);
  for (int32_t& p : batch.positions.values) p += 20;  // past yarn's L: its ramp would act
  for (const std::string norm : {"pre", "post"}) {
    const std::vector<std::vector<float>> plain = outputs(rotary_config(1.0, {}, norm), batch);
    for (const ScalingCase& s : {ScalingCase{"none"}, ScalingCase{"pi", 1.0},
                                 ScalingCase{"ntk", 1.0}, ScalingCase{"yarn", 1.0, 4}}) {
      ModelConfig config = rotary_config(1.0, s, norm);
      config.positional.keys.set("fraction", 1.0);
      EXPECT_EQ(outputs(config, batch), plain) << s.type << " " << norm;
      ScalingCase stretched = s;
      stretched.factor = 1.5;
      if (s.type == "none") stretched.type = "pi";
      EXPECT_NE(outputs(rotary_config(1.0, stretched, norm), batch)[0], plain[0])
          << s.type << " at s = 1.5 " << norm;
    }
  }
}

// config.yaml: a plain rotary run's text is what it was before the options existed, also
// when they are written out at their defaults; a set option is a nested mapping that reads
// back, and a checkpoint rebuilt from its metadata gives the same logits.
TEST(RotaryOptions, ConfigTextAndCheckpointsKeepTheOptions) {
  ModelConfig plain = tiny_config("rotary");
  const std::string text = model_sections_yaml(plain);
  EXPECT_NE(text.find("positional:\n  type: rotary\n  base: 10000\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("fraction"), std::string::npos) << text;
  EXPECT_EQ(text.find("scaling"), std::string::npos) << text;
  ModelConfig defaults = plain;
  defaults.positional.keys.set("fraction", int64_t{1});
  defaults.positional.keys.set("scaling.type", "none");
  defaults.positional.keys.set("scaling.factor", 1.0);
  EXPECT_EQ(model_sections_yaml(defaults), text);

  const ModelConfig yarn = rotary_config(0.5, {"yarn", 4.0, 16}, "pre");
  const std::string yarn_text = model_sections_yaml(yarn);
  EXPECT_NE(yarn_text.find("  fraction: 0.5\n  scaling:\n    type: yarn\n    factor: 4\n"
                           "    original_length: 16\n"),
            std::string::npos)
      << yarn_text;
  EXPECT_EQ(model_sections_yaml(model_config_from_yaml(yarn_text, "config.yaml")), yarn_text);

  Encoder model(yarn, make_scheme, 3);
  randomize_parameters(model, 4);
  const TempDir tmp;
  const std::string path = tmp / "yarn.safetensors";
  model_checkpoint(model, yarn_text).write(path);
  const std::unique_ptr<Encoder> loaded = load_model(path);
  Batch batch = make_batch({7, 3}, 7, 5);
  for (int32_t& p : batch.positions.values) p += 30;
  EXPECT_EQ(logits(model, batch), logits(*loaded, batch));
  model_checkpoint(model, model_sections_yaml(rotary_config(0.5, {}, "pre")))
      .write(tmp / "plain.safetensors");
  const std::unique_ptr<Encoder> unscaled = load_model(tmp / "plain.safetensors");
  EXPECT_GT(max_abs_diff(logits(model, batch), logits(*unscaled, batch)), kDiffers)
      << "the scaling must act, or the checkpoint test above could not fail";
}

}  // namespace
}  // namespace pelab::testing
