// The convolution op (see the header): shape checks, the plan, the packed input kept for the
// backward.
#include "heed/autograd/ops/conv1d.h"

#include "heed/kernels/conv1d.h"
#include "heed/util/error.h"

namespace heed {

Var conv1d(Var x, Var w, Var bias, const Conv1dOptions& o) {
  check(x.shape().rank() == 3 && w.shape().rank() == 2,
        "conv1d: x [B, T, C_in] and w [C_out, k C_in], got ", x.shape(), " and ", w.shape());
  check(o.kernel >= 1 && o.dilation >= 1, "conv1d: kernel ", o.kernel, " and dilation ", o.dilation,
        " must be >= 1");
  check(o.causal || o.kernel % 2 == 1, "conv1d: a centred convolution needs an odd kernel, got ",
        o.kernel);
  const int64_t B = x.dim(0), T = x.dim(1), C_in = x.dim(2), C_out = w.dim(0);
  check(w.dim(1) == o.kernel * C_in, "conv1d: w ", w.shape(), " for ", o.kernel, " taps of ", C_in,
        " channels (expected [C_out, ", o.kernel * C_in, "])");
  check(!bias.valid() || (bias.shape().rank() == 1 && bias.dim(0) == C_out), "conv1d: bias ",
        bias.valid() ? bias.shape() : Shape{}, " for ", C_out, " output channels");
  check(o.lengths.empty() || static_cast<int64_t>(o.lengths.size()) == B,
        "conv1d: ", o.lengths.size(), " lengths for a batch of ", B);
  Graph& G = x.graph();
  kernels::Conv1dShape s{
      .B = B,
      .T = T,
      .C_in = C_in,
      .C_out = C_out,
      .k = o.kernel,
      .dilation = o.dilation,
      .causal = o.causal,
      .lengths = o.lengths.empty() ? std::span<const int32_t>{} : G.copy(o.lengths)};
  for (int32_t len : s.lengths)
    check(len >= 0 && len <= T, "conv1d: a length of ", len, " in a batch of ", T, " positions");
  const kernels::Conv1dPlan plan =
      kernels::conv1d_plan(s, o.plan, /*bf16=*/G.precision() == Precision::bf16);
  auto floats = [&](int64_t n) { return n > 0 ? G.alloc(Shape{n}).data() : nullptr; };
  float* kept = floats(kernels::conv1d_kept_floats(s, plan));  // read again by the backward
  Tensor y = G.alloc(Shape{B, T, C_out});
  kernels::conv1d_forward(s, plan, x.value().data(), w.value().data(),
                          bias.valid() ? bias.value().data() : nullptr, y.data(), kept,
                          floats(kernels::conv1d_forward_floats(s, plan)));
  float* scratch = G.training() ? floats(kernels::conv1d_backward_floats(s, plan)) : nullptr;
  auto backward = [=](const Tensor& dy) {
    kernels::conv1d_backward(s, plan, x.value().data(), w.value().data(), dy.data(),
                             x.requires_grad() ? x.grad().data() : nullptr,
                             w.requires_grad() ? w.grad().data() : nullptr,
                             bias.valid() && bias.requires_grad() ? bias.grad().data() : nullptr,
                             kept, scratch);
  };
  if (bias.valid()) return G.make(y, {x, w, bias}, backward);
  return G.make(y, {x, w}, backward);
}

int64_t receptive_field(std::span<const Conv1dOptions> layers) {
  int64_t rf = 1;
  for (const Conv1dOptions& l : layers) rf += (l.kernel - 1) * l.dilation;
  return rf;
}

}  // namespace heed
