// Element-wise non-linearities: tanh, sigmoid, relu, gelu, exp, log, sqrt; WaveNet's gate.
// Leaves out: parametric activations.
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

Var tanh(Var x);     // dy/dx = 1 - y^2
Var sigmoid(Var x);  // dy/dx = y (1 - y)
Var relu(Var x);     // dy/dx = [x > 0]
Var gelu(Var x);     // tanh form, Hendrycks & Gimpel 2016
Var exp(Var x);      // dy/dx = y
Var log(Var x);      // dy/dx = 1 / x
Var sqrt(Var x);     // dy/dx = 1 / (2 y)
// WaveNet's gate on the last axis split in halves: ab [..., 2C] -> tanh(a) (.) sigmoid(b) [..., C]
// (kernels/elementwise.h), one op instead of slice, slice, tanh, sigmoid and mul.
Var gated_tanh(Var ab);

}  // namespace heed
