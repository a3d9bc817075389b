// Broadcasting + - * / and the scalar affine map, forward and backward side by side.
// Leaves out: in-place variants (the graph keeps every value for backward).
#include "heed/autograd/ops/arithmetic.h"

#include "heed/kernels/elementwise.h"

namespace heed {
namespace {

using kernels::Binary;

// x's gradient (shape `to`) += reduce_to_shape(g (op) other) -- or = for its first
// contribution -- without a temporary when `to` is the output shape. other == nullptr means g.
void accumulate(Graph& G, const Tensor& g, const float* other, const Shape& other_shape, Binary op,
                Var x, const Shape& to) {
  const Shape& out = g.shape();
  const Var::GradTarget dst = x.grad_target();
  if (!other) {
    kernels::reduce_to(g.data(), out, dst.data, to, dst.accumulate());
  } else if (to == out) {
    kernels::binary(op, g.data(), out, other, other_shape, dst.data, out, dst.accumulate());
  } else {
    Tensor tmp = G.alloc(out);
    kernels::binary(op, g.data(), out, other, other_shape, tmp.data(), out);
    kernels::reduce_to(tmp.data(), out, dst.data, to, dst.accumulate());
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
      case Binary::Add:    // dA += dC, dB += dC
      case Binary::Sub: {  // dA += dC, dB -= dC
        // a residual stream's gradient passes through: one input takes dC's memory as its own
        const bool taken = a.requires_grad() && sa == out && a.adopt_grad(dc);
        if (a.requires_grad() && !taken) accumulate(G, dc, nullptr, out, op, a, sa);
        if (b.requires_grad()) {
          if (op == Binary::Add) {
            if (taken || sb != out || !b.adopt_grad(dc)) accumulate(G, dc, nullptr, out, op, b, sb);
          } else {
            Tensor neg = G.alloc(out);
            kernels::affine(dc.data(), -1.f, 0.f, neg.data(), out.numel());
            accumulate(G, neg, nullptr, out, op, b, sb);
          }
        }
        break;
      }
      case Binary::Mul:  // dA += dC * B, dB += dC * A
        if (a.requires_grad()) accumulate(G, dc, B, sb, Binary::Mul, a, sa);
        if (b.requires_grad()) accumulate(G, dc, A, sa, Binary::Mul, b, sb);
        break;
      case Binary::Div:  // dA += dC / B, dB += -dC * C / B
        if (a.requires_grad()) accumulate(G, dc, B, sb, Binary::Div, a, sa);
        if (b.requires_grad()) {
          Tensor t = G.alloc(out);
          kernels::binary(Binary::Mul, dc.data(), out, c.data(), out, t.data(), out);
          kernels::scale(t.data(), -1.f, out.numel());
          accumulate(G, t, B, sb, Binary::Div, b, sb);
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
    const Var::GradTarget dx = x.grad_target();
    if (dx.accumulate())
      kernels::axpy(alpha, dy.data(), dx.data, dy.numel());
    else
      kernels::affine(dy.data(), alpha, 0.f, dx.data, dy.numel());
  });
}

}  // namespace heed
