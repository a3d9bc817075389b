// The product counter (see the header): one relaxed atomic, added once per product call (a
// tile of the fused attention is a product of 16 x 16 x 64 at the least, so the add is noise).
#include "heed/kernels/flops.h"

#include <atomic>

namespace heed::kernels {
namespace {
std::atomic<uint64_t> g_flops{0};
}  // namespace

void count_product(int64_t M, int64_t N, int64_t K) {
  g_flops.fetch_add(
      2 * static_cast<uint64_t>(M) * static_cast<uint64_t>(N) * static_cast<uint64_t>(K),
      std::memory_order_relaxed);
}

double product_flops() {
  return static_cast<double>(g_flops.load(std::memory_order_relaxed));
}

}  // namespace heed::kernels
