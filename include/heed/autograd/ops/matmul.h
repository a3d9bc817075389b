// Matrix products on the graph: matmul (batched, with transposes) and linear (x W^T + b).
// Every product goes to kernels::gemm (oneDNN; with W^T stored for fp32 decoding), or
// kernels::gemm_int8 for int8 decoding, or kernels::gemm_bf16 for linear() and the RNN cells'
// recurrent product in a graph of Precision::bf16 (mixed-precision training).
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

// A search's read of an output layer y = x W^T + b [M, N] (beam search's over the vocabulary):
// each row's k largest entries from column `first` on (ids, best first, ties by lower id, and
// their values, [M, k]) and its log-sum-exp log_z [M], made from blocks of columns of y that
// stay in cache (inference_product's copies of W) instead of a [M, N] y written to memory and
// read again. The blocks are kBestColumns wide (as many as fit 256 KB of y per product), so a
// row's log_z does not depend on M. Without an inference copy of W, y is made whole (linear) and
// read the same way. log_z null: the best entries alone (a greedy search that reports no
// scores), no exponential taken. With W's fp32 copy and at most kDotRows rows, y's entries are
// per-row dots of W (vmath::dot: the product is memory-bound there), and k = 1 without log_z
// reads W's int8 screen when it has one (Parameter::screen): the same id and value, W read in
// fp32 only where its bound says the best entry can be.
constexpr int64_t kBestColumns = 512;
constexpr int64_t kDotRows = 2;
void best_outputs(Var x, Var w, Var b, int64_t first, int64_t k, int32_t* ids, float* values,
                  float* log_z);

// y [M, N] = x [M, K] W^T + beta y in fp32, for the same ops: on W^T stored once per graph
// (Graph::transposed_value) when W is a parameter and x has at most kStoredTransposeRows rows
// (an RNN's step: oneDNN repacks a transposed W at every call, 2-3x the product's own time at
// 16 rows), else on W as it is.
constexpr int64_t kStoredTransposeRows = 64;
void fp32_product(Var x, Var w, float beta, float* y);

// The products of y [M, N] = x [M, K] W^T in mixed precision (Precision::bf16), for ops with a
// product inside (linear, the fused RNN cells): x is rounded to bf16 once, in the forward, with
// its rows padded with zeros to kernels::kBf16Rows (so that dW's sum over rows, its K, takes few
// distinct sizes) and kept for the backward; a parameter W is rounded once per graph
// (Graph::bf16_value: an RNN's weights are read at every time step), any other W at each call;
// dy is rounded once for both gradient products.
struct Bf16Product {
  Bf16Product(Var x, Var w);
  // y = x W^T (+ bias [N]) + beta y
  void forward(float beta, float* y, const float* bias) const;
  // dx += dy W and dW += dy^T x, each when required; dy [M, N]
  void backward(const float* dy, Var x, Var w) const;

  int64_t M, Mp, N, K;
  kernels::bf16* xb;                  // bf16(x) [Mp, K]
  const kernels::bf16* wb = nullptr;  // bf16(W) [N, K]
};

}  // namespace heed
