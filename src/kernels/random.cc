// Rng::normal by the Box-Muller transform.
// Leaves out: caching the second variate (keeps the state a pure function of draws).
#include <cmath>

#include "heed/kernels/random.h"

namespace heed {

float Rng::normal() {
  float u1 = uniform(), u2 = uniform();
  if (u1 < 1e-12f) u1 = 1e-12f;
  return std::sqrt(-2.f * std::log(u1)) * std::cos(6.2831853071795864f * u2);
}

}  // namespace heed
