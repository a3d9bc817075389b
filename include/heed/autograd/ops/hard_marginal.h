// Exact marginalisation over a hard attention's choice as an op, over kernels/hard_marginal.h
// (the equations are there): log p(y_i = v) = logsumexp_j (log alpha_ij + log_softmax_v(base_i
// + keys_j)) for every v, with its backward (Wu, Shapiro & Cotterell 2018).
// Leaves out: the attention and the decoder (nn/attention/hard.cc, models/rnn_seq2seq).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// base [B, V], keys [B, S, V], log_alpha [B, S] (-inf on padding) -> log p [B, V], each row a
// normalised log-distribution (so cross_entropy over it as logits is its negative log-likelihood)
Var hard_marginal(Var base, Var keys, Var log_alpha);

}  // namespace heed
