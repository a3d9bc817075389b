// Element-wise activations: one op per function, all on kernels::unary_{forward,backward}.
// Leaves out: fused bias + activation (a later kernel when profiles ask for it).
#include "heed/autograd/ops/activation.h"

#include "heed/kernels/elementwise.h"
#include "heed/util/error.h"

namespace heed {
namespace {

Var unary(kernels::Unary op, Var x) {
  Graph& G = x.graph();
  Tensor y = G.alloc(x.shape());
  kernels::unary_forward(op, x.value().data(), y.data(), y.numel());
  return G.make(y, {x}, [=](const Tensor& dy) {
    const Var::GradTarget dx = x.grad_target();
    kernels::unary_backward(op, x.value().data(), y.data(), dy.data(), dx.data, dy.numel(),
                            dx.accumulate());
  });
}

}  // namespace

Var tanh(Var x) {
  return unary(kernels::Unary::Tanh, x);
}
Var sigmoid(Var x) {
  return unary(kernels::Unary::Sigmoid, x);
}
Var relu(Var x) {
  return unary(kernels::Unary::Relu, x);
}
Var gelu(Var x) {
  return unary(kernels::Unary::Gelu, x);
}
Var exp(Var x) {
  return unary(kernels::Unary::Exp, x);
}
Var log(Var x) {
  return unary(kernels::Unary::Log, x);
}
Var sqrt(Var x) {
  return unary(kernels::Unary::Sqrt, x);
}

Var gated(Var ab, kernels::Gate gate) {
  Graph& G = ab.graph();
  const Shape& s = ab.shape();
  const int64_t two_c = s[s.rank() - 1];
  check(two_c % 2 == 0, "gated activation: the last axis (", two_c, ") must be even: [a ; b]");
  const int64_t C = two_c / 2, rows = ab.value().numel() / two_c;
  Shape out = s;
  out[out.rank() - 1] = C;
  Tensor y = G.alloc(out);  // [..., C]
  kernels::gate_forward(gate, ab.value().data(), y.data(), rows, C);
  return G.make(y, {ab}, [=](const Tensor& dy) {
    const Var::GradTarget dab = ab.grad_target();
    kernels::gate_backward(gate, ab.value().data(), dy.data(), dab.data, rows, C, dab.accumulate());
  });
}

}  // namespace heed
