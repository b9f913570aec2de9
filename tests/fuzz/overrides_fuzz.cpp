// The override parser: each input line is one `key=value` given on the command line, applied
// to a small valid config.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "../pelab_process.h"
#include "fuzz_util.h"
#include "pelab/config/experiment.h"

namespace {
const std::string kBase = pelab::fuzz::base_config();
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> overrides;
  std::stringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line) && overrides.size() < 16;)
    overrides.push_back(line);
  try {
    pelab::parse_experiment(kBase, "base.yaml", overrides, PELAB_SOURCE_DIR "/configs");
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  return 0;
}
