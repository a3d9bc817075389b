// The additive attention energy as one op over kernels/additive.h:
//   e_bj = v^T tanh(K_bj + q_b)
// (Bahdanau et al. 2015, eq. 6; Raffel et al. 2017's monotonic energy before its scale and
// bias), equal to reshape(linear(tanh(K + q), v)) without its [B, S, A] intermediates.
// The location-aware energy (Chorowski et al. 2015, eq. 9) likewise:
//   e_bj = w^T tanh(K_bj + q_b + U f_bj)
// equal to additive_energy(K + linear(f, U), q, w) without its three [B, S, A] tensors.
// Leaves out: masks, the softmax or sigmoid (nn/attention/).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// keys [B, S, A], query [B, A], v [1, A] (or [A]) -> [B, S]
Var additive_energy(Var keys, Var query, Var v);
// keys [B, S, A], f [B, S, L], U [A, L], query [B, A], v [1, A] (or [A]) -> [B, S]
Var location_energy(Var keys, Var f, Var U, Var query, Var v);

}  // namespace heed
