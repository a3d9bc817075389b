// Broadcasting arithmetic (+ - * /) and scalar affine maps.
// Leaves out: comparisons and integer math (tensors are float32).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// NumPy broadcasting: shapes are aligned from the last axis; size-1 axes stretch.
Var add(Var a, Var b);
Var sub(Var a, Var b);
Var mul(Var a, Var b);
Var div(Var a, Var b);
// y = alpha * x + beta
Var affine(Var x, float alpha, float beta);

inline Var operator+(Var a, Var b) {
  return add(a, b);
}
inline Var operator-(Var a, Var b) {
  return sub(a, b);
}
inline Var operator*(Var a, Var b) {
  return mul(a, b);
}
inline Var operator/(Var a, Var b) {
  return div(a, b);
}
inline Var operator+(Var a, float s) {
  return affine(a, 1.f, s);
}
inline Var operator+(float s, Var a) {
  return affine(a, 1.f, s);
}
inline Var operator-(Var a, float s) {
  return affine(a, 1.f, -s);
}
inline Var operator-(float s, Var a) {
  return affine(a, -1.f, s);
}
inline Var operator*(Var a, float s) {
  return affine(a, s, 0.f);
}
inline Var operator*(float s, Var a) {
  return affine(a, s, 0.f);
}
inline Var operator/(Var a, float s) {
  return affine(a, 1.f / s, 0.f);
}
inline Var operator-(Var a) {
  return affine(a, -1.f, 0.f);
}

}  // namespace heed
