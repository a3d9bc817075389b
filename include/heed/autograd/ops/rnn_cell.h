// Fused recurrent cells: one GEMM for all gates of a step, then one fused pass (kernels/
// rnn_cells.h). The input projection W x + b of a whole sequence is computed outside, as one
// large GEMM before the time loop (linear() on [B*S, In]); a step only adds U h.
// Leaves out: the time loop and bidirectionality (nn/ layers build those from cells).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// GRU (Cho et al. 2014, eqs. 5-8, in the cuDNN form where r gates U_n h + b_hn):
//   [gh_r | gh_z | gh_n] = h U^T + b_h
//   r = sigmoid(gx_r + gh_r),  z = sigmoid(gx_z + gh_z),  n = tanh(gx_n + r * gh_n)
//   h' = (1 - z) * n + z * h
// gx [B, 3H] = W x + b_x,  h [B, H],  U [3H, H],  b_h [3H]  ->  h' [B, H]
Var gru_cell(Var gx, Var h, Var U, Var b_h);

struct LstmState {
  Var h;  // [B, H]
  Var c;  // [B, H]
};
// LSTM (Hochreiter & Schmidhuber 1997, with forget gate):
//   [i | f | g | o] = gx + h U^T,  c' = sigmoid(f) c + sigmoid(i) tanh(g),  h' = sigmoid(o)
//   tanh(c')
// gx [B, 4H] = W x + b,  h, c [B, H],  U [4H, H]
LstmState lstm_cell(Var gx, Var h, Var c, Var U);

}  // namespace heed
