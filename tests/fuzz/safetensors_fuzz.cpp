// The checkpoint reader: arbitrary bytes as a safetensors file, then, when they parse, as the
// checkpoint of a small fixed model (parameters that are missing, extra or of the wrong shape)
// and of the model its own config metadata describes.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "pelab/config/load_model.h"
#include "pelab/io/safetensors.h"
#include "pelab/positional/scheme.h"

namespace {
pelab::ModelConfig small_model() {
  pelab::ModelConfig c;
  // The model of corpus/safetensors/pelab_checkpoint.safetensors (a 2-step run of `copy`).
  c.vocab_in = 5;
  c.vocab_out = 3;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 1;
  c.positional.type = "learned";
  c.positional.keys.set("max_len", int64_t{5});
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static pelab::Encoder model(small_model(), pelab::make_scheme, 0);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  pelab::SafetensorsFile file;
  try {
    file = pelab::read_safetensors_bytes(bytes, "fuzz.safetensors");
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
    return 0;
  }
  for (const pelab::SafetensorsTensor& t : file.tensors) {
    try {
      if (t.dtype == "F32")
        file.tensor(t.name);
      else
        file.int_tensor(t.name);
    } catch (const pelab::Error& e) {
      pelab::fuzz::check_error(e);
    }
  }
  try {
    pelab::load_parameters(model, file);
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  try {
    pelab::load_model(file);
  } catch (const pelab::Error& e) {
    pelab::fuzz::check_error(e);
  }
  return 0;
}
