// Loading the PyTorch reference fixtures (tests/fixtures/model/*.safetensors).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pelab/config/load_model.h"
#include "pelab/data/batch.h"
#include "pelab/io/safetensors.h"

namespace pelab::testing {

inline std::string fixture_dir() {
  return PELAB_SOURCE_DIR "/tests/fixtures/model";
}

inline std::vector<std::string> fixture_cases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_dir()))
    if (entry.path().extension() == ".safetensors") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline Batch fixture_batch(const SafetensorsFile& file) {
  Batch batch;
  batch.tokens = file.int_tensor("input.tokens");
  batch.positions = file.int_tensor("input.positions");
  batch.key_mask = file.int_tensor("input.key_mask");
  batch.targets = file.int_tensor("input.targets");
  return batch;
}

}  // namespace pelab::testing
