// The floating-point work of heed's matrix products, counted where they run: every GEMM door
// (gemm.h, bf16.h, quantize.h) and the fused attention's small tiles add 2 M N K per product.
// `heed bench` divides the count by the target tokens of a training run (FLOPs per token) and
// by its time, against the machine's measured GEMM rate (model FLOPs utilisation).
// Leaves out: element-wise work (activations, softmax, norms): small beside the products and
// not what the utilisation is measured against.
#pragma once

#include <cstdint>

namespace heed::kernels {

// Adds the 2 M N K floating-point operations of one [M, K] x [K, N] product (any thread).
void count_product(int64_t M, int64_t N, int64_t K);

// The operations counted since the process started.
double product_flops();

}  // namespace heed::kernels
