// Thread-count control shared by heed's kernels and oneDNN (both use the OpenMP runtime).
// Leaves out: affinity; OMP_PROC_BIND and friends still apply.
#include "heed/kernels/parallel.h"

namespace heed {

void set_threads(int n) {
  omp_set_num_threads(n > 0 ? n : omp_get_num_procs());
}

int threads() {
  return omp_get_max_threads();
}

}  // namespace heed
