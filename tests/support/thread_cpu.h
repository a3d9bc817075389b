// Cost measurements in tests: the CPU time of the calling thread, and a guard that runs the
// library on one thread for its scope (a pool's spinning at its barriers would be counted,
// whatever the other core does), restoring the count after.
#pragma once

#include <time.h>

#include "heed/kernels/parallel.h"

namespace heed::testing {

// Seconds of CPU the calling thread has used.
inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

class OneThread {
 public:
  OneThread() : before_(heed::threads()) { set_threads(1); }
  ~OneThread() { set_threads(before_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int before_;
};

}  // namespace heed::testing
