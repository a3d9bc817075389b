// A runtime count as a compile-time one: the kernels' remainders (rows of a block, registers of
// a row) each run their own compiled loop, unrolled and held in registers.
// Leaves out: the kernels themselves (tile_gemm.cc, quantize.cc).
#pragma once

#include <cstdint>
#include <type_traits>

namespace heed::kernels {

// f(std::integral_constant<int, n>{}) for a runtime n in [1, Max]; n outside it: nothing. f
// reads the count as `constexpr int N = decltype(n)::value`.
template <int Max, class F>
void with_count(int64_t n, const F& f) {
  if constexpr (Max > 0) {
    if (n == Max)
      f(std::integral_constant<int, Max>{});
    else
      with_count<Max - 1>(n, f);
  }
}

}  // namespace heed::kernels
