#include "pelab/nn/model_config.h"

#include <cmath>

#include "pelab/core/error.h"

namespace pelab {

double ModelConfig::embedding_scale() const {
  return embed_scale ? *embed_scale : std::sqrt(static_cast<double>(d_model));
}

}  // namespace pelab
