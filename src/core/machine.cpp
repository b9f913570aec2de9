#include "pelab/core/machine.h"

#include <fstream>
#include <map>

namespace pelab {

std::string cpu_model_name() {
  // The first processor's fields; a virtual machine may show a generic name ("AMD EPYC"),
  // so the family and model numbers, which tell CPU generations apart, come along.
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t key_end = line.find_last_not_of(" \t", colon == 0 ? 0 : colon - 1);
    const size_t value_start = line.find_first_not_of(" \t", colon + 1);
    fields[line.substr(0, key_end + 1)] =
        value_start == std::string::npos ? "" : line.substr(value_start);
  }
  std::string name = fields.count("model name") ? fields["model name"] : "unknown";
  if (!fields.count("cpu family") || !fields.count("model")) return name;
  return name + " (family " + fields["cpu family"] + ", model " + fields["model"] + ")";
}

bool vector_kernel_runs_here(VectorKernel kernel) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f");
  switch (kernel) {
    case VectorKernel::Avx512:
      return avx512;
    case VectorKernel::Avx2:
      return avx2;
    case VectorKernel::Portable:
      return true;
  }
  return false;
#else
  return kernel == VectorKernel::Portable;
#endif
}

VectorKernel best_vector_kernel() {
  for (const VectorKernel k : {VectorKernel::Avx512, VectorKernel::Avx2})
    if (vector_kernel_runs_here(k)) return k;
  return VectorKernel::Portable;
}

const char* describe(VectorKernel kernel) {
  switch (kernel) {
    case VectorKernel::Avx512:
      return "avx512 (AVX-512F)";
    case VectorKernel::Avx2:
      return "avx2 (AVX2 and FMA)";
    case VectorKernel::Portable:
      return "portable";
  }
  return "?";
}

// The record names the kernels pelab's own loops run (every AVX-512F CPU has AVX2 and FMA).
std::string cpu_vector_isa() {
  switch (best_vector_kernel()) {
    case VectorKernel::Avx512:
      return "avx512";
    case VectorKernel::Avx2:
      return "avx2";
    case VectorKernel::Portable:
      break;
  }
  return "scalar";
}

}  // namespace pelab
