// Element-wise kernels: unary maps and their derivatives, broadcasting binary ops, reduction of
// a broadcast gradient back to an operand's shape. Plain loops the compiler vectorises,
// threaded over large tensors.
// Leaves out: graphs. These take raw pointers and shapes; autograd/ops/ wraps them.
#pragma once

#include <cstdint>

#include "heed/tensor/shape.h"

namespace heed::kernels {

enum class Unary { Tanh, Sigmoid, Relu, Gelu, Exp, Log, Sqrt };
// y = f(x)
void unary_forward(Unary op, const float* x, float* y, int64_t n);
// dx = dy * f'(x), or dx += that with accumulate; using y = f(x) where that is cheaper
void unary_backward(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                    bool accumulate);

// The gates of gated convolutions, on rows of [a ; b], ab [rows, 2C] (a = ab[:, :C],
// b = ab[:, C:]):
//   Tanh  y = tanh(a) sigmoid(b)   (WaveNet, van den Oord et al. 2016, eq. 2)
//   Glu   y = a sigmoid(b)         (the gated linear unit, Dauphin et al. 2017; ConvS2S)
enum class Gate { Tanh, Glu };
void gate_forward(Gate gate, const float* ab, float* y, int64_t rows, int64_t C);
// Tanh: dab (+)= [dy (1 - tanh^2(a)) sigmoid(b) ; dy tanh(a) sigmoid(b) (1 - sigmoid(b))]
// Glu:  dab (+)= [dy sigmoid(b) ; dy a sigmoid(b) (1 - sigmoid(b))]       (+= with accumulate)
void gate_backward(Gate gate, const float* ab, const float* dy, float* dab, int64_t rows, int64_t C,
                   bool accumulate);

enum class Binary { Add, Sub, Mul, Div };
// c = a (op) b with NumPy broadcasting; c has shape `out`. With accumulate, c += a (op) b.
void binary(Binary op, const float* a, const Shape& sa, const float* b, const Shape& sb, float* c,
            const Shape& out, bool accumulate = false);

// dst[shape `to`] = g[shape `from`] summed over the axes that `to` broadcasts (size 1 or
// absent); with accumulate, dst += that.
void reduce_to(const float* g, const Shape& from, float* dst, const Shape& to, bool accumulate);

// Inverted dropout with a counter-based mask: y = x * keep_i / (1 - p), keep_i = u_i >= p with
// u_i = hash_bits24(stream, i) / 2^24 (kernels/random.h). With accumulate, y += that (the
// backward, which regenerates the same mask).
void dropout(const float* x, float* y, int64_t n, uint64_t stream, float p, bool accumulate);
// y = x, threaded: the copy lands in every core's cache, as the threads that read it next expect
void copy(const float* x, float* y, int64_t n);
// y = alpha * x + y; y = alpha * x + beta; x *= alpha
void axpy(float alpha, const float* x, float* y, int64_t n);
void affine(const float* x, float alpha, float beta, float* y, int64_t n);
void scale(float* x, float alpha, int64_t n);
double sum_squares(const float* x, int64_t n);
// y [M, N]: every row set to b [N] (or b added to it, when `accumulate`) — a bias preloaded into C
// for a GEMM with beta 1
void preload_rows(const float* b, int64_t M, int64_t N, float* y, bool accumulate);
// The same for the block y [M, N] of a matrix whose rows are ldy apart
void preload_block(const float* b, int64_t M, int64_t N, float* y, int64_t ldy, bool accumulate);

}  // namespace heed::kernels
