// Matrix products on the graph: matmul (batched, with transposes) and linear (x W^T + b).
// Every product goes to kernels::gemm (oneDNN). Leaves out: sparse and quantised products.
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

}  // namespace heed
