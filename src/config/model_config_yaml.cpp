#include "pelab/config/model_config_yaml.h"

#include <yaml-cpp/emitter.h>

#include <fmt/format.h>

#include <algorithm>

#include "pelab/core/strings.h"
#include "pelab/positional/scheme.h"

namespace pelab {

void read_model_section(MapReader& m, ModelConfig& c) {
  m.read("vocab_in", c.vocab_in);
  m.read("vocab_out", c.vocab_out);
  m.read("d_model", c.d_model);
  m.read("heads", c.heads);
  m.read("layers", c.layers);
  m.read("d_ff", c.d_ff);
  m.read("dropout", c.dropout);
  m.read("norm", c.norm);
  m.read("causal", c.causal);
  m.read("activation", c.activation);
  double scale = 0.0;
  if (m.read("embed_scale", scale)) c.embed_scale = scale;
  m.finish({"vocab_in", "vocab_out", "d_model", "heads", "layers", "d_ff", "dropout", "norm",
            "causal", "activation", "embed_scale"});
}

namespace {
void read_randomize(MapReader& rnd, RandomizeConfig& randomize) {
  // Far above any real length, and far from overflow in the position arithmetic.
  constexpr int64_t kMaxPositions = int64_t{1} << 24;
  if (rnd.read("max_position", randomize.max_position) &&
      (randomize.max_position < 0 || randomize.max_position > kMaxPositions))
    rnd.fail("max_position",
             fmt::format("must be in [0, {}], got {}", kMaxPositions, randomize.max_position));
  rnd.read("at_eval", randomize.at_eval);
  rnd.finish({"max_position", "at_eval"});
}
}  // namespace

void read_positional_section(MapReader& r, PositionalConfig& p, RandomizeConfig* randomize) {
  for (const std::string& key : r.keys_present()) p.keys_given.insert(key);
  r.read("type", p.type);
  r.read("combine", p.combine);
  r.read("dim", p.dim);
  r.read("scale", p.scale);
  r.read("base", p.base);
  r.read("max_len", p.max_len);
  r.read("max_distance", p.max_distance);
  r.read("num_buckets", p.num_buckets);
  RandomizeConfig ignored;
  MapReader rnd = r.section("randomize");
  read_randomize(rnd, randomize ? *randomize : ignored);
  r.finish({"type", "combine", "dim", "scale", "base", "max_len", "max_distance", "num_buckets",
            "randomize"});
  // The scheme's own key list: a key the scheme does not take is an error at its line.
  const std::vector<std::string> names = scheme_names();
  if (std::find(names.begin(), names.end(), p.type) == names.end()) {
    r.fail("type", fmt::format("unknown scheme '{}' (valid: {})", p.type, join(names)));
  }
  const SchemeInfo& info = scheme_info(p.type);
  for (const std::string& key : p.keys_given) {
    if (key == "type" || key == "randomize") continue;
    if (std::find(info.keys.begin(), info.keys.end(), key) == info.keys.end()) {
      const std::string takes = join(info.keys);
      r.fail(key, fmt::format("the '{}' scheme does not take this key (it takes: {})", p.type,
                              takes.empty() ? "none" : takes));
    }
  }
}

void read_model_sections(MapReader& root, ModelConfig& c) {
  MapReader model = root.section("model");
  read_model_section(model, c);
  MapReader positional = root.section("positional");
  read_positional_section(positional, c.positional);
}

std::string model_sections_yaml(const ModelConfig& c, const RandomizeConfig& randomize) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "vocab_in" << YAML::Value << c.vocab_in;
  out << YAML::Key << "vocab_out" << YAML::Value << c.vocab_out;
  out << YAML::Key << "d_model" << YAML::Value << c.d_model;
  out << YAML::Key << "heads" << YAML::Value << c.heads;
  out << YAML::Key << "layers" << YAML::Value << c.layers;
  out << YAML::Key << "d_ff" << YAML::Value << c.ffn_width();
  out << YAML::Key << "dropout" << YAML::Value << yaml_number(c.dropout);
  out << YAML::Key << "norm" << YAML::Value << c.norm;
  out << YAML::Key << "causal" << YAML::Value << c.causal;
  out << YAML::Key << "activation" << YAML::Value << c.activation;
  out << YAML::Key << "embed_scale" << YAML::Value << yaml_number(c.embedding_scale());
  out << YAML::EndMap;
  // Every key the scheme takes, resolved (defaults written out); no other key, so the text
  // reloads without errors.
  const PositionalConfig& p = c.positional;
  const SchemeInfo& info = scheme_info(p.type);
  std::set<std::string> keys(info.keys.begin(), info.keys.end());
  if (p.combine != "concat") keys.erase("dim");
  const int64_t default_distance = p.type == "t5" ? 128 : 16;
  out << YAML::Key << "positional" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << p.type;
  auto emit = [&](const char* key, auto value) {
    if (!keys.count(key)) return;
    if constexpr (std::is_floating_point_v<decltype(value)>)
      out << YAML::Key << key << YAML::Value << yaml_number(value);
    else
      out << YAML::Key << key << YAML::Value << value;
  };
  emit("combine", p.combine);
  emit("dim", p.dim);
  emit("scale", p.scale);
  emit("base", p.base);
  emit("max_len", p.max_len);
  emit("max_distance", p.max_distance > 0 ? p.max_distance : default_distance);
  emit("num_buckets", p.num_buckets);
  if (randomize.max_position > 0) {
    out << YAML::Key << "randomize" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "max_position" << YAML::Value << randomize.max_position;
    out << YAML::Key << "at_eval" << YAML::Value << randomize.at_eval;
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ModelConfig model_config_from_yaml(const std::string& text, const std::string& source) {
  const YAML::Node root = load_yaml_string(text, source);
  MapReader reader(root, source, "");
  ModelConfig config;
  read_model_sections(reader, config);
  return config;
}

}  // namespace pelab
