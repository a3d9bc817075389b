// Thread-count control shared by heed's kernels and oneDNN (both use the OpenMP runtime).
// Leaves out: affinity; OMP_PROC_BIND and friends still apply.
#include "heed/kernels/parallel.h"

#include <atomic>

#include "heed/kernels/denormals.h"
#include "heed/util/error.h"

namespace heed {
namespace {

std::atomic<int> configured{0};  // set_threads' count; 0: never called (OpenMP's own default)

}  // namespace

void set_threads(int n) {
  check(n <= kMaxThreads, "threads must be in 0..", kMaxThreads, " (0: all cores), got ", n);
  const int count = n > 0 ? n : omp_get_num_procs();
  configured.store(count, std::memory_order_relaxed);
  omp_set_num_threads(count);
  kernels::flush_denormals();
}

void adopt_threads() {
  const int n = configured.load(std::memory_order_relaxed);
  if (n > 0 && !omp_in_parallel() && omp_get_max_threads() != n) omp_set_num_threads(n);
  kernels::flush_denormals();
}

int threads() {
  return omp_get_max_threads();
}

}  // namespace heed
