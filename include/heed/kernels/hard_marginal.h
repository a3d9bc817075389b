// Exact marginalisation over a hard attention's choice (Wu, Shapiro & Cotterell 2018, "Hard
// Non-Monotonic Attention for Character-Level Transduction", eq. 3): output step i attends to
// one source position j, drawn from alpha_i, and its output distribution given j is a softmax
// over logits that split into a part of the decoder state and a part of h_j,
//   logits_ijv = base_iv + keys_jv           (base = W_s s_i + W_y y_{i-1} + b, keys = W_c h_j)
//   log p(y_i = v) = log sum_j alpha_ij softmax_v(logits_ij)
//                  = logsumexp_j (log alpha_ij + logits_ijv - logsumexp_u logits_iju)
// for every v at once (label smoothing needs them all): S softmaxes over V per row, never
// stored — the backward recomputes them. With r_jv = alpha_ij p(v | j) / p(v), the posterior
// of j given v, and g = dL/d log p(y_i):
//   dL/dlog alpha_ij = sum_v g_v r_jv
//   dL/dlogits_ijv   = g_v r_jv - softmax_v(logits_ij) sum_u g_u r_ju
// (dL/dbase_iv = sum_j dL/dlogits_ijv, dL/dkeys_jv the same entry). log alpha = -inf (padding)
// contributes nothing. Rows are independent and run in parallel, in double within a row.
// Leaves out: the attention and the decoder (nn/attention/hard.cc, models/rnn_seq2seq).
#pragma once

#include <cstdint>

namespace heed::kernels {

// base [B, V], keys [B, S, V], log_alpha [B, S] -> out [B, V] log p(v).
void hard_marginal_forward(int64_t B, int64_t S, int64_t V, const float* base, const float* keys,
                           const float* log_alpha, float* out);
// dbase [B, V], dkeys [B, S, V], dlog_alpha [B, S] += the gradients of out's loss, given
// dout [B, V] and out.
void hard_marginal_backward(int64_t B, int64_t S, int64_t V, const float* base, const float* keys,
                            const float* log_alpha, const float* out, const float* dout,
                            float* dbase, float* dkeys, float* dlog_alpha);

}  // namespace heed::kernels
