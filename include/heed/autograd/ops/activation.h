// Element-wise non-linearities: tanh, sigmoid, relu, gelu, exp, log, sqrt; the gates of
// gated convolutions (WaveNet's, the GLU).
// Leaves out: parametric activations.
#pragma once

#include "heed/autograd/graph.h"
#include "heed/kernels/elementwise.h"

namespace heed {

Var tanh(Var x);     // dy/dx = 1 - y^2
Var sigmoid(Var x);  // dy/dx = y (1 - y)
Var relu(Var x);     // dy/dx = [x > 0]
Var gelu(Var x);     // tanh form, Hendrycks & Gimpel 2016
Var exp(Var x);      // dy/dx = y
Var log(Var x);      // dy/dx = 1 / x
Var sqrt(Var x);     // dy/dx = 1 / (2 y)
// A gate on the last axis split in halves, ab [..., 2C] -> [..., C] (kernels/elementwise.h), one
// op instead of slice, slice, tanh, sigmoid and mul:
//   gated_tanh  tanh(a) (.) sigmoid(b)   (WaveNet)
//   glu         a (.) sigmoid(b)         (the gated linear unit of ConvS2S)
Var gated(Var ab, kernels::Gate gate);
inline Var gated_tanh(Var ab) {
  return gated(ab, kernels::Gate::Tanh);
}
inline Var glu(Var ab) {
  return gated(ab, kernels::Gate::Glu);
}

}  // namespace heed
