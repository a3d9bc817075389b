// The CTC loss op (see the header): checks at the edge, the kernel's forward now and its
// backward (the beta recursion and the fused gradient) when the graph runs backward.
#include "heed/autograd/ops/ctc.h"

#include <algorithm>
#include <cmath>

#include "heed/kernels/ctc.h"
#include "heed/util/error.h"

namespace heed {

Var ctc_loss(Var logits, std::span<const int32_t> input_lengths, std::span<const int32_t> targets,
             std::span<const int32_t> target_lengths, CtcOptions o) {
  const Shape& s = logits.shape();
  check(s.rank() == 3, "ctc_loss: logits must be [B, T, C], got ", s);
  const int64_t B = s[0], T = s[1], C = s[2];
  check(static_cast<int64_t>(input_lengths.size()) == B &&
            static_cast<int64_t>(target_lengths.size()) == B,
        "ctc_loss: ", input_lengths.size(), " input and ", target_lengths.size(),
        " target lengths for a batch of ", B);
  check(B == 0 || targets.size() % static_cast<size_t>(B) == 0, "ctc_loss: ", targets.size(),
        " target entries are not B = ", B, " rows");
  const int64_t L = B == 0 ? 0 : static_cast<int64_t>(targets.size()) / B;
  check(o.blank >= 0 && o.blank < C, "ctc_loss: blank ", o.blank, " outside the ", C, " classes");
  for (int64_t b = 0; b < B; ++b) {
    check(input_lengths[b] >= 0 && input_lengths[b] <= T, "ctc_loss: sequence ", b,
          " has input length ", input_lengths[b], " (frames: ", T, ")");
    check(target_lengths[b] >= 0 && target_lengths[b] <= L, "ctc_loss: sequence ", b,
          " has target length ", target_lengths[b], " (width: ", L, ")");
    for (int64_t i = 0; i < target_lengths[b]; ++i) {
      const int32_t y = targets[b * L + i];
      check(y >= 0 && y < C && y != o.blank, "ctc_loss: sequence ", b, " label ", i, " is ", y,
            " (labels are 0..", C - 1, " but the blank ", o.blank, ")");
    }
  }
  Graph& G = logits.graph();
  const std::span<int32_t> in = G.copy(input_lengths), tgt = G.copy(targets),
                           tlen = G.copy(target_lengths);
  const kernels::CtcBatch p{.B = B,
                            .T = T,
                            .C = C,
                            .L = L,
                            .input_lengths = in.data(),
                            .targets = tgt.data(),
                            .target_lengths = tlen.data(),
                            .blank = o.blank};
  const int64_t W = kernels::ctc_states(p);
  Tensor log_probs = G.alloc(s);           // [B, T, C]
  Tensor alpha = G.alloc(Shape{B, T, W});  // [B, T, 2L + 1]
  Tensor beta = G.alloc(Shape{B, T, W});   // [B, T, 2L + 1], written by the backward
  Tensor nll = G.alloc(Shape{B});          // [B]
  int32_t* space = G.arena().array<int32_t>(static_cast<size_t>(B));  // alpha's, per sequence
  Tensor scale = G.alloc(Shape{B});  // [B]: d loss / d nll_b, set by the backward
  kernels::ctc_forward(p, logits.value().data(), log_probs.data(), alpha.data(), space, nll.data());
  if (o.infeasible) o.infeasible->clear();
  for (int64_t b = 0; b < B; ++b)
    if (std::isinf(nll.data()[b]) && o.infeasible) o.infeasible->push_back(b);
  // the reported losses: +inf kept, or 0 with zero_infinity
  auto loss_of = [&](int64_t b) {
    const float v = nll.data()[b];
    return o.zero_infinity && std::isinf(v) ? 0.f : v;
  };
  // d output / d nll_b, before the upstream gradient: 1, or 1 / (B L_b) for the mean
  auto weight = [=](int64_t b) {
    return o.reduction == Reduction::Mean
               ? 1.f / (static_cast<float>(B) * static_cast<float>(std::max(tlen[b], 1)))
               : 1.f;
  };
  Tensor out = G.alloc(o.reduction == Reduction::None ? Shape{B} : Shape{});
  if (o.reduction == Reduction::None) {
    for (int64_t b = 0; b < B; ++b) out.data()[b] = loss_of(b);
  } else {
    double total = 0;
    for (int64_t b = 0; b < B; ++b) total += double{loss_of(b)} * weight(b);
    out.data()[0] = static_cast<float>(total);
  }
  const Reduction reduction = o.reduction;
  return G.make(out, {logits}, [=](const Tensor& dout) mutable {
    for (int64_t b = 0; b < B; ++b)
      scale.data()[b] = weight(b) * dout.data()[reduction == Reduction::None ? b : 0];
    kernels::ctc_backward(p, log_probs.data(), alpha.data(), space, nll.data(), scale.data(),
                          beta.data(), logits.grad().data());
  });
}

}  // namespace heed
