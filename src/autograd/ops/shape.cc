// reshape, transpose/permute, concat, slice, select.
// Views (reshape, slices of the first axis) share the input's storage; their backward adds the
// incoming gradient into the matching block of the input's gradient.
// Leaves out: strided views; a permuted tensor is always a contiguous copy.
#include "heed/autograd/ops/shape.h"

#include <algorithm>
#include <array>
#include <vector>

#include "heed/kernels/elementwise.h"
#include "heed/kernels/layout.h"
#include "heed/util/error.h"

namespace heed {

Var reshape(Var x, const Shape& shape) {
  check(shape.numel() == x.value().numel(), "reshape: cannot view ", x.shape(), " as ", shape);
  return x.graph().make(x.value().reshape(shape), {x}, [=](const Tensor& dy) {
    if (!x.adopt_grad(dy)) kernels::axpy(1.f, dy.data(), x.grad().data(), dy.numel());
  });
}

Var permute(Var x, std::span<const int> perm) {
  const Shape& s = x.shape();
  check(static_cast<int>(perm.size()) == s.rank(), "permute: ", perm.size(),
        " axes given for shape ", s);
  std::array<int, 4> p{}, inv{};
  std::array<bool, 4> seen{};
  Shape out = s;
  for (int i = 0; i < s.rank(); ++i) {
    int a = perm[i] < 0 ? perm[i] + s.rank() : perm[i];
    check(a >= 0 && a < s.rank() && !seen[a], "permute: invalid permutation of ", s);
    seen[a] = true;
    p[i] = a;
    inv[a] = i;
    out[i] = s[a];
  }
  Graph& G = x.graph();
  Tensor y = G.alloc(out);
  kernels::permute(x.value().data(), s, p, y.data(), false);
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx += permute(dy, inverse)
    const Var::GradTarget dx = x.grad_target();
    kernels::permute(dy.data(), dy.shape(), inv, dx.data, dx.accumulate());
  });
}

Var permute(Var x, std::initializer_list<int> perm) {
  return permute(x, std::span<const int>(perm.begin(), perm.size()));
}

Var transpose(Var x, int axis0, int axis1) {
  const Shape& s = x.shape();
  std::array<int, 4> perm{0, 1, 2, 3};
  std::swap(perm[s.normalize(axis0)], perm[s.normalize(axis1)]);
  return permute(x, std::span<const int>(perm.data(), s.rank()));
}

Var concat(std::span<const Var> xs, int axis) {
  check(!xs.empty(), "concat: no inputs");
  const Shape& s0 = xs[0].shape();
  int a = s0.normalize(axis);
  int64_t total = 0;
  for (const Var& v : xs) {
    const Shape& s = v.shape();
    bool ok = s.rank() == s0.rank();
    for (int i = 0; ok && i < s.rank(); ++i) ok = i == a || s[i] == s0[i];
    check(ok, "concat on axis ", axis, ": shape ", s, " does not match ", s0);
    total += s[a];
  }
  Shape out = s0.with(a, total);
  int64_t outer = out.outer(a), inner = out.inner(a);
  Graph& G = xs[0].graph();
  Tensor y = G.alloc(out);
  int64_t off = 0;
  for (const Var& v : xs) {
    int64_t n = v.shape()[a];
    kernels::copy_slab(v.value().data(), n, 0, y.data(), total, off, outer, n, inner, false);
    off += n;
  }
  std::span<Var> ins = G.copy<Var>(xs);
  return G.make(y, xs, [=](const Tensor& dy) {
    int64_t o = 0;
    for (const Var& v : ins) {
      int64_t n = v.shape()[a];
      if (v.requires_grad()) {  // the slab is the whole of v's gradient
        const Var::GradTarget dv = v.grad_target();
        kernels::copy_slab(dy.data(), total, o, dv.data, n, 0, outer, n, inner, dv.accumulate());
      }
      o += n;
    }
  });
}

Var concat(std::initializer_list<Var> xs, int axis) {
  return concat(std::span<const Var>(xs.begin(), xs.size()), axis);
}

Var slice(Var x, int axis, int64_t start, int64_t length) {
  const Shape& s = x.shape();
  int a = s.normalize(axis);
  check(start >= 0 && length >= 0 && start + length <= s[a], "slice [", start, ", ", start + length,
        ") is out of range for axis ", axis, " of ", s);
  int64_t outer = s.outer(a), inner = s.inner(a), n = s[a];
  Graph& G = x.graph();
  Tensor y;
  if (outer == 1) {  // a contiguous block: a view
    y = x.value()
            .reshape(Shape{s.numel()})
            .rows(start * inner, length * inner)
            .reshape(s.with(a, length));
  } else {
    y = G.alloc(s.with(a, length));
    kernels::copy_slab(x.value().data(), n, start, y.data(), length, 0, outer, length, inner,
                       false);
  }
  return G.make(y, {x}, [=](const Tensor& dy) {
    kernels::copy_slab(dy.data(), length, 0, x.grad().data(), n, start, outer, length, inner, true);
  });
}

Var select(Var x, int axis, int64_t index) {
  return reshape(slice(x, axis, index, 1), x.shape().without(axis));
}

}  // namespace heed
