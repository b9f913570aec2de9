// `pelab bench attention`: the fused attention op alone (forward, and forward with backward) at
// a small model's step shapes, on random q, k, v: the kernel work of a training step's
// attention without the rest of the step, for measuring changes to that kernel. Each length
// times the block kernel and, for heads of width 8 or 16 on a CPU with AVX2 or AVX-512, the
// rows-in-lanes kernel, their calls alternating, so that both see the same machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pelab {

struct AttentionBenchOptions {
  std::vector<int64_t> lengths{42};  // T; 42: R1's reverse at its mean size
  int64_t batch = 32, d_model = 64, heads = 8;
  double dropout = 0.1;
  int threads = 1;
  int calls = 200;  // timed calls per length (after 20 untimed)
  std::string json;
};

struct AttentionBenchRow {
  int64_t length;
  std::string kernel;  // "blocks" or "lanes"
  double forward_ms;   // median over calls, no gradient kept
  double training_ms;  // median over calls: forward keeping α, then backward
  // The per-head products' multiply-adds (2 forward, 4 backward) a second of training_ms.
  double product_gflops;
};

std::vector<AttentionBenchRow> run_attention_bench(const AttentionBenchOptions& options);

// Runs it and prints its table; writes JSON when `json` is set.
int print_attention_bench(const AttentionBenchOptions& options);

}  // namespace pelab
