// Softmax cross-entropy with ignore-index and label smoothing (fused with its softmax).
// Leaves out: per-token weights.
#include "heed/autograd/ops/loss.h"

#include "heed/kernels/softmax.h"
#include "heed/util/error.h"

namespace heed {

Var cross_entropy(Var logits, std::span<const int32_t> targets, CrossEntropyOptions o) {
  const Shape& s = logits.shape();
  const int64_t V = s.last(), N = s.rows();
  check(static_cast<int64_t>(targets.size()) == N, "cross_entropy: ", targets.size(),
        " targets for logits ", s, " (one per row)");
  check(o.label_smoothing >= 0.f && o.label_smoothing < 1.f,
        "cross_entropy: label smoothing must be in [0, 1)");
  check(o.reduction != Reduction::None, "cross_entropy: reduction none is not supported");
  Graph& G = logits.graph();
  Tensor probs = G.alloc(s);  // [N, V] softmax, saved for backward
  std::span<int32_t> t = G.copy<int32_t>(targets);
  int64_t count = 0;
  double total =
      kernels::cross_entropy_forward(logits.value().data(), N, V, t.data(), o.ignore_index,
                                     o.label_smoothing, probs.data(), &count);
  float scale =
      o.reduction == Reduction::Mean ? 1.f / static_cast<float>(std::max<int64_t>(count, 1)) : 1.f;
  Tensor loss = G.alloc(Shape{});
  loss.data()[0] = static_cast<float>(total * scale);
  return G.make(loss, {logits}, [=](const Tensor& dl) {  // dlogits += dl * scale * (p - q)
    kernels::cross_entropy_backward(probs.data(), N, V, t.data(), o.ignore_index, o.label_smoothing,
                                    dl.data()[0] * scale, logits.grad().data());
  });
}

}  // namespace heed
