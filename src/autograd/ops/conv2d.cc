// The two-dimensional convolution op (see the header): shape checks, the patches kept for the
// backward.
#include "heed/autograd/ops/conv2d.h"

#include "heed/kernels/conv2d.h"
#include "heed/util/error.h"

namespace heed {

Var conv2d(Var x, Var w, Var bias, const Conv2dOptions& o) {
  check(x.shape().rank() == 4 && w.shape().rank() == 2,
        "conv2d: x [B, H, W, C_in] and w [C_out, k k C_in], got ", x.shape(), " and ", w.shape());
  check(o.kernel >= 1 && o.stride >= 1, "conv2d: kernel ", o.kernel, " and stride ", o.stride,
        " must be >= 1");
  const kernels::Conv2dShape s{.B = x.dim(0),
                               .H = x.dim(1),
                               .W = x.dim(2),
                               .C_in = x.dim(3),
                               .C_out = w.dim(0),
                               .k = o.kernel,
                               .stride = o.stride};
  check(s.H >= s.k && s.W >= s.k, "conv2d: an input of ", s.H, " x ", s.W,
        " is smaller than the kernel ", s.k);
  check(w.dim(1) == s.patch(), "conv2d: w ", w.shape(), " for ", s.k, "x", s.k, " taps of ", s.C_in,
        " channels (expected [C_out, ", s.patch(), "])");
  check(!bias.valid() || (bias.shape().rank() == 1 && bias.dim(0) == s.C_out), "conv2d: bias ",
        bias.valid() ? bias.shape() : Shape{}, " for ", s.C_out, " output channels");
  Graph& G = x.graph();
  Tensor cols = G.alloc(Shape{s.rows(), s.patch()});  // read again by the backward
  Tensor y = G.alloc(Shape{s.B, s.H_out(), s.W_out(), s.C_out});
  kernels::conv2d_forward(s, x.value().data(), w.value().data(),
                          bias.valid() ? bias.value().data() : nullptr, y.data(), cols.data());
  float* dcols =
      G.training() && x.requires_grad() ? G.alloc(Shape{s.rows(), s.patch()}).data() : nullptr;
  auto backward = [=](const Tensor& dy) {
    kernels::conv2d_backward(
        s, cols.data(), w.value().data(), dy.data(), x.requires_grad() ? x.grad().data() : nullptr,
        w.requires_grad() ? w.grad().data() : nullptr,
        bias.valid() && bias.requires_grad() ? bias.grad().data() : nullptr, dcols);
  };
  if (bias.valid()) return G.make(y, {x, w, bias}, backward);
  return G.make(y, {x, w}, backward);
}

}  // namespace heed
