// Matrix products on the graph: matmul (batched, with transposes) and linear (x W^T + b).
// Every product goes to kernels::gemm (oneDNN; with W^T stored for fp32 decoding), or
// kernels::gemm_int8 for int8 decoding, or
// kernels::gemm_bf16 for linear() in a graph of Precision::bf16 (mixed-precision training).
// Leaves out: sparse products, int8 training.
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

struct MatmulOptions {
  bool trans_a = false;  // use A^T: A is stored [..., K, M]
  bool trans_b = false;  // use B^T: B is stored [..., N, K]
  float alpha = 1.f;     // C = alpha op(A) op(B)
};

// C [..., M, N] = alpha op(A) [..., M, K] op(B) [..., K, N].
// Either operand may be 2-D while the other is batched (the 2-D one is shared by the batch);
// otherwise the batch dims must be equal. A batched A times a 2-D B is one GEMM.
Var matmul(Var a, Var b, MatmulOptions opts = {});

// y [..., N] = x [..., K] W^T + b,  W [N, K] (rows are output units), b [N] (bias optional).
// One GEMM with the bias preloaded into C.
Var linear(Var x, Var w, Var b);
Var linear(Var x, Var w);

// For ops with a product inside (linear, the fused RNN cells): y [M, N] = x [M, K] W^T
// (+ bias) (+ y when `accumulate`) on W's copy for decoding, when x's graph is an inference graph
// and W a parameter prepared for inference (ParameterStore::prepare_for_inference): its int8 copy
// when W is wide enough to pay for quantizing x (kernels::kInt8MinOutputs), else its fp32
// transpose. Returns false, touching nothing, if neither applies.
bool inference_product(Var x, Var w, const float* bias, bool accumulate, float* y);

}  // namespace heed
