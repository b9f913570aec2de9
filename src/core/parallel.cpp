#include "pelab/core/parallel.h"

#include <cblas.h>

#include "pelab/core/error.h"

namespace pelab {

void set_num_threads(int n) {
  PELAB_CHECK(n >= 1, "threads must be at least 1, got {}", n);
  omp_set_num_threads(n);
  openblas_set_num_threads(1);
}

int num_threads() {
  return omp_get_max_threads();
}

}  // namespace pelab
