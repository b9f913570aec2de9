#include "pelab/config/model_config_yaml.h"

#include <yaml-cpp/emitter.h>

#include <fmt/format.h>

#include <algorithm>

#include "pelab/config/key_yaml.h"
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
  m.read("norm", c.norm, {"pre", "post"});
  m.read("causal", c.causal);
  m.read("activation", c.activation, {"gelu", "relu"});
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
  if (rnd.read("eval_draws", randomize.eval_draws) &&
      (randomize.eval_draws < 1 || randomize.eval_draws > 100))
    rnd.fail("eval_draws", fmt::format("must be in [1, 100], got {}", randomize.eval_draws));
  rnd.finish({"max_position", "at_eval", "eval_draws"});
}
}  // namespace

namespace {
// A scheme key named "group.key" (rotary's "scaling.type") is the key `key` of the nested
// mapping `group`: read through that mapping's own reader, so that an unknown key or a wrong
// value inside it is named with its file and line like any other.
void read_nested_keys(MapReader& r, const std::string& group, const SchemeInfo& info,
                      KeyValues& values) {
  MapReader nested = r.section(group);
  std::vector<std::string> valid;
  for (const SchemeKey& key : info.keys) {
    if (key.name.rfind(group + ".", 0) != 0) continue;
    SchemeKey inner = key;
    inner.name = key.name.substr(group.size() + 1);
    valid.push_back(inner.name);
    KeyValues read;
    if (read_key(nested, inner, read)) values.set(key.name, read.all().at(inner.name));
  }
  nested.finish(valid);
}

bool takes_group(const SchemeInfo& info, const std::string& group) {
  return std::any_of(info.keys.begin(), info.keys.end(),
                     [&](const SchemeKey& k) { return k.name.rfind(group + ".", 0) == 0; });
}
}  // namespace

void read_positional_section(MapReader& r, PositionalConfig& p, RandomizeConfig* randomize) {
  r.read("type", p.type, scheme_names());
  const SchemeInfo* info = is_scheme(p.type) ? &scheme_info(p.type) : nullptr;
  // The keys the scheme takes, typed by its table; keys of other schemes are errors below,
  // after unknown keys (a typo is told as such, with the nearest key).
  std::vector<std::string> not_taken;
  std::vector<std::string> valid = {"type"};
  for (const std::string& key_name : all_scheme_keys()) {
    const size_t dot = key_name.find('.');
    const std::string name = key_name.substr(0, dot);  // a nested mapping's name, or the key
    if (std::find(valid.begin(), valid.end(), name) != valid.end()) continue;
    valid.push_back(name);
    if (!r.has(name)) continue;
    if (dot != std::string::npos && info && takes_group(*info, name)) {
      read_nested_keys(r, name, *info, p.keys);
    } else if (const SchemeKey* key = info ? info->key(name) : nullptr) {
      read_key(r, *key, p.keys);
    } else {
      r.take(name);
      not_taken.push_back(name);
    }
  }
  RandomizeConfig ignored;
  MapReader rnd = r.section("randomize");
  read_randomize(rnd, randomize ? *randomize : ignored);
  valid.push_back("randomize");
  r.finish(valid);
  if (!info)
    r.fail("type", fmt::format("unknown scheme '{}' (valid: {})", p.type, join(scheme_names())));
  std::sort(not_taken.begin(), not_taken.end());
  if (!not_taken.empty()) r.fail(not_taken.front(), key_not_taken(*info));
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
  // Every key the scheme takes that has a value, defaults written out, in its table's order;
  // no other key, so the text reloads without errors.
  const PositionalConfig& p = c.positional;
  const KeyValues keys = resolve_defaults(p);
  out << YAML::Key << "positional" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << p.type;
  emit_keys(out, scheme_info(p.type).keys, keys);
  if (randomize.max_position > 0) {
    out << YAML::Key << "randomize" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "max_position" << YAML::Value << randomize.max_position;
    out << YAML::Key << "at_eval" << YAML::Value << randomize.at_eval;
    out << YAML::Key << "eval_draws" << YAML::Value << randomize.eval_draws;
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
