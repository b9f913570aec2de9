// The dataset reader: arbitrary bytes as a JSONL file, a TSV file and a file whose format is
// guessed from its content; what parses must also build a file task.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "pelab/data/file_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* source : {"fuzz.jsonl", "fuzz.tsv", "fuzz"}) {
    try {
      const pelab::ParsedDataset d = pelab::parse_dataset_text(text, source);
      const pelab::FileTask task(pelab::build_file_task_data(d, d));
      for (const int n : task.eval_sizes()) task.evaluation_set(n, 4, 1);
    } catch (const pelab::Error& e) {
      pelab::fuzz::check_error(e);
    }
  }
  return 0;
}
