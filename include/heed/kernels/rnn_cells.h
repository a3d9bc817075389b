// Fused gate arithmetic of the GRU and LSTM cells: every element-wise op of one time step in a
// single pass over [B, H], forward and backward. The recurrent GEMM is done by the caller
// (autograd/ops/rnn_cell.cc), so that a step costs one GEMM plus one pass.
// Gate layouts follow cuDNN/PyTorch: GRU [r | z | n], LSTM [i | f | g | o], each H wide.
// Leaves out: peepholes, layer-norm inside the cell, projection of the LSTM output.
#pragma once

#include <cstdint>

namespace heed::kernels {

// GRU (Cho et al. 2014), with gx = W x + b_x and gh = U h + b_h precomputed [B, 3H]:
//   r = sigmoid(gx_r + gh_r)
//   z = sigmoid(gx_z + gh_z)
//   n = tanh(gx_n + r * gh_n)
//   h' = (1 - z) * n + z * h
// Saves gates = [r | z | n] [B, 3H].
void gru_forward(const float* gx, const float* gh, const float* h, float* h_out, float* gates,
                 int64_t B, int64_t H);
// From dh' [B, H]: writes dgh [B, 3H] (the gradient of U h + b_h) and accumulates dgx [B, 3H]
// and dh [B, H] (the direct z * dh' term; the caller adds dgh U). dgx/dh may be null.
//   dn~ = dh' (1 - z)(1 - n^2)          dz~ = dh' (h - n) z (1 - z)
//   dr~ = dn~ gh_n r (1 - r)            dgh = [dr~ | dz~ | dn~ r],  dgx = [dr~ | dz~ | dn~]
void gru_backward(const float* dh_out, const float* h, const float* gates, const float* gh,
                  float* dgh, float* dgx, float* dh, int64_t B, int64_t H);

// LSTM (Hochreiter & Schmidhuber 1997; forget gate of Gers et al. 2000), with
// pre = W x + U h + b [B, 4H] precomputed:
//   i = sigmoid(pre_i)  f = sigmoid(pre_f)  g = tanh(pre_g)  o = sigmoid(pre_o)
//   c' = f * c + i * g,   h' = o * tanh(c')
// Activates `pre` in place into the gates [i | f | g | o], writes h' and c', saves tanh(c').
void lstm_forward(float* pre, const float* c, float* h_out, float* c_out, float* tanh_c, int64_t B,
                  int64_t H);
// From dh', dc' [B, H] (either may be null): writes dpre [B, 4H], accumulates dc [B, H].
//   dc~ = dc' + dh' o (1 - tanh(c')^2)
//   dpre = [dc~ g i(1-i) | dc~ c f(1-f) | dc~ i (1-g^2) | dh' tanh(c') o(1-o)],  dc += dc~ f
void lstm_backward(const float* dh_out, const float* dc_out, const float* gates, const float* c,
                   const float* tanh_c, float* dpre, float* dc, int64_t B, int64_t H);

}  // namespace heed::kernels
