// Broadcasting + - * / and the scalar affine map, forward and backward side by side.
// Leaves out: in-place variants (the graph keeps every value for backward).
#include "heed/autograd/ops/arithmetic.h"

#include "heed/kernels/elementwise.h"

namespace heed {
namespace {

using kernels::Binary;

// dst (shape `to`) += reduce_to_shape(g (op) other), without a temporary when `to` is the
// output shape. other == nullptr means g itself.
void accumulate(Graph& G, const Tensor& g, const float* other, const Shape& other_shape, Binary op,
                float* dst, const Shape& to) {
  const Shape& out = g.shape();
  if (!other) {
    kernels::reduce_to(g.data(), out, dst, to);
  } else if (to == out) {
    kernels::binary(op, g.data(), out, other, other_shape, dst, out, /*accumulate=*/true);
  } else {
    Tensor tmp = G.alloc(out);
    kernels::binary(op, g.data(), out, other, other_shape, tmp.data(), out);
    kernels::reduce_to(tmp.data(), out, dst, to);
  }
}

Var binary_op(Binary op, Var a, Var b, const char* name) {
  Shape out = broadcast_shapes(a.shape(), b.shape(), name);
  Graph& G = a.graph();
  Tensor c = G.alloc(out);
  kernels::binary(op, a.value().data(), a.shape(), b.value().data(), b.shape(), c.data(), out);
  return G.make(c, {a, b}, [=, &G](const Tensor& dc) {
    const Shape &sa = a.shape(), &sb = b.shape();
    const float *A = a.value().data(), *B = b.value().data();
    switch (op) {
      case Binary::Add:  // dA += dC, dB += dC
      case Binary::Sub:  // dA += dC, dB -= dC
        if (a.requires_grad()) accumulate(G, dc, nullptr, out, op, a.grad().data(), sa);
        if (b.requires_grad()) {
          if (op == Binary::Add) {
            accumulate(G, dc, nullptr, out, op, b.grad().data(), sb);
          } else {
            Tensor neg = G.alloc(out);
            kernels::affine(dc.data(), -1.f, 0.f, neg.data(), out.numel());
            accumulate(G, neg, nullptr, out, op, b.grad().data(), sb);
          }
        }
        break;
      case Binary::Mul:  // dA += dC * B, dB += dC * A
        if (a.requires_grad()) accumulate(G, dc, B, sb, Binary::Mul, a.grad().data(), sa);
        if (b.requires_grad()) accumulate(G, dc, A, sa, Binary::Mul, b.grad().data(), sb);
        break;
      case Binary::Div:  // dA += dC / B, dB += -dC * C / B
        if (a.requires_grad()) accumulate(G, dc, B, sb, Binary::Div, a.grad().data(), sa);
        if (b.requires_grad()) {
          Tensor t = G.alloc(out);
          kernels::binary(Binary::Mul, dc.data(), out, c.data(), out, t.data(), out);
          kernels::scale(t.data(), -1.f, out.numel());
          accumulate(G, t, B, sb, Binary::Div, b.grad().data(), sb);
        }
        break;
    }
  });
}

}  // namespace

Var add(Var a, Var b) {
  return binary_op(Binary::Add, a, b, "add");
}
Var sub(Var a, Var b) {
  return binary_op(Binary::Sub, a, b, "sub");
}
Var mul(Var a, Var b) {
  return binary_op(Binary::Mul, a, b, "mul");
}
Var div(Var a, Var b) {
  return binary_op(Binary::Div, a, b, "div");
}

Var affine(Var x, float alpha, float beta) {
  Graph& G = x.graph();
  Tensor y = G.alloc(x.shape());
  kernels::affine(x.value().data(), alpha, beta, y.data(), y.numel());
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx += alpha dy
    kernels::axpy(alpha, dy.data(), x.grad().data(), dy.numel());
  });
}

}  // namespace heed
