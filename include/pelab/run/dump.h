// `pelab dump`: one batch through a trained run, and every tensor a researcher inspects it
// with, as one safetensors file that opens in Python's safetensors:
//
//   input.tokens, input.positions, input.mask, input.targets   [B, T] I64 (targets: -1 where
//                                                               nothing is scored)
//   output.logits [B, T, V_out], output.loss []                 F32
//   output.attention.<l>.weights [B, H, T, T]                   F32, with `attention`
//   grad.<parameter name>                                       F32, with `grads`
//
// The names use the prefixes the checkpoint reader skips (pelab/nn/checkpoint.h) and the
// parameter names of docs/model.md. The batch is taken exactly as given, in order: no
// sampling, no shuffling; the model runs in evaluation mode (no dropout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pelab/data/batch.h"
#include "pelab/data/task.h"
#include "pelab/io/safetensors.h"
#include "pelab/nn/encoder.h"

namespace pelab {

// Where the examples of a dumped batch come from: a dataset file (datasets/README.md), or a
// generated task, drawn as `pelab gen` draws it (`count` examples of each length in turn,
// from `seed`), so that dumping the task equals dumping the file `pelab gen` writes.
struct DumpSource {
  std::string file;  // a JSONL or TSV dataset file, or
  std::string task;  // the name of a generated task, with:
  std::vector<int64_t> lengths;
  int64_t count = 1;
  uint64_t seed = 0;
};

// The examples of a batch, in order, with where each one came from ("b.tsv:3"), for messages.
struct DumpExamples {
  std::vector<Example> examples;
  std::vector<std::string> where;
};

// Reads the examples, encoded with the run's vocabulary (`run_task`'s symbols; `run_name`
// names it in messages). A symbol the vocabulary lacks is an error naming file, line and
// symbol. A generated task uses the run's task parameters when it is the run's task. A run of
// task.layout: lm lays appended examples out as it trains on them (pelab/data/lm_layout.h).
DumpExamples read_dump_examples(const DumpSource& source, const Task& run_task,
                                const TaskConfig& run_task_config, const std::string& run_name);

enum class Padding { Right, Left };
Padding parse_padding(const std::string& text);  // "right" or "left"

struct DumpOptions {
  Padding padding = Padding::Right;
  // "" (p[b, t] = t, padding included), "shift=K" (p[b, t] = t + K), or a file with one line
  // per example: that example's positions, one per token as laid out (padded slots keep
  // their index).
  std::string positions;
  bool attention = false;  // output.attention.<l>.weights
  bool grads = false;      // grad.<parameter name>
};

// The batch the examples make: padded to the longest with token 0 and target -1 on the
// left or the right, positions as `options` say. Checks it against `model` (token ids,
// positions beyond a learned table, something scored, size); every problem is one error.
Batch make_dump_batch(const DumpExamples& examples, const DumpOptions& options,
                      const Encoder& model);

// The tensors of a dump for `batch` (already checked by make_dump_batch).
SafetensorsWriter dump_tensors(const Encoder& model, const Batch& batch,
                               const DumpOptions& options);

// The whole command: opens the run (a run directory or a checkpoint inside one, checked as
// `pelab eval` checks it), reads the batch, computes, and writes `out` atomically. Nothing
// is written when anything is wrong. Returns a one-line summary.
struct DumpRequest {
  std::string run;
  DumpSource source;
  DumpOptions options;
  std::string out;
  // Replace an existing --out file. Never one of a run directory's: only the trainer writes
  // there.
  bool overwrite = false;
};
std::string run_dump(const DumpRequest& request);

}  // namespace pelab
