// Fused GRU and LSTM cells: the recurrent GEMM (oneDNN; bf16 in mixed precision) plus one fused
// gate pass, forward and backward side by side. Equations in the header and in kernels/rnn_cells.h.
// Leaves out: the input projection (one linear() over the whole sequence, outside the loop).
#include "heed/autograd/ops/rnn_cell.h"

#include <optional>

#include "heed/autograd/ops/matmul.h"
#include "heed/autograd/ops/shape.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/rnn_cells.h"
#include "heed/util/error.h"

namespace heed {
namespace {
void check_cell(const char* name, int gates, Var gx, Var h, Var U) {
  const Shape &sx = gx.shape(), &sh = h.shape(), &su = U.shape();
  bool ok = sh.rank() == 2 && sx.rank() == 2 && su.rank() == 2 && sx[0] == sh[0] &&
            sx[1] == gates * sh[1] && su[0] == gates * sh[1] && su[1] == sh[1];
  check(ok, name, ": gx ", sx, ", h ", sh, ", U ", su, " (expected gx [B, ", gates,
        "H], h [B, H], U [", gates, "H, H])");
}

// The recurrent product of a step, y [B, G] = h U^T (+ bias) (+ y when `accumulate`), and its
// backward, dU += dy^T h and dh += dy U: in bf16 in a mixed-precision graph (U rounded once per
// graph), on U's copy for decoding in an inference graph prepared for it, else in fp32.
class Recurrent {
 public:
  Recurrent(Var h, Var U, const float* bias, bool accumulate, float* y) {
    const Graph& G = h.graph();
    const int64_t B = h.dim(0), Gn = U.dim(0);
    if (G.precision() == Precision::bf16 && B > 0) {
      bf16_.emplace(h, U);
      bf16_->forward(accumulate ? 1.f : 0.f, y, bias);
      return;
    }
    if (inference_product(h, U, bias, accumulate, y)) return;
    if (bias) kernels::preload_rows(bias, B, Gn, y, accumulate);  // then y = h U^T + y
    fp32_product(h, U, bias || accumulate ? 1.f : 0.f, y);
  }
  void backward(const float* dy, Var h, Var U) const {
    if (bf16_) {
      bf16_->backward(dy, h, U);
      return;
    }
    const int64_t B = h.dim(0), H = h.dim(1), Gn = U.dim(0);
    if (U.requires_grad() && U.param())  // dU [G, H] += dy^T h, with the other steps' (graph.h)
      h.graph().defer_weight_gradient(U.grad().data(), Gn, H, dy, h.value().data(), B);
    else if (U.requires_grad())
      kernels::gemm(true, false, Gn, H, B, 1.f, dy, Gn, h.value().data(), H, 1.f, U.grad().data(),
                    H);
    if (h.requires_grad())  // dh [B, H] += dy U
      kernels::gemm(false, false, B, H, Gn, 1.f, dy, Gn, U.value().data(), H, 1.f, h.grad().data(),
                    H);
  }

 private:
  std::optional<Bf16Product> bf16_;
};
}  // namespace

Var gru_cell(Var gx, Var h, Var U, Var b_h) {
  check_cell("gru_cell", 3, gx, h, U);
  const int64_t B = h.dim(0), H = h.dim(1), G3 = 3 * H;
  check(b_h.shape() == Shape{G3}, "gru_cell: b_h ", b_h.shape(), ", expected [", G3, "]");
  Graph& G = h.graph();
  // gh [B, 3H] = h U^T + b_h: the one GEMM of the step, bias preloaded
  Tensor gh = G.alloc(Shape{B, G3});
  const Recurrent product(h, U, b_h.value().data(), false, gh.data());
  Tensor gates = G.alloc(Shape{B, G3});  // [r | z | n], saved
  Tensor out = G.alloc(Shape{B, H});
  kernels::gru_forward(gx.value().data(), gh.data(), h.value().data(), out.data(), gates.data(), B,
                       H);
  return G.make(out, {gx, h, U, b_h}, [=, &G](const Tensor& dout) {
    Tensor dgh = G.alloc(Shape{B, G3});  // d(h U^T + b_h)
    kernels::gru_backward(dout.data(), h.value().data(), gates.data(), gh.data(), dgh.data(),
                          gx.requires_grad() ? gx.grad().data() : nullptr,
                          h.requires_grad() ? h.grad().data() : nullptr, B, H);
    product.backward(dgh.data(), h, U);  // dU += dgh^T h, dh += dgh U
    if (b_h.requires_grad()) {
      const Var::GradTarget db = b_h.grad_target();
      kernels::reduce_to(dgh.data(), Shape{B, G3}, db.data, Shape{G3}, db.accumulate());
    }
  });
}

LstmState lstm_cell(Var gx, Var h, Var c, Var U) {
  check_cell("lstm_cell", 4, gx, h, U);
  check(c.shape() == h.shape(), "lstm_cell: c ", c.shape(), " must match h ", h.shape());
  const int64_t B = h.dim(0), H = h.dim(1), G4 = 4 * H;
  Graph& G = h.graph();
  // pre [B, 4H] = gx + h U^T: the one GEMM of the step, gx preloaded; activated in place
  Tensor gates = G.alloc(Shape{B, G4});
  gates.copy_from(gx.value());
  const Recurrent product(h, U, nullptr, true, gates.data());
  Tensor out = G.alloc(Shape{2, B, H});  // [h' ; c']
  Tensor tanh_c = G.alloc(Shape{B, H});
  kernels::lstm_forward(gates.data(), c.value().data(), out.data(), out.data() + B * H,
                        tanh_c.data(), B, H);
  Var both = G.make(out, {gx, h, c, U}, [=, &G](const Tensor& dout) {
    Tensor dpre = G.alloc(Shape{B, G4});
    kernels::lstm_backward(dout.data(), dout.data() + B * H, gates.data(), c.value().data(),
                           tanh_c.data(), dpre.data(),
                           c.requires_grad() ? c.grad().data() : nullptr, B, H);
    if (gx.requires_grad()) kernels::axpy(1.f, dpre.data(), gx.grad().data(), B * G4);
    product.backward(dpre.data(), h, U);  // dU += dpre^T h, dh += dpre U
  });
  return {select(both, 0, 0), select(both, 0, 1)};
}

}  // namespace heed
