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

}  // namespace pelab
