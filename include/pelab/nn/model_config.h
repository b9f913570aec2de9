// The model's configuration: MODEL.md's keys, typed. YAML is read into these structs once
// (src/config/); the rest of pelab never touches YAML.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "pelab/core/keys.h"

namespace pelab {

struct PositionalConfig {
  std::string type = "none";
  // The positional.* keys given; building the scheme fills in its defaults for the others.
  // Which keys a scheme takes, with their types, defaults and valid ranges, is the scheme's
  // own table (src/positional/); nn only carries the values to it.
  KeyValues keys;
};

struct ModelConfig {
  int64_t vocab_in = 0;   // from the task or dataset
  int64_t vocab_out = 0;  // from the task or dataset
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t layers = 2;
  int64_t d_ff = 0;  // 0 = 4·d_model
  double dropout = 0.0;
  std::string norm = "pre";  // pre | post
  bool causal = false;
  std::string activation = "gelu";    // gelu | relu
  std::optional<double> embed_scale;  // default sqrt(d_model)
  PositionalConfig positional;

  int64_t ffn_width() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  int64_t head_dim() const { return d_model / heads; }
  double embedding_scale() const;
};

}  // namespace pelab
