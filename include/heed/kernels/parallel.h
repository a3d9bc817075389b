// Threading: one OpenMP pool, sized by set_threads (the CLI's --threads), and parallel_for.
// Leaves out: task graphs; every kernel is a data-parallel loop over rows or elements.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace heed {

// The most threads set_threads takes (OpenMP's pool crashed at 100,000).
inline constexpr int kMaxThreads = 1024;
// Sets the number of threads used by heed's kernels and by oneDNN (n <= 0: all cores); more
// than kMaxThreads is an Error.
void set_threads(int n);
int threads();
// Gives the calling thread the count set_threads chose. OpenMP keeps the count per thread: a
// thread started after set_threads (a server's decoding worker, a Python thread calling in)
// begins with the runtime's default, every core, and its matrix products would wake a second
// OpenMP thread that spins beside them. Graph's constructor calls it, so every thread that
// builds a graph computes with --threads. Both also flush denormals (kernels/denormals.h).
void adopt_threads();

// Work below this many multiply-adds (or element operations) runs on the calling thread: waking
// the OpenMP team and joining it costs more than the work saves (batch-1 decoding is a few
// hundred such products and element-wise ops a step).
constexpr int64_t kSerialWork = int64_t{1} << 18;

// Items per chunk of parallel_for so that a chunk does at least `min_work` operations, each
// item costing `work_per_item` (never 0, whatever the sizes).
inline int64_t grain_for(int64_t min_work, int64_t work_per_item) {
  return std::max<int64_t>(1, min_work / std::max<int64_t>(work_per_item, 1));
}

// While alive, OpenMP regions opened on this thread (heed's and oneDNN's) use one thread when
// `serial` is true; the previous thread count comes back at the end of the scope.
class SerialScope {
 public:
  explicit SerialScope(bool serial) : saved_(serial ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_;
};

// Calls f(begin, end) on contiguous chunks of [0, n), in parallel when n > grain.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (nt <= 1 || n <= grain) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
#pragma omp parallel num_threads(static_cast <int>(chunks))
  {
    int64_t t = omp_get_thread_num();
    int64_t per = (n + chunks - 1) / chunks;
    int64_t b = t * per, e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

}  // namespace heed
