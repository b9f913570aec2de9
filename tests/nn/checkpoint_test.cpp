// Checkpoints: save → load gives a model with identical outputs, rebuilt from the checkpoint
// alone; a checkpoint that does not fit its config is a clear error.
#include <gtest/gtest.h>

#include <filesystem>

#include "nn/model_util.h"
#include "pelab/config/load_model.h"
#include "pelab/config/model_config_yaml.h"
#include "pelab/core/error.h"
#include "pelab/positional/scheme.h"
#include "pelab_process.h"

namespace pelab::testing {
namespace {

class CheckpointRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointRoundTrip, LoadedModelGivesIdenticalOutputs) {
  ModelConfig config = tiny_config(GetParam());
  if (GetParam() == "sinusoidal") {  // exercise a non-default key through the config text
    config.positional.keys.set("combine", "concat");
    config.positional.keys.set("dim", int64_t{4});
  }
  Encoder model(config, make_scheme, 3);
  randomize_parameters(model, 4);
  const TempDir tmp;
  const std::string path = tmp / (GetParam() + ".safetensors");
  model_checkpoint(model, model_sections_yaml(config)).write(path);
  const std::unique_ptr<Encoder> loaded = load_model(path);
  const Batch batch = make_batch({7, 3}, 7, 5);
  NoGradGuard no_grad;
  EXPECT_EQ(model.forward(batch).logits.to_vector(), loaded->forward(batch).logits.to_vector());
  EXPECT_EQ(loaded->params().count(), model.params().count());
}

INSTANTIATE_TEST_SUITE_P(Schemes, CheckpointRoundTrip, ::testing::ValuesIn(scheme_names()),
                         [](const auto& p) { return p.param; });

TEST(Checkpoint, ShapeThatDoesNotFitTheConfigIsAClearError) {
  ModelConfig config = tiny_config("relative");
  Encoder model(config, make_scheme, 3);
  const TempDir tmp;
  const std::string path = tmp / "mismatch.safetensors";
  ModelConfig other = config;
  other.positional.keys.set("max_distance",
                            int64_t{5});  // the config says k = 5, the tables hold 2·16+1 rows
  model_checkpoint(model, model_sections_yaml(other)).write(path);
  try {
    load_model(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("layers.0.attn.rel_k"), std::string::npos) << m;
    EXPECT_NE(m.find("[33, 8]"), std::string::npos) << m;
    EXPECT_NE(m.find("[11, 8]"), std::string::npos) << m;
  }
}

TEST(Checkpoint, MissingAndExtraParametersAreNamed) {
  Encoder model(tiny_config("none"), make_scheme, 3);
  SafetensorsWriter w = model_checkpoint(model, model_sections_yaml(model.config()));
  w.add("pos.weight", Tensor::zeros({4, 16}));
  const TempDir tmp;
  const std::string path = tmp / "extra.safetensors";
  w.write(path);
  try {
    load_model(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'pos.weight' is not a parameter"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pelab::testing
