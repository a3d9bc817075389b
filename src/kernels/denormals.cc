// Denormals flushed to zero (see the header).
// Leaves out: non-x86 CPUs.
#include "heed/kernels/denormals.h"

#include <omp.h>

#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>
#define HEED_X86_FTZ 1
#endif

namespace heed::kernels {
namespace {

void flush_here() {
#ifdef HEED_X86_FTZ
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);          // denormal results become 0 (FTZ)
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);  // denormal operands read as 0 (DAZ)
#endif
}

}  // namespace

void flush_denormals() {
  flush_here();
  thread_local bool team_flushed = false;  // the OpenMP team of this thread, once
  if (!team_flushed && !omp_in_parallel()) {
    team_flushed = true;
#pragma omp parallel
    flush_here();
  }
}

bool denormals_flushed() {
#ifdef HEED_X86_FTZ
  return _MM_GET_FLUSH_ZERO_MODE() == _MM_FLUSH_ZERO_ON &&
         _MM_GET_DENORMALS_ZERO_MODE() == _MM_DENORMALS_ZERO_ON;
#else
  return false;
#endif
}

}  // namespace heed::kernels
