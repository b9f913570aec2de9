// What machine this is, for the record: results of float32 training differ in the last bits
// between CPU kinds (vector width changes the order of sums), so every recorded result names
// the CPU and the vector instructions it ran with.
#pragma once

#include <string>

namespace pelab {

// The CPU's model name from /proc/cpuinfo with its family and model numbers
// ("AMD EPYC 7B13 (family 25, model 1)"), or "unknown".
std::string cpu_model_name();

// The widest vector instructions the CPU offers for float math: "avx512", "avx2" or "scalar".
std::string cpu_vector_isa();

// The kernels pelab's own vectorised loops come in (the small GEMM, the dropout masks), each
// chosen at run time: Avx2 needs AVX2 and FMA, Avx512 those and AVX-512F, Portable nothing.
enum class VectorKernel { Avx512, Avx2, Portable };
bool vector_kernel_runs_here(VectorKernel kernel);  // this CPU has the kernel's instructions
VectorKernel best_vector_kernel();                  // the first of them that runs here
// "avx512 (AVX-512F)", "avx2 (AVX2 and FMA)" or "portable", for messages.
const char* describe(VectorKernel kernel);

}  // namespace pelab
